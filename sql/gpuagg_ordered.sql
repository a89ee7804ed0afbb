-- GpuAgg's ordered aggregates: count(DISTINCT x), percentile_disc and
-- percentile_cont (a median is percentile_cont(0.5)).  The device sorts each
-- group's rows by x; every result is compared with PostgreSQL's as text
-- (check_agg).
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET enable_hashagg = off;
SET enable_sort = off;

-- 150000 rows over several 64K-row batches: x with NULLs, duplicates and
-- a skewed group (g = 0 holds half the rows); float specials; keys with
-- a group of only NULL inputs and a group of one row.
CREATE TABLE ord_src AS
SELECT i AS id,
       CASE WHEN i % 2 = 0 THEN 0 WHEN i % 101 = 0 THEN NULL ELSE i % 1000 END::int4 AS g,
       (i % 7)::int2 AS g7,
       CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7919) % 5000 - 2500 END::int4 AS x4,
       CASE WHEN i % 17 = 0 THEN NULL ELSE ((i::int8 * 104729) % 100003) * 1000000007 END AS x8,
       CASE WHEN i % 19 = 0 THEN NULL ELSE ((i * 31) % 4001 - 2000) / 8.0 END::float8 AS f8,
       CASE WHEN i % 23 = 0 THEN NULL ELSE ((i * 37) % 3001 - 1500) / 4.0 END::float4 AS f4,
       CASE WHEN i % 29 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
       date '2020-01-01' + (i * 13) % 2000 AS d,
       timestamp '2021-03-04 05:06:07' + ((i * 7) % 977) * interval '1 hour 1 second' AS ts,
       ((i * 11) % 400) * interval '1 minute' + (i % 5) * interval '1 month' AS iv,
       ('00000000-0000-0000-0000-' || lpad(to_hex((i * 3) % 311), 12, '0'))::uuid AS u,
       'k' || (i % 50) AS t,
       CASE WHEN i % 11 = 0 THEN NULL WHEN i % 3 = 0 THEN 'K' || (i % 70) ELSE 'k' || (i % 90) || 'x' END AS tm
FROM generate_series(1, 150000) i;
INSERT INTO ord_src (id, g, x4, f8) VALUES
  (-1, -1, NULL, NULL), (-2, -1, NULL, NULL),          -- only NULL inputs
  (-3, -2, 42, 'NaN'), (-4, -3, 7, 'Infinity'),        -- one row each
  (-5, -4, 1, '-Infinity'), (-6, -4, 1, 'Infinity'), (-7, -4, 1, 'NaN'),
  (-8, -5, 3, '-0'), (-9, -5, 3, '0');
ANALYZE ord_src;

-- the plans
EXPLAIN (COSTS OFF) SELECT g, count(DISTINCT x4) FROM ord_src GROUP BY g;
EXPLAIN (COSTS OFF)
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f8), count(DISTINCT f8) FROM ord_src;

-- count(DISTINCT x) of every fixed-width type, with and without GROUP BY
SELECT check_agg('SELECT g, count(DISTINCT x4) AS n FROM ord_src GROUP BY g');
SELECT check_agg('SELECT g7, count(DISTINCT x8) AS n, count(*) AS c FROM ord_src GROUP BY g7');
SELECT check_agg('SELECT g, count(DISTINCT f8) AS n, sum(x4) FROM ord_src GROUP BY g');
SELECT check_agg('SELECT g7, count(DISTINCT f4) AS n FROM ord_src GROUP BY g7');
SELECT check_agg('SELECT g7, count(DISTINCT b) AS n FROM ord_src GROUP BY g7');
SELECT check_agg('SELECT t, count(DISTINCT d) AS n FROM ord_src GROUP BY t');
SELECT check_agg('SELECT g7, count(DISTINCT ts) AS n FROM ord_src GROUP BY g7');
-- intervals count by span: 1 month and 30 days are one value
SELECT check_agg('SELECT g7, count(DISTINCT iv) AS n FROM ord_src GROUP BY g7');
SELECT check_agg('SELECT g7, count(DISTINCT u) AS n FROM ord_src GROUP BY g7');
SELECT check_agg('SELECT count(DISTINCT x4) AS a, count(*) FILTER (WHERE g = 0) AS b FROM ord_src');
SELECT check_agg('SELECT count(DISTINCT x8) AS n, count(*), avg(x4) FROM ord_src');
SELECT check_agg('SELECT g % 10 AS m, count(DISTINCT x4 % 100) AS n FROM ord_src GROUP BY g % 10');
SELECT check_agg('SELECT g, count(DISTINCT x4) FILTER (WHERE f8 > 0) AS n FROM ord_src GROUP BY g');
SELECT check_agg('SELECT g7, count(DISTINCT x4) AS n FROM ord_src GROUP BY g7 HAVING count(DISTINCT x4) > 2000');
-- every row its own group, and empty input
SELECT check_agg('SELECT id, count(DISTINCT x4) AS n FROM ord_src GROUP BY id');
SELECT check_agg('SELECT count(DISTINCT x4) AS n FROM ord_src WHERE id < -100');
SELECT check_agg('SELECT g, count(DISTINCT x4) AS n FROM ord_src WHERE id < -100 GROUP BY g');

-- percentiles at 0, 0.5, 1 and between, with ties and NULLs
SELECT check_agg('SELECT g, percentile_cont(0.5) WITHIN GROUP (ORDER BY f8) AS med FROM ord_src GROUP BY g');
SELECT check_agg($$SELECT g7, percentile_cont(0) WITHIN GROUP (ORDER BY f8) AS p0,
                          percentile_cont(1) WITHIN GROUP (ORDER BY f8) AS p1,
                          percentile_cont(0.37) WITHIN GROUP (ORDER BY f8) AS p37,
                          percentile_cont(0.999) WITHIN GROUP (ORDER BY f8) AS p999
                   FROM ord_src GROUP BY g7$$);
SELECT check_agg($$SELECT g, percentile_disc(0) WITHIN GROUP (ORDER BY x4) AS p0,
                         percentile_disc(0.5) WITHIN GROUP (ORDER BY x4) AS p50,
                         percentile_disc(1) WITHIN GROUP (ORDER BY x4) AS p100,
                         percentile_disc(0.9) WITHIN GROUP (ORDER BY x4) AS p90
                   FROM ord_src GROUP BY g$$);
-- integers to percentile_cont go through float8
SELECT check_agg('SELECT g7, percentile_cont(0.25) WITHIN GROUP (ORDER BY x8) AS q FROM ord_src GROUP BY g7');
SELECT check_agg('SELECT g7, percentile_cont(0.5) WITHIN GROUP (ORDER BY x4) AS q FROM ord_src GROUP BY g7');
-- percentile_cont of intervals: interval_lerp's arithmetic
SELECT check_agg($$SELECT g7, percentile_cont(0.5) WITHIN GROUP (ORDER BY iv) AS a,
                          percentile_cont(0.33) WITHIN GROUP (ORDER BY iv) AS b,
                          percentile_cont(1) WITHIN GROUP (ORDER BY iv) AS c
                   FROM ord_src GROUP BY g7$$);
SELECT check_agg($$SELECT percentile_cont(0.71) WITHIN GROUP (ORDER BY iv DESC) AS a FROM ord_src$$);
-- few rows a group, so the two rows differ and the interpolation counts
SELECT check_agg($$SELECT g7, percentile_cont(0.5) WITHIN GROUP (ORDER BY iv) AS a,
                          percentile_cont(0.33) WITHIN GROUP (ORDER BY iv) AS b
                   FROM ord_src WHERE id % 997 = 0 GROUP BY g7$$);
SELECT check_agg($$SELECT g7, percentile_cont(0.5) WITHIN GROUP (ORDER BY f8) AS a,
                          percentile_cont(0.33) WITHIN GROUP (ORDER BY f8) AS b
                   FROM ord_src WHERE id % 997 = 0 GROUP BY g7$$);
-- percentile_disc of other types (ties have equal text here)
SELECT check_agg('SELECT g7, percentile_disc(0.5) WITHIN GROUP (ORDER BY x8) AS q FROM ord_src GROUP BY g7');
SELECT check_agg('SELECT g7, percentile_disc(0.3) WITHIN GROUP (ORDER BY f4) AS q FROM ord_src GROUP BY g7');
SELECT check_agg('SELECT t, percentile_disc(0.5) WITHIN GROUP (ORDER BY d) AS q FROM ord_src GROUP BY t');
SELECT check_agg('SELECT g7, percentile_disc(0.75) WITHIN GROUP (ORDER BY ts) AS q FROM ord_src GROUP BY g7');
SELECT check_agg('SELECT g7, percentile_disc(0.5) WITHIN GROUP (ORDER BY u) AS q FROM ord_src GROUP BY g7');
SELECT check_agg('SELECT g7, percentile_disc(0.5) WITHIN GROUP (ORDER BY b) AS q FROM ord_src GROUP BY g7');
-- DESC, with a distinct count of the same input
SELECT check_agg($$SELECT g7, percentile_disc(0.2) WITHIN GROUP (ORDER BY f8 DESC) AS a,
                          percentile_cont(0.2) WITHIN GROUP (ORDER BY f8 DESC) AS b,
                          count(DISTINCT f8) AS c
                   FROM ord_src GROUP BY g7$$);
SELECT check_agg($$SELECT g, percentile_disc(0.7) WITHIN GROUP (ORDER BY x4 DESC) AS a
                   FROM ord_src GROUP BY g$$);
-- NaN sorts above Infinity; groups of one row, of only NULLs; no GROUP BY
SELECT check_agg($$SELECT g, percentile_cont(0.5) WITHIN GROUP (ORDER BY f8) AS a,
                         percentile_disc(1) WITHIN GROUP (ORDER BY f8) AS b,
                         percentile_disc(0) WITHIN GROUP (ORDER BY f8) AS c
                   FROM ord_src WHERE g < 0 GROUP BY g$$);
SELECT check_agg($$SELECT g, percentile_disc(0.5) WITHIN GROUP (ORDER BY x4) AS a,
                         count(DISTINCT x4) AS b
                   FROM ord_src WHERE g < 0 GROUP BY g$$);
SELECT check_agg($$SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f8) AS a,
                         percentile_disc(0.5) WITHIN GROUP (ORDER BY f8) AS b, count(DISTINCT f8) AS c
                   FROM ord_src$$);
SELECT check_agg('SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f8) AS a FROM ord_src WHERE id < -100');
SELECT check_agg($$SELECT g7, percentile_cont(0.5) WITHIN GROUP (ORDER BY f8) FILTER (WHERE g <> 0) AS a,
                          count(DISTINCT f8) FILTER (WHERE g <> 0) AS b, max(f8)
                   FROM ord_src GROUP BY g7$$);

-- text: count(DISTINCT) by byte equality, percentile_disc in the
-- collation's order (ranks), under the database's collation and "C"
SELECT check_agg('SELECT g7, count(DISTINCT t) AS n FROM ord_src GROUP BY g7');
SELECT check_agg('SELECT g, count(DISTINCT tm) AS n FROM ord_src GROUP BY g');
SELECT check_agg('SELECT count(DISTINCT tm) AS n, count(*) FILTER (WHERE tm IS NULL) AS z FROM ord_src');
SELECT check_agg($$SELECT g7, percentile_disc(0.5) WITHIN GROUP (ORDER BY tm) AS a,
                          percentile_disc(0) WITHIN GROUP (ORDER BY tm) AS b,
                          percentile_disc(1) WITHIN GROUP (ORDER BY tm) AS c
                   FROM ord_src GROUP BY g7$$);
SELECT check_agg($$SELECT g, percentile_disc(0.3) WITHIN GROUP (ORDER BY tm COLLATE "C" DESC) AS a,
                         count(DISTINCT tm COLLATE "C") AS n
                   FROM ord_src GROUP BY g$$);
-- a distinct count sharing its input with a percentile: both read ranks
SELECT check_agg($$SELECT g7, count(DISTINCT tm) AS n, percentile_disc(0.5) WITHIN GROUP (ORDER BY tm) AS a,
                          percentile_disc(0.9) WITHIN GROUP (ORDER BY tm) AS b
                   FROM ord_src GROUP BY g7$$);
-- ICU's root collation orders mixed case unlike "C" (where the server has it)
SELECT check_agg(format('SELECT g7, percentile_disc(0.4) WITHIN GROUP (ORDER BY tm COLLATE %I) AS a
                         FROM ord_src GROUP BY g7', coll))
FROM (SELECT coalesce((SELECT collname FROM pg_collation WHERE collname = 'und-x-icu'), 'C') AS coll) c;

-- what keeps PostgreSQL's plan: two different ordered inputs, DISTINCT of
-- another aggregate, bytea, a fraction that is not a constant or out of range
SELECT uses_gpuagg('SELECT count(DISTINCT x4), count(DISTINCT x8) FROM ord_src');
-- (percentile_cont's input is x4::float8, not x4)
SELECT uses_gpuagg('SELECT count(DISTINCT x4), percentile_cont(0.5) WITHIN GROUP (ORDER BY x4) FROM ord_src');
SELECT uses_gpuagg('SELECT count(DISTINCT x4), percentile_cont(0.5) WITHIN GROUP (ORDER BY f8) FROM ord_src');
SELECT uses_gpuagg('SELECT count(DISTINCT x4) FILTER (WHERE b), count(DISTINCT x4) FROM ord_src');
SELECT uses_gpuagg('SELECT sum(DISTINCT x4) FROM ord_src');
SELECT uses_gpuagg('SELECT count(DISTINCT t::bytea) FROM ord_src');
SELECT uses_gpuagg('SELECT g7, percentile_cont(g7 / 10.0) WITHIN GROUP (ORDER BY f8) FROM ord_src GROUP BY g7');
SELECT uses_gpuagg($$SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x4),
                            percentile_disc(0.5) WITHIN GROUP (ORDER BY x4 DESC) FROM ord_src$$);
SELECT uses_gpuagg('SELECT percentile_cont(ARRAY[0.1, 0.9]) WITHIN GROUP (ORDER BY f8) FROM ord_src');
SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY f8) FROM ord_src;

-- over the device budget: aggregated whole, on the CPU, still exact
SET gpuops.device_memory_limit = '1MB';
SELECT check_agg('SELECT g7, count(DISTINCT x4) AS n, percentile_disc(0.5) WITHIN GROUP (ORDER BY x4) AS m FROM ord_src GROUP BY g7');
SELECT j->0->'Plan'->>'Fallback' AS fallback, (j->0->'Plan'->>'Chunks') IS NULL AS one_piece
FROM explain_json('SELECT g7, count(DISTINCT x4) FROM ord_src GROUP BY g7') j;
RESET gpuops.device_memory_limit;

-- device failures: fall back to the CPU, or raise
SET gpuops.fault_injection = kernel_error;
SELECT g7, count(DISTINCT x4) FROM ord_src GROUP BY g7 ORDER BY g7 LIMIT 1;
SET gpuops.cpu_fallback = on;
SELECT check_agg('SELECT g7, count(DISTINCT x4) AS n, percentile_disc(0.5) WITHIN GROUP (ORDER BY x4) AS m FROM ord_src GROUP BY g7');
RESET gpuops.fault_injection;
RESET gpuops.cpu_fallback;

-- EXPLAIN ANALYZE figures
SELECT j->0->'Plan'->>'Node Type' AS node, j->0->'Plan'->>'Groups' AS groups,
       j->0->'Plan'->>'Input Rows' AS input_rows
FROM explain_json('SELECT g7, count(DISTINCT x4), percentile_disc(0.5) WITHIN GROUP (ORDER BY x4) FROM ord_src GROUP BY g7') j;

DROP TABLE ord_src;
