-- numeric keys: the device sorts PostgreSQL's own 64-bit abbreviated key
-- and ties are resolved with numeric's full comparator.  Values that differ
-- only beyond the abbreviation's precision, equal values written with
-- different scales, NaN and the infinities must all land where PostgreSQL
-- puts them.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE sort_num AS
SELECT i AS id,
       CASE WHEN i % 101 = 0 THEN NULL
            WHEN i % 103 = 0 THEN 'NaN'::numeric
            WHEN i % 107 = 0 THEN 'Infinity'::numeric
            WHEN i % 109 = 0 THEN '-Infinity'::numeric
            WHEN i % 5 = 0 THEN ((i * 7919) % 2003 - 1000)::numeric          -- small integers, many ties
            WHEN i % 5 = 1 THEN round(((i * 7919) % 2003 - 1000)::numeric, (i % 4))  -- same values, other scales
            -- differ only after 30 significant digits: equal abbreviations
            WHEN i % 5 = 2 THEN 123456789012345678901234567890::numeric + (i % 977) * 1e-20
            WHEN i % 5 = 3 THEN -(0.000000000012345678901234567890123 + (i % 991) * 1e-40)
            ELSE ((i::numeric * 2654435761) % 1000003) / 97 * power(10::numeric, (i % 41) - 20) END AS n,
       (i % 7)::int4 AS g
FROM generate_series(1, 80000) i;
INSERT INTO sort_num VALUES
  (-1, 0, 0), (-2, 0.000, 0), (-3, -0.0, 0),
  (-4, 1e-1000, 1), (-5, -1e-1000, 1), (-6, 9.99e1000, 1), (-7, -9.99e1000, 1),
  (-8, 1, 2), (-9, 1.0, 2), (-10, 1.00000000000000000000000000001, 2);
ANALYZE sort_num;

SELECT check_sort('SELECT n AS k, id FROM sort_num ORDER BY n');
SELECT check_sort('SELECT n AS k, id FROM sort_num ORDER BY n DESC');
SELECT check_sort('SELECT n AS k, id FROM sort_num ORDER BY n NULLS FIRST');
SELECT check_sort('SELECT n AS k, id FROM sort_num ORDER BY n DESC NULLS LAST');
SELECT check_sort_keys('SELECT g AS k1, n AS k2, id AS k3 FROM sort_num ORDER BY g DESC, n, id DESC', 3);
SELECT check_sort_keys('SELECT n AS k1, g AS k2, id FROM sort_num ORDER BY n DESC NULLS LAST, g', 2);
SELECT check_sort('SELECT n * 3 - 1 AS k, id FROM sort_num WHERE n <> ''NaN'' ORDER BY n * 3 - 1');
-- the whole order is defined when id breaks the ties: compare it row by row
SELECT check_sort_keys('SELECT n AS k1, id AS k2 FROM sort_num ORDER BY n, id', 2);
-- where the specials and the equal-but-differently-written values land
SELECT id, left(n::text, 40) AS n FROM sort_num WHERE id < 0 OR id IN (103, 107, 109) ORDER BY sort_num.n, id;
-- over a small device budget (runs), ties straddle runs
SET gpuops.device_memory_limit = '1MB';
SELECT check_sort_keys('SELECT n AS k1, g AS k2, id FROM sort_num ORDER BY n, g DESC', 2);
RESET gpuops.device_memory_limit;
SELECT (j->>'Tie Runs')::int > 0 AS ties_resolved
FROM (SELECT gpusort_analyze('SELECT id FROM sort_num ORDER BY n') j) x;
