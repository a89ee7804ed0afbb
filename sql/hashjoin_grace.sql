-- GpuHashJoin beyond the device budget.  Under gpuops.device_memory_limit =
-- 1MB one build holds about 5900 rows (one key) and a window 32768 pairs:
-- larger inner sides are partitioned by key hash on the host (grace hash
-- join), a partition that hashing cannot split (one key in many rows) is
-- built in chunks, and probes with more pairs return them in windows.  The
-- CPU backend derives the same limits from the same budget, so this runs
-- alike without a GPU.  Every result is compared with PostgreSQL's.
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests GpuHashJoin.
SET gpuops.enable_query = off;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET gpuops.enable_mergejoin = off;
SET gpuops.device_memory_limit = '1MB';

-- probe side 100000 rows, build side 40000 rows; NULL keys on both sides,
-- duplicates, and a hot key (7): 40% of the build rows, 300 probe rows
CREATE TABLE gj_outer AS
SELECT i AS id,
       CASE WHEN i % 101 = 0 THEN NULL WHEN i % 333 = 0 THEN 7 ELSE i % 30011 END AS k,
       (i % 17)::int2 AS k2,
       md5(i::text) AS t,
       i % 1000 AS m
FROM generate_series(1, 100000) i;
CREATE TABLE gj_inner AS
SELECT i AS id,
       CASE WHEN i % 97 = 0 THEN NULL WHEN i % 5 < 2 THEN 7 ELSE (i * 7) % 30011 END AS k,
       (i % 13)::int2 AS k2,
       md5((i * 3)::text) AS t,
       repeat('x', i % 50) AS pad
FROM generate_series(1, 40000) i;
ANALYZE gj_outer;
ANALYZE gj_inner;

-- every join type, partitioned with a chunked hot partition
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM gj_outer o JOIN gj_inner i ON o.k = i.k WHERE o.k <> 7');
SELECT check_join('SELECT count(*) AS n, sum(o.id) AS so, sum(i.id) AS si, count(DISTINCT o.id) AS d
                   FROM gj_outer o JOIN gj_inner i ON o.k = i.k');
SELECT check_join('SELECT count(*) AS n, count(i.id) AS ni, sum(o.id) AS so, sum(i.id) AS si
                   FROM gj_outer o LEFT JOIN gj_inner i ON o.k = i.k AND i.id % 3 = o.id % 3');
SELECT check_join('SELECT o.id AS oid, i.id AS iid, i.pad FROM gj_outer o LEFT JOIN gj_inner i ON o.k = i.k
                   WHERE o.k IS DISTINCT FROM 7');
SELECT check_join('SELECT count(*) AS n, count(o.id) AS no, sum(o.id) AS so, sum(i.id) AS si
                   FROM gj_outer o RIGHT JOIN gj_inner i ON o.k = i.k AND o.m < 500');
SELECT check_join('SELECT count(*) AS n, count(o.id) AS no, count(i.id) AS ni, sum(o.id) AS so, sum(i.id) AS si
                   FROM gj_outer o FULL JOIN gj_inner i ON o.k = i.k AND o.k2 = i.k2');
SELECT check_join('SELECT o.id AS oid FROM gj_outer o WHERE EXISTS (SELECT 1 FROM gj_inner i WHERE i.k = o.k)');
SELECT check_join('SELECT o.id AS oid FROM gj_outer o WHERE EXISTS
                   (SELECT 1 FROM gj_inner i WHERE i.k = o.k AND i.id > 39000)');
SELECT check_join('SELECT o.id AS oid FROM gj_outer o WHERE NOT EXISTS (SELECT 1 FROM gj_inner i WHERE i.k = o.k)');
SELECT check_join('SELECT o.id AS oid FROM gj_outer o WHERE NOT EXISTS
                   (SELECT 1 FROM gj_inner i WHERE i.k = o.k AND i.id > 39000)');
-- hashed keys (text) and two keys
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM gj_outer o FULL JOIN gj_inner i ON o.t = i.t');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM gj_outer o JOIN gj_inner i ON o.k = i.k AND o.k2 = i.k2
                   WHERE o.k <> 7');
-- windows without partitions: a small build whose one key matches every probe row
CREATE TABLE gj_hot AS SELECT i AS id, 1 AS k FROM generate_series(1, 2000) i;
ANALYZE gj_hot;
SELECT check_join('SELECT count(*) AS n, sum(a.id * 7 + b.id) AS s FROM gj_hot a JOIN gj_hot b ON a.k = b.k');
SELECT check_join('SELECT count(*) AS n, sum(a.id * 7 + b.id) AS s FROM gj_hot a FULL JOIN gj_hot b ON a.k = b.k AND a.id <> b.id');
-- rescanned with new parameters and with the same inner side
SELECT check_join('SELECT x.i, (SELECT count(*) FROM gj_outer o FULL JOIN gj_inner n ON o.k = n.k AND n.id % 4 = x.i
                   WHERE o.id IS NULL OR n.id IS NULL) AS c FROM generate_series(0, 2) x(i)');
SELECT check_join('SELECT x.i, (SELECT count(*) FROM gj_outer o JOIN gj_inner n ON o.k = n.k
                   WHERE o.id % 5 = x.i) AS c FROM generate_series(0, 2) x(i)');

-- EXPLAIN ANALYZE: partitions, chunk builds beyond them, extra windows
SELECT (j->>'Partitions')::int > 1 AS partitioned,
       (j->>'Builds')::int > (j->>'Partitions')::int AS chunked,
       (j->>'Extra Pair Windows')::int > 0 AS windowed,
       (j->>'Candidate Pairs')::int8 - (j->>'Rows Removed by Join Filter')::int8 = (j->>'Actual Rows')::numeric::int8 AS pairs_add_up
FROM (SELECT jsonb_path_query_first(e, 'strict $.**? (@."Custom Plan Provider" == "GpuHashJoin")') AS j
      FROM (SELECT explain_json('SELECT o.id, i.id FROM gj_outer o JOIN gj_inner i ON o.k = i.k') AS e) x) y;
SELECT j->'Partitions' IS NULL AS streaming, (j->>'Extra Pair Windows')::int > 0 AS windowed
FROM (SELECT jsonb_path_query_first(e, 'strict $.**? (@."Custom Plan Provider" == "GpuHashJoin")') AS j
      FROM (SELECT explain_json('SELECT a.id, b.id FROM gj_hot a JOIN gj_hot b ON a.k = b.k') AS e) x) y;

-- device failures while partitioned: the CPU backend redoes the current
-- chunk and goes on; without a fallback the error carries its SQLSTATE
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_join('SELECT count(*) AS n, count(o.id) AS no, count(i.id) AS ni, sum(o.id) AS so, sum(i.id) AS si
                   FROM gj_outer o FULL JOIN gj_inner i ON o.k = i.k');
SELECT check_join('SELECT count(*) AS n, sum(a.id * 7 + b.id) AS s FROM gj_hot a JOIN gj_hot b ON a.k = b.k');
SET gpuops.fault_injection = out_of_memory;
SELECT check_join('SELECT o.id AS oid FROM gj_outer o WHERE EXISTS (SELECT 1 FROM gj_inner i WHERE i.k = o.k)');
SET gpuops.cpu_fallback = off;
SELECT sql_error('SELECT count(*) FROM gj_outer o JOIN gj_inner i ON o.k = i.k');
RESET gpuops.fault_injection;
