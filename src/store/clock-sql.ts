/** The rules' "now" (src/model/clock.ts) in SQL: the database's `now()`, moved ahead by the clock. */
import { sql, type RawBuilder } from 'kysely';
import { DATABASE_CLOCK, type Clock } from '../model/clock.ts';

export function nowOf(clock: Clock = DATABASE_CLOCK): RawBuilder<Date> {
  return sql<Date>`(now() + ${clock.aheadMs}::double precision * interval '1 millisecond')`;
}
