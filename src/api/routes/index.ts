/**
 * Every JSON API route plugin, registered by buildApp with the ApiDeps. Each is declared
 * through withInputRules (src/api/validation.ts): zod schemas, the API's input rules.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ApiDeps } from '../types.ts';
import { alertsRoutes } from './alerts.ts';
import { channelsRoutes } from './channels.ts';
import { conversationsRoutes } from './conversations.ts';
import { deliveriesRoutes } from './deliveries.ts';
import { findingsRoutes } from './findings.ts';
import { importRoutes } from './import.ts';
import { mutesRoutes } from './mutes.ts';
import { stripRoutes } from './strip.ts';
import { tokensRoutes } from './tokens.ts';
import { trendsRoutes } from './trends.ts';

export const apiRoutes: Array<FastifyPluginAsync<ApiDeps>> = [
  conversationsRoutes,
  findingsRoutes,
  stripRoutes,
  alertsRoutes,
  channelsRoutes,
  deliveriesRoutes,
  tokensRoutes,
  importRoutes,
  mutesRoutes,
  trendsRoutes,
];
