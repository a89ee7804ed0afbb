-- GpuNestLoop beyond the device budget, after device failures, and in
-- parallel workers.  Under gpuops.device_memory_limit = 1MB an inner block
-- holds 29127 rows of two columns, a probe 256 outer rows and a pair
-- window 32768 pairs, so these joins load several inner blocks per probe
-- (LEFT, SEMI and ANTI must then decide an outer row over all of them) and
-- walk pairs in several windows.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;

CREATE TABLE nb_outer AS
SELECT i AS id, CASE WHEN i % 101 = 0 THEN NULL ELSE (i * 7919) % 100000 END AS x,
       (i % 13)::int2 AS w
FROM generate_series(1, 700) i;
CREATE TABLE nb_inner AS
SELECT i AS id, CASE WHEN i % 97 = 0 THEN NULL ELSE ((i::int8 * 104729) % 100000)::int4 END AS lo,
       (i % 50)::int4 AS span, (i % 11)::int2 AS w
FROM generate_series(1, 45000) i;
ANALYZE nb_outer;
ANALYZE nb_inner;
SET gpuops.device_memory_limit = '1MB';

SELECT check_join_on('SELECT o.id AS oid, i.id AS iid FROM nb_outer o JOIN nb_inner i
                      ON o.x BETWEEN i.lo AND i.lo + i.span', 'GpuNestLoop');
SELECT check_join_on('SELECT o.id AS oid, i.id AS iid FROM nb_outer o LEFT JOIN nb_inner i
                      ON o.x BETWEEN i.lo AND i.lo + i.span', 'GpuNestLoop');
SELECT check_join_on('SELECT o.id FROM nb_outer o WHERE EXISTS (SELECT 1 FROM nb_inner i
                      WHERE o.x BETWEEN i.lo AND i.lo + i.span)', 'GpuNestLoop');
SELECT check_join_on('SELECT o.id FROM nb_outer o WHERE NOT EXISTS (SELECT 1 FROM nb_inner i
                      WHERE o.x BETWEEN i.lo AND i.lo + i.span)', 'GpuNestLoop');
-- many pairs per outer row (windows split rows' pairs), through aggregates
SELECT check_join_on('SELECT o.w, count(*) AS n, sum(i.id) AS s FROM nb_outer o JOIN nb_inner i
                      ON o.w < i.w AND o.x < i.lo GROUP BY o.w', 'GpuNestLoop');
SELECT j->>'Inner Blocks' AS blocks, (j->>'Block Loads')::int AS loads,
       (j->>'Probes')::int AS probes, j->>'Pairs Passed' AS passed, (j->>'Actual Rows')::numeric::int8 AS rows
FROM (SELECT jsonb_path_query_first(e, 'strict $.**? (@."Custom Plan Provider" == "GpuNestLoop")') AS j
      FROM (SELECT explain_json('SELECT o.id, i.id FROM nb_outer o LEFT JOIN nb_inner i
                                 ON o.x BETWEEN i.lo AND i.lo + i.span') AS e) x) y;

-- device failures: the CPU backend loads the current block, probes again
-- and skips the pairs already returned; without a fallback the error
-- carries its SQLSTATE
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_join_on('SELECT o.id AS oid, i.id AS iid FROM nb_outer o LEFT JOIN nb_inner i
                      ON o.x BETWEEN i.lo AND i.lo + i.span', 'GpuNestLoop');
SET gpuops.fault_injection = out_of_memory;
SELECT check_join_on('SELECT o.id FROM nb_outer o WHERE NOT EXISTS (SELECT 1 FROM nb_inner i
                      WHERE o.x BETWEEN i.lo AND i.lo + i.span)', 'GpuNestLoop');
SET gpuops.fault_injection = no_device;
SELECT check_join_on('SELECT o.id AS oid, i.id AS iid FROM nb_outer o JOIN nb_inner i
                      ON o.x BETWEEN i.lo AND i.lo + i.span', 'GpuNestLoop');
SET gpuops.cpu_fallback = off;
SET gpuops.fault_injection = kernel_error;
SELECT sql_error('SELECT count(*) FROM nb_outer o JOIN nb_inner i ON o.x BETWEEN i.lo AND i.lo + i.span');
RESET gpuops.fault_injection;
RESET gpuops.device_memory_limit;

-- parallel: a partial GpuNestLoop in each worker under Gather
SET gpuops.parallel_startup_cost = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE TABLE nb_big AS
SELECT i AS id, (i * 7919) % 100000 AS x FROM generate_series(1, 20000) i;
ANALYZE nb_big;
SELECT line FROM plan_lines('SELECT count(*) FROM nb_big o JOIN nb_inner i
                             ON o.x BETWEEN i.lo AND i.lo + i.span AND i.id < 3000') line
WHERE line ~ 'Gather|GpuNestLoop|Parallel';
SELECT check_join_on('SELECT count(*) AS n, sum(o.id) AS so, sum(i.id) AS si FROM nb_big o JOIN nb_inner i
                      ON o.x BETWEEN i.lo AND i.lo + i.span AND i.id < 3000', 'GpuNestLoop');
SELECT check_join_on('SELECT count(*) AS n, sum(o.id) AS so FROM nb_big o WHERE NOT EXISTS
                      (SELECT 1 FROM nb_inner i WHERE i.id < 3000 AND o.x BETWEEN i.lo AND i.lo + i.span)',
                     'GpuNestLoop');
