/** A conversation as `GET /api/conversations` lists it (the server's schema: ../api-types.ts). */
import type { Answer, Item } from '../api-types.ts';

export type ConversationList = Answer<'/api/conversations'>;

export type ConversationSummary = Item<ConversationList>;

/** The main thread or a sub-agent of a conversation. */
export type StreamSummary = ConversationSummary['streamList'][number];

export type RunSummary = ConversationSummary['runs'][number];
