-- GpuSort in parallel workers: each worker (and the leader) sorts its share
-- of a parallel scan, and Gather Merge merges the sorted streams, as with
-- PostgreSQL's own Sort.  Each process uses its own device context and its
-- share of the device memory budget.
-- GpuTopN would read this file's top-N queries by row position (gpu_topn.sql
-- tests it): off, so that GpuSort's bounded sort is what they test
SET gpuops.enable_topn = off;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET gpuops.cpu_fallback = off;
SET gpuops.host_memory_limit = '1GB';
SET gpuops.parallel_startup_cost = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
-- one GpuSort over rows staged in parallel (GpuStage) is sort_staged's
SET gpuops.enable_parallel_staging = off;

-- the plan: Gather Merge over GpuSort over a Parallel Seq Scan
CREATE FUNCTION parallel_gpusort(q text) RETURNS bool
LANGUAGE plpgsql AS $$
DECLARE line text; gm bool := false; gs bool := false; ps bool := false;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    gm := gm OR line LIKE '%Gather Merge%';
    gs := gs OR (gm AND line LIKE '%Custom Scan (GpuSort)%');
    ps := ps OR (gs AND line LIKE '%Parallel Seq Scan%');
  END LOOP;
  RETURN gm AND gs AND ps;
END $$;

-- with no staging cost, one GpuSort above a Gather is cheapest
SELECT line FROM (SELECT regexp_replace(l, '  \(.*', '') AS line
  FROM (SELECT * FROM plan_lines('SELECT * FROM sort_src ORDER BY a8')) x(l)) y;
SELECT check_sort('SELECT a8 AS k, id, pad FROM sort_src ORDER BY a8');
-- with the default staging cost, each worker's share is cheaper to stage:
-- GpuSort below Gather Merge
SET gpuops.tuple_cost = 0.04;
SELECT parallel_gpusort('SELECT * FROM sort_src ORDER BY a8') AS parallel_plan;
SELECT check_sort('SELECT a8 AS k, id, pad FROM sort_src ORDER BY a8');
SELECT check_sort_keys('SELECT a4 AS k1, f8 AS k2, id AS k3, pad FROM sort_src
                        ORDER BY a4 DESC NULLS LAST, f8, id', 3);
SELECT check_sort_keys('SELECT t AS k1, id AS k2 FROM sort_types ORDER BY t COLLATE "C", id', 2);
-- with a filter below, and bounded
SELECT check_sort_keys('SELECT a8 AS k1, id AS k2 FROM sort_src WHERE a4 > 0 ORDER BY a8, id', 2);
SELECT parallel_gpusort('SELECT * FROM sort_src ORDER BY a8, id LIMIT 1000') AS parallel_topn_plan;
SELECT check_sort_keys('SELECT a8 AS k1, id AS k2, pad FROM sort_src ORDER BY a8, id LIMIT 1000 OFFSET 10', 2);
-- where a bounded sort in workers sorts: below gpuops.topn_device_min_bound
-- on the CPU everywhere; above it the leader on the device and the workers
-- on the CPU (no CUDA context in a worker) up to a bound of 1048576;
-- beyond that every process on the device
SELECT line FROM plan_lines('SELECT * FROM sort_src ORDER BY a8, id LIMIT 1000') line
WHERE line ~ 'Sorts On';
SET gpuops.topn_device_min_bound = 0;
SELECT line FROM plan_lines('SELECT * FROM sort_src ORDER BY a8, id LIMIT 1000') line
WHERE line ~ 'Sorts On';
SELECT check_sort_keys('SELECT a8 AS k1, id AS k2, pad FROM sort_src ORDER BY a8 DESC, id LIMIT 777 OFFSET 3', 2);
SELECT check_sort_keys('SELECT a4 AS k1, f8 AS k2, id AS k3 FROM sort_src ORDER BY a4 NULLS FIRST, f8 DESC, id LIMIT 5000', 3);
SELECT line FROM plan_lines('SELECT * FROM sort_src ORDER BY a8, id LIMIT 70000') line
WHERE line ~ 'Sorts On';
SELECT check_sort_keys('SELECT a8 AS k1, id AS k2 FROM sort_src ORDER BY a8, id LIMIT 70000', 2);
SELECT count(*) AS sorts_on_lines FROM plan_lines('SELECT * FROM sort_src ORDER BY a8, id LIMIT 1048577') line
WHERE line ~ 'Sorts On';
SELECT parallel_gpusort('SELECT * FROM sort_src ORDER BY a8, id LIMIT 1048577') AS parallel_large_topn_plan;
SELECT check_sort_keys('SELECT a8 AS k1, id AS k2 FROM sort_src ORDER BY a8, id LIMIT 1048577', 2);
RESET gpuops.topn_device_min_bound;
-- spilling in the workers (spilling is costed: a lower staging cost keeps
-- GpuSort the cheaper plan)
SET gpuops.host_memory_limit = '1MB';
SET gpuops.tuple_cost = 0.01;
SELECT parallel_gpusort('SELECT f8 AS k1, id AS k2, pad FROM sort_src ORDER BY f8 DESC, id') AS parallel_spill_plan;
SELECT check_sort_keys('SELECT f8 AS k1, id AS k2, pad FROM sort_src ORDER BY f8 DESC, id', 2);
SET gpuops.tuple_cost = 0.04;
SET gpuops.host_memory_limit = '1GB';

-- the Gather Merge plans 2 workers; the GpuSort below it sorted every row
SELECT j->>'Workers Planned' AS workers_planned,
       jsonb_path_query_first(j, 'strict $.**? (@."Custom Plan Provider" == "GpuSort")') ? 'Backend' AS gpusort_ran
FROM (SELECT jsonb_path_query_first(e, 'strict $.**? (@."Node Type" == "Gather Merge")') AS j
      FROM (SELECT explain_json('SELECT * FROM sort_src ORDER BY a8') AS e) x) y;
