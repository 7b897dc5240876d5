-- A day's partition created while rows of that day sit in the default partition (rows that
-- arrived before it existed: an import of a past session, a late span) moves them in. Before,
-- ATTACH PARTITION let readers in during the move: a query planned before it with the old list
-- of partitions waited on the default partition's lock, then ran after the commit and found
-- the rows gone from the default and never looked in the new partition; a conversation read
-- right then showed its compactions but no calls (import-beside-server on PostgreSQL). When
-- there are rows to move, the parent is now locked ACCESS EXCLUSIVE before they move: readers
-- and writers wait for the (short) move and are planned afresh after it. The caller's
-- lock_timeout bounds the wait for the lock (src/store/partitions.ts); a partition with no
-- rows to move is attached as before, without blocking anyone.
CREATE OR REPLACE FUNCTION rotscope_ensure_partition(parent text, day date) RETURNS boolean
  LANGUAGE plpgsql
  AS $$
DECLARE
  part text := parent || '_p' || to_char(day, 'YYYYMMDD');
  key text := CASE parent
    WHEN 'spans' THEN 'start_ns'
    WHEN 'llm_calls' THEN 'start_ns'
    WHEN 'tool_results' THEN 'at_ns'
    WHEN 'log_records' THEN 'time_ns'
  END;
  lo bigint := rotscope_day_ns(day);
  hi bigint := rotscope_day_ns(day + 1);
  stray boolean;
BEGIN
  IF key IS NULL THEN
    RAISE EXCEPTION 'not a partitioned raw table: %', parent;
  END IF;
  IF to_regclass(part) IS NOT NULL THEN
    RETURN false;
  END IF;
  PERFORM pg_advisory_xact_lock(7428002);
  IF to_regclass(part) IS NOT NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= %s AND %I < %s)',
    parent || '_default', key, lo, key, hi) INTO stray;
  IF stray THEN
    EXECUTE format('LOCK TABLE %I IN ACCESS EXCLUSIVE MODE', parent);
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS)', part, parent);
  IF stray THEN
    EXECUTE format(
      'WITH moved AS (DELETE FROM %I WHERE %I >= %s AND %I < %s RETURNING *) INSERT INTO %I SELECT * FROM moved',
      parent || '_default', key, lo, key, hi, part);
  END IF;
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)',
    parent, part, lo, hi);
  RETURN true;
END
$$;
