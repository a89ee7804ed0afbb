-- Inputs larger than GpuSort's host memory limit (gpuops.host_memory_limit,
-- by default work_mem) whose sort may park its rows: no bound, no computed
-- keys, forward scans only.  From the point the rows held reach the limit,
-- every row goes with its keys to the device sort and comes back in order,
-- in chunks (sort_park.h); the host holds one batch at a time.  Runs of rows
-- whose text keys tie on the device's prefix are ordered with PostgreSQL's
-- comparators, within a chunk or, longer than one, in a tuplesort.  Over the
-- device budget too, the device's rows go to temporary files as runs and are
-- merged.  Results must be PostgreSQL's, ties included.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET work_mem = '1MB';
-- chunks of 1MB (the staging buffers'): many of them, tie runs across their ends
SET gpuops.batch_size = '1MB';

SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8');
SELECT check_sort('SELECT f8 AS k, id, pad FROM sort_src ORDER BY f8 DESC NULLS LAST');
SELECT check_sort_keys('SELECT a4 AS k1, f8 AS k2, a8 AS k3, id, pad FROM sort_src
                        ORDER BY a4 DESC, f8, a8 NULLS FIRST', 3);
SELECT check_sort_keys('SELECT t AS k1, i8 AS k2, id FROM sort_types
                        ORDER BY t COLLATE "C", i8 DESC NULLS LAST', 2);

-- text keys longer than the device's prefix: a few huge runs that tie on
-- it (their rows differ only past 40 bytes), runs of every length, NULLs
CREATE TABLE park_text AS
SELECT i AS id,
       CASE WHEN i % 211 = 0 THEN NULL
            WHEN i % 3 = 0 THEN repeat('p', 40) || md5(i::text)
            WHEN i % 3 = 1 THEN repeat('q', 30) || lpad((i % 977)::text, 8, '0')
            ELSE substr(md5(i::text), 1, 1 + i % 24) END AS t,
       (i % 7)::int4 AS g
FROM generate_series(1, 150000) i;
ANALYZE park_text;
SELECT check_sort('SELECT t COLLATE "C" AS k, id FROM park_text ORDER BY 1');
SELECT check_sort_keys('SELECT t COLLATE "C" AS k1, g AS k2, id AS k3 FROM park_text
                        ORDER BY 1 DESC NULLS LAST, 2, 3', 3);
SELECT check_sort_keys('SELECT g AS k1, t COLLATE "C" AS k2, id FROM park_text ORDER BY 1, 2', 2);
SELECT (j->>'Tie Runs')::int8 > 0 AS tie_runs, (j->>'Parked Rows')::int8 AS parked
FROM gpusort_analyze('SELECT * FROM park_text ORDER BY t COLLATE "C"') j;

-- EXPLAIN ANALYZE: the rows were parked, nothing went to disk
SELECT (j->>'Parked Rows')::int8 > 100000 AS parked, (j->>'Parked Memory')::int8 > 1000 AS kb,
       j ? 'Spilled Runs' AS spilled, (j->>'Actual Rows')::numeric::int8 AS rows_out
FROM gpusort_analyze('SELECT * FROM sort_src ORDER BY a8') j;
-- within the host limit nothing is parked
SET work_mem = '64MB';
SELECT j ? 'Parked Rows' AS parked FROM gpusort_analyze('SELECT * FROM sort_src ORDER BY a8') j;
SET work_mem = '1MB';

-- a device budget of about one batch of rows: each batch over it sends the
-- device's rows to a file as a run, and the runs are merged with the last
SET gpuops.device_memory_limit = '24MB';
SELECT check_sort('SELECT a8 AS k, id, pad FROM sort_src ORDER BY a8');
SELECT check_sort('SELECT t COLLATE "C" AS k, id FROM park_text ORDER BY 1');
SELECT (j->>'Device Runs')::int > 1 AS device_runs, (j->>'Spilled Runs')::int > 0 AS spilled,
       (j->>'Actual Rows')::numeric::int8 AS rows_out
FROM gpusort_analyze('SELECT * FROM sort_src ORDER BY a8') j;
RESET gpuops.device_memory_limit;

-- rescans with the same input read the parked rows again
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT uses_gpusort('SELECT g, s.* FROM generate_series(1, 3) g,
                     LATERAL (SELECT a8, id FROM sort_src ORDER BY a8, id OFFSET 199000) s');
CREATE TEMP TABLE rescan_on AS
SELECT g, s.* FROM generate_series(1, 3) g,
       LATERAL (SELECT a8, id FROM sort_src ORDER BY a8, id OFFSET 199000) s;
SET gpuops.enabled = off;
CREATE TEMP TABLE rescan_off AS
SELECT g, s.* FROM generate_series(1, 3) g,
       LATERAL (SELECT a8, id FROM sort_src ORDER BY a8, id OFFSET 199000) s;
SET gpuops.enabled = on;
SELECT (SELECT count(*) FROM rescan_on) AS n,
       (SELECT count(*) FROM (SELECT * FROM rescan_on EXCEPT ALL SELECT * FROM rescan_off) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM rescan_off EXCEPT ALL SELECT * FROM rescan_on) x) AS missing;
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- an error while the rows go out, with runs on disk: no temporary file stays
SET gpuops.device_memory_limit = '24MB';
SELECT sql_error('SELECT a8, 1 / (id - 150000) FROM (SELECT * FROM sort_src ORDER BY id DESC) s');
RESET gpuops.device_memory_limit;
SELECT count(*) AS temp_files FROM pg_ls_tmpdir()
WHERE name LIKE 'pgsql_tmp' || pg_backend_pid() || '.%';

-- parallel workers staging the rows (GpuSort -> Gather -> GpuStage): past
-- the limit the leader parks their chunks as they come and frees them, and
-- the workers wait while the chunks not yet taken exceed the limit
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = on;
SET enable_gathermerge = off;
RESET gpuops.tuple_cost;
SELECT uses_node('SELECT * FROM sort_src ORDER BY a8', 'GpuStage') AS staged;
SELECT check_sort('SELECT a8 AS k, id, pad FROM sort_src ORDER BY a8');
SELECT check_sort_keys('SELECT f8 AS k1, a4 AS k2, id, pad FROM sort_src ORDER BY f8 DESC, a4 NULLS FIRST', 2);
SELECT check_sort_keys('SELECT t COLLATE "C" AS k1, g AS k2, id AS k3 FROM park_text
                        ORDER BY 1 DESC NULLS LAST, 2, 3', 3);
SELECT (j->>'Parked Rows')::int8 AS parked, (j->>'Actual Rows')::numeric::int8 AS rows_out
FROM gpusort_analyze('SELECT * FROM sort_src ORDER BY a8') j;
-- past the device budget too: the device's rows go to files as runs, merged
SET gpuops.device_memory_limit = '24MB';
SELECT check_sort('SELECT a8 AS k, id, pad FROM sort_src ORDER BY a8');
SELECT (j->>'Device Runs')::int > 1 AS device_runs, (j->>'Spilled Runs')::int > 0 AS spilled
FROM gpusort_analyze('SELECT * FROM sort_src ORDER BY a8') j;
RESET gpuops.device_memory_limit;
-- an error in a worker's share, and a device failure in the leader, while
-- rows stream: the query fails cleanly and the next one runs
SELECT sql_error('SELECT a8, 1 / (id - 150000) FROM sort_src ORDER BY a8');
SET gpuops.fault_injection = kernel_error;
SELECT sql_error('SELECT * FROM sort_src ORDER BY a8');
RESET gpuops.fault_injection;
SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8');
-- the leader alone (no worker launched) takes each full chunk as it fills:
-- at most about one chunk is in shared memory at a time
SET max_parallel_workers = 0;
SELECT (j->>'Streamed Chunks')::int AS streamed,
       (j->>'Peak Shared Memory')::int8 * 2 < (j->>'Shared Memory')::int8 AS bounded
FROM node_analyze('SELECT * FROM sort_src ORDER BY a8', 'GpuStage', true) j;
SELECT check_sort('SELECT a8 AS k, id, pad FROM sort_src ORDER BY a8');
RESET max_parallel_workers;
-- with parking off, or without the leader to take the chunks, the staged
-- plan is offered only within the limit
SET gpuops.enable_sort_park = off;
SELECT uses_node('SELECT * FROM sort_src ORDER BY a8', 'GpuStage') AS staged_park_off;
RESET gpuops.enable_sort_park;
SET parallel_leader_participation = off;
SELECT uses_node('SELECT * FROM sort_src ORDER BY a8', 'GpuStage') AS staged_no_leader;
RESET parallel_leader_participation;
RESET enable_gathermerge;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
SET max_parallel_workers_per_gather = 0;
SET gpuops.tuple_cost = 0;

DROP TABLE park_text;
RESET work_mem;
RESET gpuops.cpu_fallback;
RESET max_parallel_workers_per_gather;
RESET gpuops.tuple_cost;
RESET gpuops.startup_cost;
RESET gpuops.min_rows;
