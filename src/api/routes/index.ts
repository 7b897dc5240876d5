/** Every JSON API route plugin, registered by buildApp with the ApiDeps. */
import type { FastifyPluginAsync } from 'fastify';
import type { ApiDeps } from '../types.ts';
import { conversationsRoutes } from './conversations.ts';

export const apiRoutes: Array<FastifyPluginAsync<ApiDeps>> = [conversationsRoutes];
