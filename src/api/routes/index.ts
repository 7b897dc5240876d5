/**
 * Every JSON API route plugin, registered by buildApp with the ApiDeps, each under the API's
 * input rules (src/api/validation.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';
import { alertsRoutes } from './alerts.ts';
import { channelsRoutes } from './channels.ts';
import { conversationsRoutes } from './conversations.ts';
import { deliveriesRoutes } from './deliveries.ts';
import { findingsRoutes } from './findings.ts';
import { tokensRoutes } from './tokens.ts';

export const apiRoutes: Array<FastifyPluginAsync<ApiDeps>> = [
  conversationsRoutes,
  findingsRoutes,
  alertsRoutes,
  channelsRoutes,
  deliveriesRoutes,
  tokensRoutes,
].map(withInputRules);
