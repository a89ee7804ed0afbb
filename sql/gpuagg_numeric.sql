-- GpuAgg over numeric: GROUP BY numeric keys, and min, max, count(DISTINCT)
-- and percentile_disc of numeric, all through ranks in numeric order
-- (equal values such as 1.0 and 1.00 one rank).  Compared with
-- PostgreSQL's results as text, so the scale a result prints with counts.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET enable_hashagg = off;
SET enable_sort = off;

-- values with several scales of one value, NaN, NULLs, large and tiny
-- magnitudes, negative zero scales; g holds skew (half the rows 0)
CREATE TABLE num_src AS
SELECT i AS id,
       CASE WHEN i % 2 = 0 THEN 0 ELSE i % 300 END AS g,
       CASE WHEN i % 97 = 0 THEN NULL
            WHEN i % 89 = 0 THEN 'NaN'::numeric
            WHEN i % 7 = 0 THEN round((i % 50)::numeric, 2)       -- 12.00
            WHEN i % 7 = 1 THEN round((i % 50)::numeric, 0)       -- 12
            WHEN i % 7 = 2 THEN (i % 50)::numeric / 3             -- 4.3333333333333333
            WHEN i % 7 = 3 THEN ((i % 50) * 1e30)::numeric
            WHEN i % 7 = 4 THEN ((i % 50) * 1e-20)::numeric
            ELSE -(i % 50)::numeric * 1.5 END AS n,
       round((i % 40)::numeric / 8, 1 + i % 3) AS k,
       CASE WHEN i % 13 = 0 THEN NULL ELSE ((i::int8 * 7919) % 2000000001 - 1000000000)::int4 END AS i4,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 65535 - 32767)::int2 END AS i2,
       CASE WHEN i % 19 = 0 THEN NULL WHEN i % 5 = 0 THEN 9223372036854775807 - i
            WHEN i % 5 = 1 THEN -9223372036854775807 + i ELSE i::int8 * 1000003 END AS i8
FROM generate_series(1, 120000) i;
INSERT INTO num_src (id, g, i4, i2) VALUES (-1, -1, 5, 5), (-2, -2, NULL, NULL), (-3, -2, NULL, NULL),
  (-4, -3, 2147483647, 32767), (-5, -3, -2147483648, -32768), (-6, -3, 2147483647, 32767);
ANALYZE num_src;

EXPLAIN (COSTS OFF) SELECT k, count(*), min(n) FROM num_src GROUP BY k;

-- numeric keys: 5.0, 5.00 and 5 are one group.  Which row's scale
-- PostgreSQL shows for it depends on its plan (the first row of a hash
-- table, or of a sort's run of equal keys), so keys print trim_scale'd;
-- grouping by their text keeps the scales apart
SELECT check_agg('SELECT trim_scale(k) AS k, count(*) AS c FROM num_src GROUP BY k');
SELECT check_agg('SELECT k::text AS kt, count(*) AS c FROM num_src GROUP BY k::text');
SELECT check_agg('SELECT trim_scale(n) AS n, count(*) AS c FROM num_src GROUP BY n');
SELECT check_agg('SELECT g, trim_scale(k) AS k, count(*) AS c FROM num_src GROUP BY g, k');
-- min and max: of equal values (12 and 12.00) the later row's, as
-- numeric_smaller returns its newer argument; which row is later depends
-- on PostgreSQL's plan (a sort reorders equal keys), so results that can
-- tie print trim_scale'd.  Values of one scale (n / 3) show theirs.
SELECT check_agg($$SELECT g, trim_scale(min(n)) AS a, trim_scale(max(n)) AS b, trim_scale(min(k)) AS c,
                         trim_scale(max(k)) AS d FROM num_src GROUP BY g$$);
SELECT check_agg($$SELECT g % 9 AS m, min(n) FILTER (WHERE id % 7 = 2) AS a, max(n) FILTER (WHERE id % 7 = 2) AS b
                   FROM num_src GROUP BY g % 9$$);
SELECT check_agg($$SELECT trim_scale(min(n)) AS a, trim_scale(max(n) FILTER (WHERE g > 0)) AS b,
                         trim_scale(min(n) FILTER (WHERE n <> 'NaN')) AS c FROM num_src$$);
SELECT check_agg('SELECT trim_scale(k) AS k, trim_scale(max(n)) AS b FROM num_src GROUP BY k HAVING min(n) < 0');
-- count(DISTINCT): by value
SELECT check_agg('SELECT g, count(DISTINCT n) AS d FROM num_src GROUP BY g');
SELECT check_agg('SELECT count(DISTINCT k) AS d, count(DISTINCT k) AS e FROM num_src');
-- percentile_disc in numeric order, NaN last
SELECT check_agg($$SELECT g, trim_scale(percentile_disc(0.5) WITHIN GROUP (ORDER BY n)) AS a,
                         trim_scale(percentile_disc(1) WITHIN GROUP (ORDER BY n)) AS b FROM num_src GROUP BY g$$);
SELECT check_agg($$SELECT trim_scale(percentile_disc(0.25) WITHIN GROUP (ORDER BY k DESC)) AS a FROM num_src$$);

-- variance and stddev of int2/int4: numeric results from exact 128-bit
-- sums by PostgreSQL's own final functions (a one-row group's sample
-- variance is NULL, as are all-NULL groups')
SELECT check_agg($$SELECT g, variance(i4), var_samp(i4), var_pop(i4), stddev(i4), stddev_samp(i4),
                         stddev_pop(i4) FROM num_src GROUP BY g$$);
SELECT check_agg($$SELECT g % 7 AS m, variance(i2), var_pop(i2), stddev_samp(i2), stddev_pop(i2)
                   FROM num_src GROUP BY g % 7$$);
SELECT check_agg('SELECT var_samp(i4), stddev_pop(i2), var_pop(i4) FILTER (WHERE g < 0) FROM num_src');
SELECT check_agg('SELECT var_samp(i4), stddev(i2) FROM num_src WHERE id < -100');
SELECT check_agg('SELECT g, stddev(i4) FROM num_src GROUP BY g HAVING variance(i2) > 1e8');
-- int8: squares near 2^126, their sum past 2^128 (192-bit sums of squares,
-- numeric_serialize's state)
SELECT check_agg($$SELECT g % 11 AS m, variance(i8), var_pop(i8), stddev_samp(i8), stddev_pop(i8), stddev(i8)
                   FROM num_src GROUP BY g % 11$$);
SELECT check_agg('SELECT var_samp(i8), stddev_pop(i8), var_pop(i8) FILTER (WHERE g = 0) FROM num_src');
SELECT check_agg('SELECT g, var_samp(i8) FROM num_src WHERE g < 0 GROUP BY g');

-- over a 1 MB budget: chunks merged by ranks
SET gpuops.device_memory_limit = '1MB';
SELECT check_agg('SELECT trim_scale(k) AS k, count(*) AS c, trim_scale(min(n)) AS a, trim_scale(max(n)) AS b FROM num_src GROUP BY k');
SELECT check_agg('SELECT g, trim_scale(min(n)) AS a, trim_scale(max(k)) AS b FROM num_src GROUP BY g');
SELECT check_agg('SELECT g % 5 AS m, var_samp(i4), stddev_pop(i2), var_pop(i8) FROM num_src GROUP BY g % 5');
RESET gpuops.device_memory_limit;

-- parallel: min/max of numeric as partial states
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuops.parallel_startup_cost = 0;
SET gpuops.enable_parallel_staging = off;	-- the partial states (gpuagg_staged stages numeric)
RESET enable_hashagg;
EXPLAIN (COSTS OFF) SELECT g, min(n), max(n), count(*) AS c FROM num_src GROUP BY g;
SELECT check_agg('SELECT g, trim_scale(min(n)) AS a, trim_scale(max(n)) AS b, count(*) AS c FROM num_src GROUP BY g');
SELECT check_agg('SELECT trim_scale(k) AS k, trim_scale(min(n)) AS a, trim_scale(max(n)) AS b FROM num_src GROUP BY k');
-- variance's partial state: numeric_poly_serialize's bytea
SELECT check_agg('SELECT g, var_samp(i4), stddev_pop(i2), variance(i2) FROM num_src GROUP BY g');
SELECT check_agg('SELECT var_pop(i4), stddev(i4), var_samp(i8), stddev_pop(i8) FROM num_src');
SELECT check_agg('SELECT g % 13 AS m, variance(i8) FROM num_src GROUP BY g % 13');
RESET max_parallel_workers_per_gather;

-- numeric sums and averages keep PostgreSQL's plan
SELECT uses_gpuagg('SELECT g, sum(n) FROM num_src GROUP BY g') AS numeric_sum,
       uses_gpuagg('SELECT g, avg(k) FROM num_src GROUP BY g') AS numeric_avg,
       uses_gpuagg('SELECT g, var_samp(n) FROM num_src GROUP BY g') AS numeric_variance;


DROP TABLE num_src;
