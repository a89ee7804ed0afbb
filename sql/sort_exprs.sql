-- GpuSort computing expression sort keys on the device: a key that is an
-- integer or float expression the device evaluator compiles is computed
-- from the columns it reads (the child then outputs plain columns and a
-- plain scan is read from its heap pages), its values come back for the
-- rows emitted, tie resolution and spilling.  Every order is compared with
-- PostgreSQL's (check_sort_cols); run-time errors in a key are PostgreSQL's
-- own.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET enable_sort = off;
SET work_mem = '64MB';

-- 150000 rows (three 64K-row batches): NULLs, duplicates, NaN, infinities
-- and -0 in the floats, text longer than the device's 16-byte prefix
CREATE TABLE se AS
SELECT i AS id,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 2001 - 1000)::int4 END AS a,
       CASE WHEN i % 19 = 0 THEN NULL ELSE (i % 201 - 100)::int2 END AS b,
       CASE WHEN i % 23 = 0 THEN NULL ELSE (i::int8 * 7919) % 1000003 END AS c,
       CASE WHEN i % 29 = 0 THEN NULL
            WHEN i % 101 = 0 THEN 'NaN'::float8
            WHEN i % 103 = 0 THEN '-0'::float8
            WHEN i % 107 = 0 THEN '-Infinity'::float8
            WHEN i % 109 = 0 THEN 'Infinity'::float8
            ELSE (i % 4001 - 2000) / 8.0 END::float8 AS f,
       CASE WHEN i % 31 = 0 THEN NULL ELSE (i % 301 - 150) / 4.0 END::float4 AS f4,
       (i % 5)::int4 AS z,
       'a fairly long common prefix ' || (i % 7) AS t
FROM generate_series(1, 150000) i;
ANALYZE se;

-- the plan: the key is computed on the device, the scan outputs the
-- columns it reads, and is read directly from its pages
EXPLAIN (COSTS OFF, VERBOSE)
SELECT id, a * 2 + b AS k FROM se ORDER BY a * 2 + b, id;
EXPLAIN (COSTS OFF)
SELECT id FROM se ORDER BY f * 2 DESC, id LIMIT 10;
SELECT s->'Keys Computed on Device' AS computed, s->'Plans'->0->'Output' AS child_output,
       s->'Heap Rows Read Directly' AS direct
FROM gpusort_analyze('SELECT id FROM se ORDER BY a * 2 + b, id', true) s;

-- orders: every computed kind, directions, NULL placement, with other keys
SELECT q, check_sort_cols(q, keys) FROM (VALUES
  ('SELECT id, a * 2 + b AS k1, id AS k2 FROM se ORDER BY a * 2 + b, id', ARRAY['k1', 'k2']),
  ('SELECT id AS k FROM se ORDER BY a - c DESC, id', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY b * b NULLS FIRST, id DESC', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY (b + 1::int2) DESC NULLS LAST, id', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY c % 1000, id', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY f * 2, id', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY f - a DESC, id', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY f4 * 2, id DESC', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY abs(a), -id', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY CASE WHEN a > 0 THEN a ELSE -a * 2 END, id', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY a::float8 / 8, id', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY f4::int8 + 1, id', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY z, a * 3 DESC, id', ARRAY['k']),
  ('SELECT id AS k FROM se ORDER BY a * 2, b * 2, id', ARRAY['k']),
  -- a text key tied on its device prefix: the comparator reads the computed key too
  ('SELECT id AS k FROM se ORDER BY t, a + b, id', ARRAY['k']),
  ('SELECT id AS k, a + 1 AS k2 FROM se WHERE a > 500 ORDER BY a + 1, id', ARRAY['k', 'k2']),
  ('SELECT id AS k FROM se WHERE id < 0 ORDER BY a + 1, id', ARRAY['k'])
) v(q, keys);

-- top-N (no cut before the keys are computed; compactions keep the best rows)
SELECT q, check_sort_cols(q, ARRAY['k']) FROM (VALUES
  ('SELECT id AS k FROM se ORDER BY a * 2 + b, id LIMIT 100'),
  ('SELECT id AS k FROM se ORDER BY f * 2 DESC, id LIMIT 70000 OFFSET 3'),
  ('SELECT id AS k FROM se ORDER BY c - a NULLS FIRST, id LIMIT 1000')
) v(q);

-- run-time errors: PostgreSQL's own, also from the last batch and under a
-- LIMIT (every row's key is computed, as PostgreSQL computes it)
SELECT q, check_error_on(q, 'GpuSort') FROM (VALUES
  ('SELECT id FROM se ORDER BY a * 3000000, id'),
  ('SELECT id FROM se ORDER BY b * 1000::int2, id'),
  ('SELECT id FROM se ORDER BY c * c * c * 100, id'),
  ('SELECT id FROM se ORDER BY 1000 / z, id'),
  ('SELECT id FROM se ORDER BY a % z, id'),
  ('SELECT id FROM se ORDER BY f * 1e308, id'),
  ('SELECT id FROM se ORDER BY (f * 1e30)::int4, id'),
  ('SELECT id FROM se ORDER BY 1000 / (1 - (id > 149990)::int), id'),
  ('SELECT id FROM se ORDER BY a * 2, 1000 / (1 - (id = 150000)::int), id LIMIT 5'),
  ('SELECT id FROM se ORDER BY CASE WHEN z = 0 THEN 0 ELSE 1000 / z END, id')
) v(q);

-- several device runs (a small device budget) and spilled runs (a small
-- host memory limit): the computed values are fetched run by run and
-- written with the rows
SET gpuops.device_memory_limit = '2MB';
SELECT check_sort_cols('SELECT id AS k FROM se ORDER BY a * 2 + b, id', ARRAY['k']);
SELECT (s->>'Runs')::int > 1 AS several_runs
FROM gpusort_analyze('SELECT id FROM se ORDER BY a * 2 + b, id') s;
SELECT check_error_on('SELECT id FROM se ORDER BY 1000 / (1 - (id > 149990)::int), id', 'GpuSort');
RESET gpuops.device_memory_limit;
SET gpuops.host_memory_limit = '1MB';
SELECT check_sort_cols('SELECT id AS k, a - b AS k2 FROM se ORDER BY a - b DESC, id', ARRAY['k', 'k2']);
SELECT (s->>'Spilled Runs')::int > 0 AS spilled
FROM gpusort_analyze('SELECT id FROM se ORDER BY a - b DESC, id') s;
RESET gpuops.host_memory_limit;

-- in parallel: a GpuSort in every worker below Gather Merge (not over
-- rows staged by the workers, whose chunks have no room for computed keys)
SET max_parallel_workers_per_gather = 2;
SET gpuops.enable_parallel_staging = off;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuops.parallel_startup_cost = 0;
EXPLAIN (COSTS OFF)
SELECT id AS k, f * 2 AS k2 FROM se ORDER BY f * 2, id;
SELECT check_sort_cols('SELECT id AS k, f * 2 AS k2 FROM se ORDER BY f * 2, id', ARRAY['k', 'k2']);
SELECT check_error_on('SELECT id FROM se ORDER BY 1000 / z, id', 'GpuSort');
SET max_parallel_workers_per_gather = 0;
RESET gpuops.enable_parallel_staging;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET gpuops.parallel_startup_cost;

-- a device failure after the keys were staged: the CPU backend computes
-- them again from the stored columns
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_sort_cols('SELECT id AS k, a * 2 + b AS k2 FROM se ORDER BY a * 2 + b, id', ARRAY['k', 'k2']);
SELECT check_error_on('SELECT id FROM se ORDER BY 1000 / z, id', 'GpuSort');
RESET gpuops.fault_injection;
SET gpuops.cpu_fallback = off;

-- what the device cannot compute stays with the child: numeric and text
-- results
EXPLAIN (COSTS OFF, VERBOSE)
SELECT id FROM se ORDER BY a::numeric * 2, length(t), id;
SELECT check_sort_cols('SELECT id AS k FROM se ORDER BY a::numeric * 2, a * 2, id', ARRAY['k']);

-- switched off: the child computes the keys, as before
SET gpuops.enable_device_exprs = off;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT id FROM se ORDER BY a * 2 + b, id;
SELECT check_sort_cols('SELECT id AS k FROM se ORDER BY a * 2 + b, id', ARRAY['k']);
RESET gpuops.enable_device_exprs;

DROP TABLE se;
