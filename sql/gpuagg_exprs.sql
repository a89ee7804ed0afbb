-- GpuAgg computing its aggregates' arguments on the device: sum, avg,
-- variance and stddev of integer and float expressions, evaluated by the
-- device expression evaluator from the columns they read (the child then
-- outputs plain columns).  Every result is compared with PostgreSQL's as
-- text (check_agg); run-time errors in an argument are PostgreSQL's own,
-- and rows a FILTER rejects are never evaluated, as in PostgreSQL.
-- float sums, averages and variances too (off by default: their rounding
-- is a parallel plan's); these tables' values give PostgreSQL's digits
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests GpuAgg.
SET gpuops.enable_query = off;
SET gpuops.enable_float_aggs = on;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET enable_hashagg = off;
SET enable_sort = off;

-- 150000 rows (three 64K-row batches); float values are multiples of 1/8,
-- so float sums are exact in any order
CREATE TABLE ae AS
SELECT i AS id, i % 13 AS g,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 20001 - 10000)::int4 END AS a,
       CASE WHEN i % 19 = 0 THEN NULL ELSE (i % 201 - 100)::int2 END AS b,
       CASE WHEN i % 23 = 0 THEN NULL ELSE i::int8 * 1000003 END AS c,
       CASE WHEN i % 29 = 0 THEN NULL ELSE (i % 4001 - 2000) / 8.0 END::float8 AS f,
       CASE WHEN i % 31 = 0 THEN NULL ELSE (i % 301 - 150) / 4.0 END::float4 AS f4,
       CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 = 0 END AS flag,
       date '2024-01-01' + i % 400 AS d,
       (i % 5)::int4 AS z,
       (i % 1000)::numeric(8,2) AS n
FROM generate_series(1, 150000) i;
ANALYZE ae;

-- the plan: which inputs the device computes; the child reads plain
-- columns (a projection-free scan)
EXPLAIN (COSTS OFF, VERBOSE)
SELECT g, sum(a * b), avg(f * 2 - a), count(*) FROM ae GROUP BY g;
EXPLAIN (COSTS OFF)
SELECT sum(a + 1), min(a + 1), sum(n * 2), sum(a) FROM ae;
CREATE FUNCTION agg_direct_rows(q text) RETURNS jsonb
LANGUAGE sql AS $$ SELECT node_analyze(q, 'GpuAgg', true)->'Heap Rows Read Directly' $$;
SELECT agg_direct_rows('SELECT g, sum(a * b), avg(f * 2 - a) FROM ae GROUP BY g');

SELECT q, check_agg(q) FROM (VALUES
  ('SELECT g, sum(a * b), sum(a + b), sum(c - a), sum(-a), sum(abs(b)) FROM ae GROUP BY g'),
  ('SELECT g, avg(a * 2), avg(b::int8 * c), avg(c % 1000) FROM ae GROUP BY g'),
  ('SELECT g, sum(b * 2::int2), sum(b + b), avg(b * b) FROM ae GROUP BY g'),
  ('SELECT g, sum(f * 2), sum(f - a), avg(f + b), sum(f4 * 2), avg(f4 + f4) FROM ae GROUP BY g'),
  ('SELECT g, sum(a::float8 / 8), sum(f::int4), sum(f4::int8 + 1) FROM ae GROUP BY g'),
  -- float variances rounded, as in gpuagg: Sxx's last digits depend on the order of the sum
  ('SELECT g, variance(a * 2), stddev(b + 1), round(var_pop(f * 4)::numeric, 4),
           round(stddev_samp(f4 - 1)::numeric, 8) FROM ae GROUP BY g'),
  ('SELECT g, sum(CASE WHEN flag THEN a ELSE -a END), sum(CASE WHEN a > 0 THEN f END) FROM ae GROUP BY g'),
  ('SELECT g, sum(a * b) FILTER (WHERE flag), avg(f * 2) FILTER (WHERE a > 0) FROM ae GROUP BY g'),
  ('SELECT g, sum(d - date ''2024-01-01''), sum((d + 1) - d) FROM ae GROUP BY g'),
  ('SELECT sum(a * b), avg(f - 1), sum(c * 2) FROM ae'),
  ('SELECT sum(a * b + a - b * 2) FROM ae WHERE id < 0'),
  ('SELECT g, sum(a * b) FROM ae WHERE a IS NULL GROUP BY g'),
  ('SELECT b, sum(a * 2), count(*) FROM ae GROUP BY b HAVING sum(a * 2) % 3 = 0')
) v(q);

-- run-time errors: PostgreSQL's own, with gpuops on and off; none where
-- a FILTER keeps PostgreSQL from evaluating the argument
SELECT q, check_error_on(q, 'GpuAgg') FROM (VALUES
  ('SELECT g, sum(a * 300000) FROM ae GROUP BY g'),
  ('SELECT sum(b * 1000::int2) FROM ae'),
  ('SELECT g, sum(c * c) FROM ae GROUP BY g'),
  ('SELECT g, sum(1000 / z) FROM ae GROUP BY g'),
  ('SELECT g, sum(a % z) FROM ae GROUP BY g'),
  ('SELECT sum(f * 1e308) FROM ae'),
  ('SELECT sum((f * 1e30)::int4) FROM ae'),
  ('SELECT sum(1000 / z) FILTER (WHERE z <> 0) FROM ae'),
  ('SELECT g, sum(CASE WHEN z = 0 THEN 0 ELSE 1000 / z END) FROM ae GROUP BY g')
) v(q);

-- in chunks (a small device budget): the error's row is found in a later
-- chunk too, and results merge across chunks
SET gpuops.device_memory_limit = '2MB';
SELECT check_agg('SELECT g, sum(a * b), avg(f * 2) FROM ae GROUP BY g');
SELECT check_error_on('SELECT g, sum(1000 / (z + (id > 140000)::int * -z)) FROM ae GROUP BY g', 'GpuAgg');
RESET gpuops.device_memory_limit;

-- parallel: partial GpuAgg in each worker, and GpuAgg over staged rows
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT check_agg('SELECT g, sum(a * b), avg(f * 2 - a) FROM ae GROUP BY g');
SELECT check_error_on('SELECT g, sum(1000 / z) FROM ae GROUP BY g', 'GpuAgg');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- switched off: the child computes the arguments, as before
SET gpuops.enable_device_exprs = off;
EXPLAIN (COSTS OFF)
SELECT g, sum(a * b) FROM ae GROUP BY g;
SELECT agg_direct_rows('SELECT g, sum(a * b), avg(f * 2 - a) FROM ae GROUP BY g');
SELECT check_agg('SELECT g, sum(a * b), avg(f * 2 - a) FROM ae GROUP BY g');
RESET gpuops.enable_device_exprs;

-- HAVING runs in PostgreSQL's order (createplan.c orders quals by cost):
-- the cheaper max(a) < -20000 rejects every group first, so the product
-- that overflows int4 is never computed and neither plan raises an error
SELECT check_agg('SELECT g, count(*) FROM ae GROUP BY g HAVING min(a) * 1000000 > 0 AND max(a) < -20000');

-- an input that reads no column (PostgreSQL's aggregates.sql: sum(null::int8)):
-- every row NULL, so the sums and averages are NULL, and count 0
SELECT check_agg('SELECT sum(NULL::int8), avg(NULL::int4), count(NULL::int4), sum(1::int8), count(*) FROM ae');
SELECT check_agg('SELECT g, sum(NULL::int8), avg(NULL::int8), sum(2::int4) FROM ae GROUP BY g');
