-- GpuNestLoop's indexed form: the inner side sorted on a column the join
-- bounds by expressions of the outer row, each outer row testing only the
-- inner rows between its bounds.  Every result is compared with
-- PostgreSQL's (gpuops.enabled = off) as a multiset; the indexed plan is
-- asserted where expected, and its absence where a clause could fail on a
-- pair the range would skip.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;

-- bands (the outer side of a LEFT JOIN) and points (the inner side, sorted):
-- NULLs on both sides, duplicate keys, NaN, -0, infinities
CREATE TABLE ix_band AS
SELECT i AS id,
       CASE WHEN i % 23 = 0 THEN NULL ELSE (i * 7919 % 10000)::int4 END AS lo4,
       CASE WHEN i % 29 = 0 THEN NULL ELSE (i * 7919 % 10000 + i % 300)::int8 END AS hi8,
       CASE WHEN i % 31 = 0 THEN NULL WHEN i % 37 = 0 THEN 'NaN'::float8
            WHEN i % 41 = 0 THEN '-Infinity'::float8 ELSE i * 0.37 - 50 END AS lof,
       CASE WHEN i % 43 = 0 THEN NULL WHEN i % 47 = 0 THEN 'Infinity'::float8
            ELSE i * 0.37 - 50 + (i % 7) END AS hif,
       CASE WHEN i % 19 = 0 THEN NULL
            ELSE timestamp '2024-01-01' + (i * 97 % 5000) * interval '1 minute' END AS ts,
       (i % 5)::int2 AS w
FROM generate_series(1, 400) i;
CREATE TABLE ix_point AS
SELECT i AS id,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 104729 % 10000)::int4 END AS x4,
       CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 500)::int2 * 20 END AS x2,
       CASE WHEN i % 11 = 0 THEN NULL WHEN i % 59 = 0 THEN 'NaN'::float8
            WHEN i % 61 = 0 THEN '-0'::float8 WHEN i % 67 = 0 THEN 'Infinity'::float8
            WHEN i % 71 = 0 THEN '-Infinity'::float8 ELSE (i % 1000) * 0.173 - 40 END AS xf,
       CASE WHEN i % 10 = 3 THEN NULL WHEN i % 53 = 0 THEN 'NaN'::float4
            ELSE ((i % 700) * 0.25 - 60)::float4 END AS x4f,
       CASE WHEN i % 9 = 0 THEN NULL
            ELSE timestamp '2024-01-01' + (i * 61 % 6000) * interval '1 minute' END AS ts,
       (i % 3)::int2 AS w
FROM generate_series(1, 6000) i;
-- one key for a third of the points: long runs of ties
UPDATE ix_point SET x4 = 5000 WHERE id % 3 = 0;
ANALYZE ix_band;
ANALYZE ix_point;

-- plans: the index column, its bounds (either way round, strict or not);
-- none where a clause could fail on a pair the range skips (p.x4 + 0)
EXPLAIN (COSTS OFF)
SELECT b.id, p.id FROM ix_band b LEFT JOIN ix_point p ON p.x4 BETWEEN b.lo4 AND b.hi8;
EXPLAIN (COSTS OFF)
SELECT b.id, p.id FROM ix_band b LEFT JOIN ix_point p ON b.lo4 < p.x4 AND b.hi8 >= p.x4;
EXPLAIN (COSTS OFF)
SELECT b.id, p.id FROM ix_band b LEFT JOIN ix_point p ON b.lo4 < p.x4 AND p.x4 + 0 < b.hi8;
EXPLAIN (COSTS OFF)
SELECT b.id, p.id FROM ix_band b LEFT JOIN ix_point p
  ON p.ts >= b.ts - interval '30 minutes' AND p.ts < b.ts + interval '2 hours';

-- results: bound forms, types, and the joins' NULL semantics
SELECT e, check_join_on(q, 'GpuNestLoop'),
       EXISTS (SELECT FROM plan_lines(q) l WHERE l LIKE '%Index Cond%') AS indexed
FROM (SELECT e, 'SELECT b.id AS bid, p.id AS pid FROM ix_band b LEFT JOIN ix_point p ON ' || e AS q
FROM (VALUES
  ('p.x4 BETWEEN b.lo4 AND b.hi8'), ('b.lo4 < p.x4 AND p.x4 < b.hi8'),
  ('p.x4 > b.lo4 AND p.x4 <= b.hi8'), ('p.x4 >= b.lo4 + 9000'), ('b.hi8 - 9000 > p.x4'),
  ('p.x4 BETWEEN b.lo4 AND b.lo4 + 3 AND p.w <> b.w'), ('p.x4 = 5000 AND b.lo4 < p.x4 AND b.lo4 > 4800'),
  ('p.x2 BETWEEN b.lo4 AND b.hi8'), ('p.x2 > b.lo4 * 2 AND p.x2 < b.lo4 * 2 + 500'),
  ('p.xf BETWEEN b.lof AND b.hif'), ('p.xf > b.lof AND p.xf < b.hif'),
  ('p.xf >= b.lof + 150'), ('p.xf < b.lof / 2 - 35'), ('p.x4f BETWEEN b.lof AND b.hif'),
  ('p.xf <= -b.hif AND p.xf >= -b.hif - 10'),
  ('p.ts BETWEEN b.ts - interval ''1 hour'' AND b.ts + interval ''1 hour'''),
  ('p.ts >= b.ts AND p.ts < b.ts + interval ''2 hours'' AND p.w <> b.w'),
  ('(p.x4 BETWEEN b.lo4 AND b.hi8) OR p.x4 IS NULL'),
  ('p.x4 BETWEEN b.lo4 AND b.hi8 AND (p.xf > b.lof OR b.lof IS NULL)')
) v(e)) w;
-- inner, semi and anti joins; many candidates per outer row (several
-- chunks of the range: a semi or anti join decides at the first match of
-- each), ties across chunk bounds
SELECT check_join_on('SELECT b.id AS bid, p.id AS pid FROM ix_band b JOIN ix_point p
                      ON p.x4 BETWEEN b.lo4 AND b.hi8', 'GpuNestLoop');
SELECT check_join_on('SELECT b.id FROM ix_band b WHERE EXISTS (SELECT 1 FROM ix_point p
                      WHERE p.x4 BETWEEN b.lo4 - 3000 AND b.hi8 + 3000 AND p.w = 2 AND p.id % 7 = 1)',
                     'GpuNestLoop');
SELECT check_join_on('SELECT b.id FROM ix_band b WHERE NOT EXISTS (SELECT 1 FROM ix_point p
                      WHERE p.x4 BETWEEN b.lo4 - 3000 AND b.hi8 AND p.w > b.w)',
                     'GpuNestLoop');
SELECT check_join_on('SELECT b.w, count(*) AS n, sum(p.id) AS s FROM ix_band b JOIN ix_point p
                      ON p.x4 BETWEEN b.lo4 - 4000 AND b.lo4 + 4000 GROUP BY b.w', 'GpuNestLoop');
-- empty sides
SELECT check_join_on('SELECT b.id AS bid, p.id AS pid FROM ix_band b LEFT JOIN
                      (SELECT * FROM ix_point WHERE id < 0) p ON p.x4 BETWEEN b.lo4 AND b.hi8',
                     'GpuNestLoop');
SELECT check_join_on('SELECT b.id AS bid, p.id AS pid FROM ix_band b LEFT JOIN
                      (SELECT * FROM ix_point WHERE x4 IS NULL) p ON p.x4 BETWEEN b.lo4 AND b.hi8',
                     'GpuNestLoop');

-- the index tests only the range: far fewer pairs than outer x inner
-- (nl_analyze, test_setup's: the GpuNestLoop node of EXPLAIN ANALYZE)
SELECT j->>'Index Cond' AS cond, (j->>'Pairs Tested')::bigint < 400 * 6000 / 20 AS few_tested,
       j->'Pairs Passed' AS passed, (j->>'Actual Rows')::numeric::int8 AS rows
FROM nl_analyze('SELECT b.id, p.id FROM ix_band b LEFT JOIN ix_point p
                 ON p.x4 BETWEEN b.lo4 AND b.hi8 AND p.x4 <> 5000') j;
SET gpuops.enable_nestloop_index = off;
SELECT j->>'Index Cond' AS cond, (j->>'Pairs Tested')::bigint AS tested,
       j->'Pairs Passed' AS passed, (j->>'Actual Rows')::numeric::int8 AS rows
FROM nl_analyze('SELECT b.id, p.id FROM ix_band b LEFT JOIN ix_point p
                 ON p.x4 BETWEEN b.lo4 AND b.hi8 AND p.x4 <> 5000') j;
RESET gpuops.enable_nestloop_index;

-- no index where another clause could fail on a skipped pair (PostgreSQL
-- might evaluate it first), or where a bound reads a Param
SELECT l AS no_index FROM plan_lines('SELECT b.id, p.id FROM ix_band b LEFT JOIN ix_point p
  ON p.x4 BETWEEN b.lo4 AND b.hi8 AND p.x2 / (b.w + 1) > 0') l WHERE l LIKE '%Index Cond%';
SELECT l AS no_index FROM plan_lines('SELECT b.id, p.id FROM ix_band b LEFT JOIN ix_point p
  ON p.x4 BETWEEN b.lo4 AND b.hi8 AND p.x4::text < b.lo4::text') l WHERE l LIKE '%Index Cond%';
SELECT check_join_on('SELECT b.id AS bid, p.id AS pid FROM ix_band b LEFT JOIN ix_point p
                      ON p.x4 BETWEEN b.lo4 AND b.hi8 AND p.x2 / (b.w + 1) > 0', 'GpuNestLoop');
SET plan_cache_mode = force_generic_plan;
PREPARE ix_p(int) AS
SELECT count(*), sum(b.id), sum(p.id) FROM ix_band b LEFT JOIN ix_point p
  ON p.x4 BETWEEN b.lo4 AND b.lo4 + $1 AND p.w < b.w;
SELECT l AS no_index FROM plan_lines('EXECUTE ix_p(10)') l WHERE l LIKE '%Index Cond%';
EXECUTE ix_p(10);
EXECUTE ix_p(NULL);
SET gpuops.enabled = off;
EXECUTE ix_p(10);
EXECUTE ix_p(NULL);
SET gpuops.enabled = on;
DEALLOCATE ix_p;
RESET plan_cache_mode;

-- a bound that fails (integer overflow) makes every inner row a candidate,
-- so PostgreSQL's own error is raised, with gpuops on and off alike, or
-- none where PostgreSQL's clause order never reaches it; a NULL bound
-- leaves no candidate
CREATE TABLE ix_x (id int, lo int4, hi int4);
INSERT INTO ix_x VALUES (1, 10, 20), (2, 0, 2147483647), (3, NULL, 5), (4, 2147483000, 2147483647);
-- check_error(q) is nestloop's (it runs before): errors with gpuops on and off
CREATE FUNCTION ix_error(q text) RETURNS text
LANGUAGE sql AS $$
  SELECT format('indexed=%s %s', EXISTS (SELECT FROM plan_lines(q) l WHERE l LIKE '%Index Cond%'),
                check_error(q))
$$;
SELECT ix_error('SELECT count(*) FROM ix_x x LEFT JOIN ix_point p ON p.x4 BETWEEN x.lo AND x.hi + 1');
SELECT ix_error('SELECT count(*) FROM ix_x x LEFT JOIN ix_point p
                 ON p.x4 BETWEEN x.lo AND x.hi + 1 WHERE x.id <> 2');
SELECT ix_error('SELECT count(*) FROM ix_x x LEFT JOIN ix_point p ON p.x4 BETWEEN x.lo AND x.hi');
SELECT check_join_on('SELECT x.id AS xid, p.id AS pid FROM ix_x x LEFT JOIN ix_point p
                      ON p.x4 BETWEEN x.lo AND x.hi + 0', 'GpuNestLoop');

-- inner blocks: each block sorted on its own (device_memory_limit = 1MB
-- holds about 29000 rows of two columns)
CREATE TABLE ix_big AS
SELECT i AS id, CASE WHEN i % 97 = 0 THEN NULL ELSE (i::int8 * 104729 % 100000)::int4 END AS x
FROM generate_series(1, 70000) i;
ANALYZE ix_big;
SET gpuops.device_memory_limit = '1MB';
SELECT check_join_on('SELECT b.id AS bid, g.id AS gid FROM ix_band b LEFT JOIN ix_big g
                      ON g.x BETWEEN b.lo4 * 10 AND b.lo4 * 10 + 40', 'GpuNestLoop');
SELECT check_join_on('SELECT b.id FROM ix_band b WHERE NOT EXISTS (SELECT 1 FROM ix_big g
                      WHERE g.x BETWEEN b.lo4 * 10 AND b.lo4 * 10 + 15)', 'GpuNestLoop');
SELECT j->>'Index Cond' AS cond, (j->>'Inner Blocks')::int > 1 AS blocks
FROM nl_analyze('SELECT b.id, g.id FROM ix_band b LEFT JOIN ix_big g
                 ON g.x BETWEEN b.lo4 * 10 AND b.lo4 * 10 + 40') j;
-- device failures: the CPU backend sorts the current block the same way,
-- probes again and skips the pairs already returned
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_join_on('SELECT b.id AS bid, g.id AS gid FROM ix_band b LEFT JOIN ix_big g
                      ON g.x BETWEEN b.lo4 * 10 AND b.lo4 * 10 + 40', 'GpuNestLoop');
SELECT j ? 'Fallback' AS fell_back, j->>'Backend' AS backend, j->>'Index Cond' IS NOT NULL AS indexed
FROM nl_analyze('SELECT b.id, g.id FROM ix_band b LEFT JOIN ix_big g
                 ON g.x BETWEEN b.lo4 * 10 AND b.lo4 * 10 + 40') j;
SET gpuops.fault_injection = out_of_memory;
SELECT check_join_on('SELECT b.id FROM ix_band b WHERE NOT EXISTS (SELECT 1 FROM ix_big g
                      WHERE g.x BETWEEN b.lo4 * 10 AND b.lo4 * 10 + 15)', 'GpuNestLoop');
RESET gpuops.fault_injection;
SET gpuops.cpu_fallback = off;
RESET gpuops.device_memory_limit;

-- parallel: each process sorts the whole inner side and probes its share
SET gpuops.parallel_startup_cost = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT line FROM plan_lines('SELECT count(*) FROM ix_band b JOIN ix_big g
                             ON g.x BETWEEN b.lo4 * 10 AND b.lo4 * 10 + 40') line
WHERE line ~ 'Gather|GpuNestLoop|Index Cond|Parallel';
SELECT check_join_on('SELECT count(*) AS n, sum(b.id) AS sb, sum(g.id) AS sg FROM ix_band b JOIN ix_big g
                      ON g.x BETWEEN b.lo4 * 10 AND b.lo4 * 10 + 40', 'GpuNestLoop');
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;

DROP TABLE ix_band, ix_point, ix_x, ix_big;
DROP FUNCTION ix_error(text);
