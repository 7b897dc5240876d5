/** The trends answers as the console reads them (the server's schema: ../api-types.ts). */
import type { Answer, Item } from '../api-types.ts';

export type Trends = Answer<'/api/trends'>;
export type TrendItem = Item<Trends>;
export type BeforeAfter = Answer<'/api/trends/before-after'>;
export type Side = BeforeAfter['before'];
