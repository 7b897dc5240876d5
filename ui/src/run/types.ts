/** The run view's API shapes (src/api/routes/strip.ts; the server's schema: ../api-types.ts). */
import type { Answer } from '../api-types.ts';

/** A conversation's or a run's strip: the two routes answer the same shape. */
export type Strip = Answer<'/api/conversations/{id}/strip'> | Answer<'/api/runs/{id}/strip'>;

/** A finding on the strip; `index` and `calls` index the strip's columns. */
export type StripFinding = Strip['findings'][number];

/** `GET /api/findings/:id/what-was-lost`. */
export type WhatWasLost = Answer<'/api/findings/{id}/what-was-lost'>;

/** The call before or after a drop. */
export type CallEnd = WhatWasLost['before'];
