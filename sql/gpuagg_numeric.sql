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
       round((i % 40)::numeric / 8, 1 + i % 3) AS k
FROM generate_series(1, 120000) i;
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
-- min and max: of equal values the later row's, as numeric_smaller gives
SELECT check_agg('SELECT g, min(n), max(n), min(k), max(k) FROM num_src GROUP BY g');
SELECT check_agg('SELECT min(n), max(n) FILTER (WHERE g > 0), min(n) FILTER (WHERE n <> ''NaN'') FROM num_src');
SELECT check_agg('SELECT trim_scale(k) AS k, max(n) FROM num_src GROUP BY k HAVING min(n) < 0');
-- count(DISTINCT): by value
SELECT check_agg('SELECT g, count(DISTINCT n) AS d FROM num_src GROUP BY g');
SELECT check_agg('SELECT count(DISTINCT k) AS d, count(DISTINCT k) AS e FROM num_src');
-- percentile_disc in numeric order, NaN last
SELECT check_agg($$SELECT g, percentile_disc(0.5) WITHIN GROUP (ORDER BY n) AS a,
                         percentile_disc(1) WITHIN GROUP (ORDER BY n) AS b FROM num_src GROUP BY g$$);
SELECT check_agg($$SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY k DESC) AS a FROM num_src$$);

-- over a 1 MB budget: chunks merged by ranks
SET gpuops.device_memory_limit = '1MB';
SELECT check_agg('SELECT trim_scale(k) AS k, count(*) AS c, min(n), max(n) FROM num_src GROUP BY k');
SELECT check_agg('SELECT g, min(n), max(k) FROM num_src GROUP BY g');
RESET gpuops.device_memory_limit;

-- parallel: min/max of numeric as partial states
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuops.parallel_startup_cost = 0;
RESET enable_hashagg;
EXPLAIN (COSTS OFF) SELECT g, min(n), max(n), count(*) AS c FROM num_src GROUP BY g;
SELECT check_agg('SELECT g, min(n), max(n), count(*) AS c FROM num_src GROUP BY g');
SELECT check_agg('SELECT trim_scale(k) AS k, min(n), max(n) FROM num_src GROUP BY k');
RESET max_parallel_workers_per_gather;

-- numeric sums and averages keep PostgreSQL's plan
SELECT uses_gpuagg('SELECT g, sum(n) FROM num_src GROUP BY g') AS numeric_sum,
       uses_gpuagg('SELECT g, avg(k) FROM num_src GROUP BY g') AS numeric_avg;

DROP TABLE num_src;
