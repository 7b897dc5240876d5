-- Raw tables partitioned by time (issue 10): spans, llm_calls, tool_results and log_records
-- become native range-partitioned tables, one partition per UTC day of the row's own time
-- (start_ns, start_ns, at_ns, time_ns, Unix nanoseconds), so retention drops whole partitions
-- instead of deleting rows (src/store/partitions.ts, src/store/retention.ts). A DEFAULT
-- partition takes rows of days that have no partition (far past or future clocks);
-- rotscope_ensure_partition moves them out when their day's partition is created.
--
-- Keys: a unique key on a partitioned table must hold the partition column, so each natural
-- key gains the row's time (a re-sent span repeats its start time, so re-sent batches still
-- dedupe). The hot tables keep only the indexes a reader uses: spans loses spans_received_idx
-- (retention no longer scans by arrival), and the raw tables no longer reference workspaces
-- (every writer is authenticated into an existing workspace; the check cost a lookup per row).
-- Column names and types are unchanged (each table is recreated LIKE the old one).

-- The first nanosecond of a UTC day.
CREATE FUNCTION rotscope_day_ns(day date) RETURNS bigint
  LANGUAGE sql IMMUTABLE
  AS $$ SELECT (extract(epoch FROM day::timestamp)::bigint) * 1000000000 $$;

-- Today, as a UTC date (partition days are UTC whatever the session's time zone).
CREATE FUNCTION rotscope_today() RETURNS date
  LANGUAGE sql STABLE
  AS $$ SELECT (now() AT TIME ZONE 'UTC')::date $$;

-- Creates the partition of `parent` for `day` if it is missing, moving that day's rows out of
-- the default partition first. Returns whether it created one. Serialized across processes.
CREATE FUNCTION rotscope_ensure_partition(parent text, day date) RETURNS boolean
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
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS)', part, parent);
  EXECUTE format(
    'WITH moved AS (DELETE FROM %I WHERE %I >= %s AND %I < %s RETURNING *) INSERT INTO %I SELECT * FROM moved',
    parent || '_default', key, lo, key, hi, part);
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)',
    parent, part, lo, hi);
  RETURN true;
END
$$;

-- spans
ALTER TABLE spans RENAME TO spans_old;
ALTER TABLE spans_old RENAME CONSTRAINT spans_pkey TO spans_old_pkey;
CREATE TABLE spans (LIKE spans_old INCLUDING DEFAULTS) PARTITION BY RANGE (start_ns);
ALTER TABLE spans ADD CONSTRAINT spans_pkey PRIMARY KEY (workspace_id, trace_id, span_id, start_ns);
CREATE TABLE spans_default PARTITION OF spans DEFAULT;

-- llm_calls
ALTER TABLE llm_calls RENAME TO llm_calls_old;
ALTER TABLE llm_calls_old RENAME CONSTRAINT llm_calls_pkey TO llm_calls_old_pkey;
ALTER INDEX llm_calls_conversation_idx RENAME TO llm_calls_old_conversation_idx;
ALTER INDEX llm_calls_run_idx RENAME TO llm_calls_old_run_idx;
ALTER INDEX llm_calls_request_idx RENAME TO llm_calls_old_request_idx;
CREATE TABLE llm_calls (LIKE llm_calls_old INCLUDING DEFAULTS) PARTITION BY RANGE (start_ns);
ALTER TABLE llm_calls
  ADD CONSTRAINT llm_calls_pkey PRIMARY KEY (workspace_id, trace_id, span_id, start_ns);
CREATE INDEX llm_calls_conversation_idx ON llm_calls (workspace_id, conversation_id, start_ns, span_id);
CREATE INDEX llm_calls_run_idx ON llm_calls (workspace_id, run_id);
CREATE INDEX llm_calls_request_idx ON llm_calls (workspace_id, request_id) WHERE request_id IS NOT NULL;
CREATE TABLE llm_calls_default PARTITION OF llm_calls DEFAULT;

-- tool_results
ALTER TABLE tool_results RENAME TO tool_results_old;
ALTER TABLE tool_results_old RENAME CONSTRAINT tool_results_pkey TO tool_results_old_pkey;
ALTER INDEX tool_results_conversation_idx RENAME TO tool_results_old_conversation_idx;
CREATE TABLE tool_results (LIKE tool_results_old INCLUDING DEFAULTS) PARTITION BY RANGE (at_ns);
ALTER TABLE tool_results
  ADD CONSTRAINT tool_results_pkey PRIMARY KEY (workspace_id, trace_id, span_id, at_ns);
CREATE INDEX tool_results_conversation_idx ON tool_results (workspace_id, conversation_id, at_ns);
CREATE TABLE tool_results_default PARTITION OF tool_results DEFAULT;

-- log_records: the id stays (a bigserial, ordering records of one time), no longer a key
ALTER TABLE log_records RENAME TO log_records_old;
ALTER TABLE log_records_old RENAME CONSTRAINT log_records_pkey TO log_records_old_pkey;
ALTER TABLE log_records_old
  RENAME CONSTRAINT log_records_workspace_id_dedupe_key_key TO log_records_old_dedupe_key;
ALTER INDEX log_records_trace_idx RENAME TO log_records_old_trace_idx;
CREATE TABLE log_records (LIKE log_records_old INCLUDING DEFAULTS) PARTITION BY RANGE (time_ns);
ALTER SEQUENCE log_records_id_seq OWNED BY log_records.id;
ALTER TABLE log_records
  ADD CONSTRAINT log_records_dedupe_key UNIQUE (workspace_id, dedupe_key, time_ns);
CREATE INDEX log_records_trace_idx ON log_records (workspace_id, trace_id, span_id);
CREATE TABLE log_records_default PARTITION OF log_records DEFAULT;

-- Partitions from yesterday to a week ahead, and for every day of the last 90 that holds
-- rows; older or stranger times land in the default partitions.
SELECT rotscope_ensure_partition(t.parent, d.day)
  FROM (VALUES ('spans'), ('llm_calls'), ('tool_results'), ('log_records')) AS t(parent),
       (SELECT generate_series(rotscope_today() - 1, rotscope_today() + 7, interval '1 day')::date AS day
         UNION
        SELECT DISTINCT (to_timestamp(start_ns / 1e9) AT TIME ZONE 'UTC')::date FROM spans_old
         WHERE start_ns >= rotscope_day_ns(rotscope_today() - 90) AND start_ns < rotscope_day_ns(rotscope_today() + 8)
         UNION
        SELECT DISTINCT (to_timestamp(start_ns / 1e9) AT TIME ZONE 'UTC')::date FROM llm_calls_old
         WHERE start_ns >= rotscope_day_ns(rotscope_today() - 90) AND start_ns < rotscope_day_ns(rotscope_today() + 8)
         UNION
        SELECT DISTINCT (to_timestamp(at_ns / 1e9) AT TIME ZONE 'UTC')::date FROM tool_results_old
         WHERE at_ns >= rotscope_day_ns(rotscope_today() - 90) AND at_ns < rotscope_day_ns(rotscope_today() + 8)
         UNION
        SELECT DISTINCT (to_timestamp(time_ns / 1e9) AT TIME ZONE 'UTC')::date FROM log_records_old
         WHERE time_ns >= rotscope_day_ns(rotscope_today() - 90) AND time_ns < rotscope_day_ns(rotscope_today() + 8)
       ) AS d;

INSERT INTO spans SELECT * FROM spans_old;
INSERT INTO llm_calls SELECT * FROM llm_calls_old;
INSERT INTO tool_results SELECT * FROM tool_results_old;
INSERT INTO log_records SELECT * FROM log_records_old;
DROP TABLE spans_old, llm_calls_old, tool_results_old, log_records_old;
