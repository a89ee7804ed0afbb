-- gpuops.stat (what ran, summed over every backend) and gpuops.explain_why
-- (why a query does or does not use the GPU).  Counters are compared as
-- deltas and booleans only: no timing, no byte count (they differ by
-- backend and machine: the CPU twin's bytes_from_device is the size of the
-- results it hands over, the GPU's every copy back, at least those
-- results); costs in explain_why's reasons are masked.
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests the counters of GpuAgg's and the joins' plans.
SET gpuops.enable_query = off;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;

-- the view's columns
SELECT attname, format_type(atttypid, atttypmod)
FROM pg_attribute WHERE attrelid = 'gpuops.stat'::regclass AND attnum > 0 ORDER BY attnum;

-- reset gives zeros, one row per operator kind
SELECT gpuops.stat_reset();
SELECT operator, plans, executions, rows_in, rows_out, bytes_to_device,
       bytes_from_device, device_ms, fallbacks,
       last_fallback_reason, device_oom, stats_reset <= now() AS reset_time_set
FROM gpuops.stat ORDER BY operator;

-- stat_delta(): each counter's rise since stat_mark() (a snapshot of the view)
CREATE TEMP TABLE stat_before AS SELECT * FROM gpuops.stat;
CREATE FUNCTION stat_mark() RETURNS void LANGUAGE sql AS $$
  DELETE FROM stat_before; INSERT INTO stat_before SELECT * FROM gpuops.stat $$;
CREATE FUNCTION stat_delta(op text, OUT plans bigint, OUT executions bigint, OUT rows_in bigint,
                           OUT rows_out bigint, OUT bytes_in bool, OUT bytes_out bool,
                           OUT device_ms_set bool, OUT fallbacks bigint, OUT device_oom bigint)
LANGUAGE sql AS $$
  SELECT s.plans - b.plans, s.executions - b.executions, s.rows_in - b.rows_in,
         s.rows_out - b.rows_out, s.bytes_to_device > b.bytes_to_device,
         s.bytes_from_device > b.bytes_from_device,
         s.device_ms >= b.device_ms, s.fallbacks - b.fallbacks, s.device_oom - b.device_oom
  FROM gpuops.stat s JOIN stat_before b USING (operator) WHERE s.operator = op $$;

-- a GpuSort: one plan, one execution, every row in and out
SELECT uses_gpusort('SELECT a8 FROM sort_src ORDER BY a8 OFFSET 0') AS gpusort;
SELECT stat_mark();
SELECT count(*) FROM (SELECT a8 FROM sort_src ORDER BY a8 OFFSET 0) s;
SELECT d.*, d.rows_out = (SELECT count(*) FROM sort_src) AS rows_out_is_count,
       d.rows_in = (SELECT count(*) FROM sort_src) AS rows_in_is_count
FROM stat_delta('GpuSort') d;
-- bytes_from_device: at least every row's number (4 bytes) came back
SELECT s.bytes_from_device - b.bytes_from_device >= 4 * (s.rows_in - b.rows_in) AS row_numbers_back
FROM gpuops.stat s JOIN stat_before b USING (operator) WHERE s.operator = 'GpuSort';
-- EXPLAIN without ANALYZE runs nothing, and counts nothing
SELECT stat_mark();
EXPLAIN (COSTS OFF) SELECT a8 FROM sort_src ORDER BY a8;
SELECT plans, executions, rows_out FROM stat_delta('GpuSort');
-- a rescanned GpuSort (the inner side of a nested loop): one plan, an
-- execution per outer row
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET gpuops.enable_hashjoin = off;
SET gpuops.enable_mergejoin = off;
SET gpuops.enable_nestloop = off;
SELECT uses_gpusort($$SELECT count(*) FROM (VALUES (1), (2), (3)) v(x),
  LATERAL (SELECT id FROM sort_src WHERE a4 = v.x ORDER BY id OFFSET 0) s$$) AS gpusort;
SELECT stat_mark();
SELECT count(*) FROM (VALUES (1), (2), (3)) v(x),
  LATERAL (SELECT id FROM sort_src WHERE a4 = v.x ORDER BY id OFFSET 0) s;
SELECT d.plans, d.executions, d.rows_out = 31 AS rows_out_is_count FROM stat_delta('GpuSort') d;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET gpuops.enable_hashjoin;
RESET gpuops.enable_mergejoin;
RESET gpuops.enable_nestloop;

-- a GpuAgg: rows out = the groups
SET enable_hashagg = off;
SET enable_sort = off;
SELECT uses_node('SELECT a4 % 10 AS g, count(*) FROM sort_src GROUP BY 1', 'GpuAgg') AS gpuagg;
SELECT stat_mark();
CREATE TEMP TABLE agg_out AS SELECT a4 % 10 AS g, count(*) FROM sort_src GROUP BY 1;
SELECT d.*, d.rows_out = (SELECT count(*) FROM agg_out) AS rows_out_is_groups
FROM stat_delta('GpuAgg') d;
RESET enable_hashagg;
RESET enable_sort;

-- a CPU fallback after a device out-of-memory: counted, with its reason
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = out_of_memory;
SELECT stat_mark();
SELECT count(*) FROM (SELECT a8 FROM sort_src ORDER BY a8 OFFSET 0) s;
RESET gpuops.fault_injection;
RESET gpuops.cpu_fallback;
SELECT plans, executions, rows_out, fallbacks, device_oom FROM stat_delta('GpuSort');
SELECT last_fallback_reason FROM gpuops.stat WHERE operator = 'GpuSort';

-- other backends' counters are seen: the view reads shared memory (the
-- counters above came from this backend; a reset from any backend clears them)
SELECT gpuops.stat_reset();
SELECT sum(plans) AS plans, sum(executions) AS executions, sum(fallbacks) AS fallbacks,
       sum(device_oom) AS device_oom, count(last_fallback_reason) AS reasons
FROM gpuops.stat;
-- resetting is for superusers (and those granted it), as pg_stat_statements_reset
SELECT has_function_privilege('public', 'gpuops.stat_reset()', 'execute') AS public_may_reset;

-- explain_why: chosen
SELECT operator, context, decision, regexp_replace(reason, '[0-9]+(\.[0-9]+)?', 'N', 'g') AS reason
FROM gpuops.explain_why('SELECT * FROM sort_src ORDER BY a8');
SET enable_hashagg = off;
SET enable_sort = off;
SELECT operator, context, decision, regexp_replace(reason, '[0-9]+(\.[0-9]+)?', 'N', 'g') AS reason
FROM gpuops.explain_why('SELECT a4 % 10 AS g, count(*) FROM sort_src GROUP BY 1');
RESET enable_hashagg;
RESET enable_sort;
-- declined by a parameter
SET gpuops.enable_sort = off;
SELECT * FROM gpuops.explain_why('SELECT * FROM sort_src ORDER BY a8');
RESET gpuops.enable_sort;
-- declined: under gpuops.min_rows
SET gpuops.min_rows = 1000000;
SELECT * FROM gpuops.explain_why('SELECT * FROM sort_src ORDER BY a8');
SET gpuops.min_rows = 0;
-- lost on cost: both costs
SET gpuops.startup_cost = 1e9;
SELECT operator, context, decision, regexp_replace(reason, '[0-9]+(\.[0-9]+)?', 'N', 'g') AS reason
FROM gpuops.explain_why('SELECT * FROM sort_src ORDER BY a8');
SET gpuops.startup_cost = 0;
-- an unsupported type, named; the DEBUG1 message says the same, from the same place
SET client_min_messages = debug1;
SELECT * FROM gpuops.explain_why('SELECT * FROM sort_src ORDER BY to_jsonb(a4)');
RESET client_min_messages;
-- gpuops off altogether
SET gpuops.enabled = off;
SELECT * FROM gpuops.explain_why('SELECT * FROM sort_src ORDER BY a8');
RESET gpuops.enabled;
-- nothing gpuops takes
SELECT * FROM gpuops.explain_why('SELECT 1');
-- a utility statement is not planned; parameters and several statements are errors
SELECT * FROM gpuops.explain_why('CREATE TABLE never_made (a int)');
SELECT * FROM gpuops.explain_why('SELECT * INTO never_made FROM sort_src ORDER BY a8');
SELECT sql_error($$SELECT * FROM gpuops.explain_why('SELECT * FROM sort_src WHERE a4 = $1')$$);
SELECT sql_error($$SELECT * FROM gpuops.explain_why('SELECT 1; SELECT 2')$$);
SELECT sql_error($$SELECT * FROM gpuops.explain_why('SELEC 1')$$);
-- it plans, never runs: the INSERT adds no row
CREATE TEMP TABLE why_target (a int8);
SELECT count(*) > 0 AS has_rows
FROM gpuops.explain_why('INSERT INTO why_target SELECT a8 FROM sort_src ORDER BY a8');
SELECT count(*) FROM why_target;
SELECT to_regclass('never_made') IS NULL AS never_made;
