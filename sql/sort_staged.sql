-- GpuSort over rows staged by parallel workers (GpuStage): the workers and
-- the leader read their share of the scan, compute the input columns (key
-- expressions included) and copy them in batches into shared memory; Gather
-- carries no tuple; the one GpuSort above it sorts every row.  Results are
-- compared with PostgreSQL's, order included.
-- GpuTopN would read this file's top-N queries by row position (gpu_topn.sql
-- tests it): off, so that GpuSort's bounded sort is what they test
SET gpuops.enable_topn = off;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.cpu_fallback = off;
SET gpuops.host_memory_limit = '1GB';
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = on;
-- GpuSort in each worker below a Gather Merge is sort_parallel's
SET enable_gathermerge = off;

-- the plan: GpuSort -> Gather -> GpuStage -> Parallel Seq Scan
SELECT line FROM (SELECT regexp_replace(l, '  \(.*', '') AS line
  FROM (SELECT * FROM plan_lines('SELECT * FROM sort_src ORDER BY a8')) x(l)) y;

-- check_staged_sort(q, nkeys): check_sort_keys, and whether GpuStage read the input
CREATE FUNCTION check_staged_sort(q text, nkeys int) RETURNS text
LANGUAGE sql AS $$
  SELECT check_sort_keys(q, nkeys) || ' staged=' || uses_node(q, 'GpuStage')
$$;

-- staged_sort_counts(q): rows staged (all processes), sorted by GpuSort, returned
CREATE FUNCTION staged_sort_counts(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE j jsonb := explain_json(q); s jsonb; stage jsonb;
BEGIN
  s := jsonb_path_query_first(j, 'strict $.**? (@."Custom Plan Provider" == "GpuSort")');
  stage := jsonb_path_query_first(j, 'strict $.**? (@."Custom Plan Provider" == "GpuStage")');
  RETURN format('staged %s rows, GpuSort sorted %s and returned %s, gather returned %s',
                stage->>'Staged Rows', s->>'Rows', (s->>'Actual Rows')::numeric::int8,
                (s->'Plans'->0->>'Actual Rows')::numeric::int8);
END $$;

-- 200005 rows: each of three processes fills full chunks (65536 rows,
-- taken in place) and a partial last one (copied).  NULLs, NaN, ±Infinity,
-- -0, extremes; one key and several, ASC/DESC, NULLS FIRST/LAST
SELECT check_staged_sort('SELECT a8 AS k1, id, pad FROM sort_src ORDER BY a8', 1);
SELECT check_staged_sort('SELECT f8 AS k1, id AS k2 FROM sort_src ORDER BY f8 DESC NULLS LAST, id', 2);
SELECT check_staged_sort('SELECT a4 AS k1, f8 AS k2, a8 AS k3, id, pad FROM sort_src
                          ORDER BY a4 DESC, f8, a8 NULLS FIRST', 3);
SELECT staged_sort_counts('SELECT * FROM sort_src ORDER BY a8');
-- key expressions, computed by the workers below Gather
SELECT check_staged_sort('SELECT a4 % 100 AS k1, -id AS k2, pad FROM sort_src ORDER BY a4 % 100, -id', 2);
-- every key type; text (long, shared prefixes: ties by comparator), varchar,
-- bpchar, uuid, interval
SELECT check_staged_sort('SELECT t AS k1, i8 AS k2, id FROM sort_types
                          ORDER BY t COLLATE "C", i8 DESC NULLS LAST', 2);
SELECT check_staged_sort('SELECT u AS k1, iv AS k2, bp AS k3, id AS k4 FROM sort_types
                          ORDER BY u NULLS FIRST, iv DESC, bp COLLATE "C", id', 4);
SELECT check_staged_sort('SELECT d AS k1, tz AS k2, b AS k3, f4 AS k4, i2 AS k5, tm AS k6, ts AS k7, vc, id
                          FROM sort_types ORDER BY d, tz DESC, b, f4, i2, tm, ts', 7);
-- numeric by PostgreSQL's abbreviated keys, ties by its comparator
SELECT check_staged_sort('SELECT (a4::numeric / 7)::numeric(20, 3) AS k1, id AS k2 FROM sort_src
                          ORDER BY 1, id', 2);
-- with a filter below; empty and one-row inputs (tables never analyzed, so
-- that the planner expects rows)
SELECT check_staged_sort('SELECT a8 AS k1, id AS k2 FROM sort_src WHERE a4 > 0 ORDER BY a8, id', 2);
CREATE TABLE staged_empty (LIKE sort_src);
CREATE TABLE staged_one (LIKE sort_src);
INSERT INTO staged_one SELECT * FROM sort_src WHERE id = -1;
SELECT check_staged_sort('SELECT a8 AS k1, id FROM staged_empty ORDER BY a8', 1);
SELECT check_staged_sort('SELECT a8 AS k1, pad FROM staged_one ORDER BY a8', 1);
-- bounded: LIMIT and OFFSET over the staged rows.  A serial bounded GpuSort
-- cuts most rows at one comparison each as it reads them, which usually
-- beats staging them all; a comparison priced above a staged row's share
-- (0.01) keeps the staged plan the cheapest here and in the rescans below.
SET cpu_operator_cost = 0.05;
SELECT check_staged_sort('SELECT a8 AS k1, id AS k2, pad FROM sort_src ORDER BY a8, id LIMIT 1000 OFFSET 10', 2);
RESET cpu_operator_cost;

-- without the leader reading: the workers stage everything
SET parallel_leader_participation = off;
SELECT check_staged_sort('SELECT f8 AS k1, a8 AS k2, id FROM sort_src ORDER BY f8, a8 DESC', 2);
SELECT staged_sort_counts('SELECT * FROM sort_src ORDER BY f8');
RESET parallel_leader_participation;

-- rescanned: the inner side of a nested loop without Materialize, under a
-- Limit that shuts the Gather (and the shared memory of the staged rows)
-- down once it has its rows.  Every rescan stages the rows again.
SET enable_material = off;
SET cpu_operator_cost = 0.05;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_sort = off;
SELECT check_sort_cols($q$
  SELECT v.x, s.k, s.id, s.pad FROM (VALUES (1), (2), (3)) v(x) LEFT JOIN
    LATERAL (SELECT a8 AS k, id, pad FROM sort_src ORDER BY a8 LIMIT 5) s ON true$q$,
  ARRAY['x', 'k']);
SELECT j->>'Actual Loops' AS loops, j->>'Runs' AS sorts,
       jsonb_path_query_first(j, 'strict $.**? (@."Custom Plan Provider" == "GpuStage")')->>'Staged Rows' AS staged_last
FROM (SELECT jsonb_path_query_first(explain_json($q$
  SELECT v.x, s.k, s.id, s.pad FROM (VALUES (1), (2), (3)) v(x) LEFT JOIN
    LATERAL (SELECT a8 AS k, id, pad FROM sort_src ORDER BY a8 LIMIT 5) s ON true$q$),
  'strict $.**? (@."Custom Plan Provider" == "GpuSort")') AS j) x;
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_sort;
RESET cpu_operator_cost;

-- a device failure falls back to sorting the staged rows on the CPU
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_staged_sort('SELECT a4 AS k1, id AS k2, pad FROM sort_src ORDER BY a4 NULLS FIRST, id', 2);
SELECT j ? 'Fallback' AS fell_back, j->>'Backend' AS backend, j->>'Rows' AS rows
FROM gpusort_analyze('SELECT * FROM sort_src ORDER BY a4') j;
RESET gpuops.fault_injection;
SET gpuops.cpu_fallback = off;

-- staged rows cannot be spilled: over the host memory limit the staged plan
-- is offered only to a sort that parks its rows (sort_park.sql)
SET gpuops.host_memory_limit = '1MB';
SET gpuops.enable_sort_park = off;
SELECT uses_node('SELECT * FROM sort_src ORDER BY a8', 'GpuStage') AS staged_over_limit;
RESET gpuops.enable_sort_park;
RESET gpuops.host_memory_limit;
-- and gpuops.enable_parallel_staging = off turns it off
SET gpuops.enable_parallel_staging = off;
SELECT uses_node('SELECT * FROM sort_src ORDER BY a8', 'GpuStage') AS staged_when_off;
RESET gpuops.enable_parallel_staging;
DROP TABLE staged_empty, staged_one;
