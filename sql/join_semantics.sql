-- Join semantics across every gpuops join: GpuHashJoin, GpuMergeJoin and
-- GpuNestLoop; INNER, LEFT, RIGHT, FULL, SEMI (EXISTS, IN) and ANTI (NOT
-- EXISTS); join clauses the device decides alone, clauses only PostgreSQL
-- can check (timestamp against timestamptz, a function the evaluator does
-- not have), and both together; cross-type comparisons (int8 against int2,
-- timestamp against timestamptz).  A semi, anti or outer join may decide
-- an outer row only on pairs that passed every clause: issue 26's
-- GpuNestLoop let the device stop a row at its first pair that passed the
-- device's clauses, and a host clause then failing on that pair lost the
-- row's later matches.  Every result is compared with PostgreSQL's
-- (gpuops.enabled = off) as a multiset; each line also says whether the
-- node was planned.  Quals run in PostgreSQL's order, so a qual that can
-- fail raises an error exactly where PostgreSQL's plan would.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET timezone = 'UTC';

-- the issue's tables, with an equality key k added for the equi-joins:
-- NULLs in every column, duplicate keys, keys with no partner on either side
CREATE TABLE js_a AS
SELECT i AS id,
       CASE WHEN i % 3 = 0 THEN NULL ELSE (i % 50)::int8 END AS c1,
       timestamp '2020-01-01' + i * interval '1 hour' AS c5,
       CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 37)::int4 END AS k,
       md5(i::text) AS t
FROM generate_series(1, 2000) i;
CREATE TABLE js_b AS
SELECT i AS id,
       (i % 7)::int2 AS c1,
       timestamptz '2020-01-01' + i * interval '20 hour' AS c3,
       CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 41)::int8 END AS k,
       md5((i * 7)::text) AS t
FROM generate_series(1, 100) i;
ANALYZE js_a;
ANALYZE js_b;

-- the issue's two queries
SELECT check_join_on('SELECT count(*) FROM js_a a WHERE NOT EXISTS
                      (SELECT 1 FROM js_b b WHERE a.c5 <= b.c3 AND a.c1 <> b.c1)', 'GpuNestLoop');
SELECT check_join_on('SELECT count(*) FROM js_a a WHERE EXISTS
                      (SELECT 1 FROM js_b b WHERE a.c5 <= b.c3 AND a.c1 <> b.c1)', 'GpuNestLoop');

-- The matrix.  quals: the clauses beside the equality key (hash, merge)
-- or alone (nested loop): device (a.c1 <> b.c1, int8 against int2),
-- host (a.c5 <= b.c3, timestamp against timestamptz; md5() of a column),
-- mixed (both kinds).  Each join type is written as a user would.
CREATE TEMP TABLE js_quals (mode text, q text);
INSERT INTO js_quals VALUES
  ('device', 'a.c1 <> b.c1'),
  ('device2', 'a.id % 5 < b.id % 3'),
  ('host', 'a.c5 <= b.c3'),
  ('host2', 'md5(a.t) < md5(b.t)'),
  ('mixed', 'a.c5 <= b.c3 AND a.c1 <> b.c1'),
  ('mixed2', 'a.c1 <> b.c1 AND md5(a.t || b.t) > ''4'''),
  -- a clause that overflows int4 on most pairs, written before a cheaper
  -- one that rejects those pairs: PostgreSQL evaluates the cheaper first
  -- (createplan.c orders quals by cost) and raises no error; a node that
  -- kept the written order raised "integer out of range"
  ('fails', 'a.id * 100000000 + b.id > 0 AND b.id > a.id + 98');
CREATE TEMP TABLE js_types (jt text, sql text);
INSERT INTO js_types VALUES
  ('inner', 'SELECT a.id AS aid, b.id AS bid FROM js_a a JOIN js_b b ON %s'),
  ('left',  'SELECT a.id AS aid, b.id AS bid FROM js_a a LEFT JOIN js_b b ON %s'),
  ('right', 'SELECT a.id AS aid, b.id AS bid FROM js_b b RIGHT JOIN js_a a ON %s'),
  ('full',  'SELECT a.id AS aid, b.id AS bid FROM js_a a FULL JOIN js_b b ON %s'),
  ('semi',  'SELECT a.id FROM js_a a WHERE EXISTS (SELECT 1 FROM js_b b WHERE %s)'),
  ('anti',  'SELECT a.id FROM js_a a WHERE NOT EXISTS (SELECT 1 FROM js_b b WHERE %s)'),
  -- the inner side's rows that some outer row matches (the planner may
  -- put js_b on either side)
  ('semi_b', 'SELECT b.id FROM js_b b WHERE EXISTS (SELECT 1 FROM js_a a WHERE %s)'),
  ('anti_b', 'SELECT b.id FROM js_b b WHERE NOT EXISTS (SELECT 1 FROM js_a a WHERE %s)');

-- GpuHashJoin: the key a.k = b.k (int4 against int8) and the quals; PostgreSQL's
-- own hash and merge joins and GpuMergeJoin are off for the gpuops run.
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET gpuops.enable_mergejoin = off;
SET gpuops.enable_nestloop = off;
SELECT t.jt, m.mode,
       check_join_on(format(t.sql, 'a.k = b.k AND ' || m.q), 'GpuHashJoin') AS result
FROM js_types t, js_quals m ORDER BY t.jt, m.mode;
-- a key alone, and two keys (rechecked on the host: hashes can collide)
SELECT t.jt, check_join_on(format(t.sql, 'a.k = b.k'), 'GpuHashJoin') AS result
FROM js_types t ORDER BY t.jt;
SELECT t.jt, check_join_on(format(t.sql, 'a.k = b.k AND a.c1 = b.c1'), 'GpuHashJoin') AS result
FROM js_types t ORDER BY t.jt;

-- GpuMergeJoin: the same with PostgreSQL's hash joins and GpuHashJoin off.
SET gpuops.enable_mergejoin = on;
SET gpuops.enable_hashjoin = off;
SET enable_mergejoin = on;
SELECT t.jt, m.mode,
       check_join_on(format(t.sql, 'a.k = b.k AND ' || m.q), 'GpuMergeJoin') AS result
FROM js_types t, js_quals m ORDER BY t.jt, m.mode;
SELECT t.jt, check_join_on(format(t.sql, 'a.k = b.k'), 'GpuMergeJoin') AS result
FROM js_types t ORDER BY t.jt;

-- GpuNestLoop: the quals alone (no equality).  PostgreSQL has no FULL
-- join without a hashable or mergeable clause, so FULL is left out.
SET gpuops.enable_mergejoin = off;
SET enable_mergejoin = off;
SET gpuops.enable_nestloop = on;
SELECT t.jt, m.mode,
       check_join_on(format(t.sql, m.q), 'GpuNestLoop') AS result
FROM js_types t, js_quals m WHERE t.jt <> 'full' AND m.mode NOT LIKE 'host%' ORDER BY t.jt, m.mode;
-- with no clause the device can run, PostgreSQL's plan stays
SELECT check_join_on(format(t.sql, 'a.c5 <= b.c3'), 'GpuNestLoop') AS result
FROM js_types t WHERE t.jt = 'semi';
-- the indexed form (a range on one inner column) with a host clause beside it
SELECT t.jt,
       check_join_on(format(t.sql, 'b.id BETWEEN a.id % 100 AND a.id % 100 + 3 AND md5(a.t) < md5(b.t)'),
                     'GpuNestLoop') AS result
FROM js_types t WHERE t.jt <> 'full' ORDER BY t.jt;
-- inner blocks: an inner side (40000 rows) larger than one block (29127
-- rows of two columns under 1MB, nestloop_blocks), so a row's match may
-- come from a later block than a pair that failed the host clause
SET gpuops.device_memory_limit = '1MB';
CREATE TABLE js_big AS SELECT b.*, g FROM js_b b, generate_series(1, 400) g;
ANALYZE js_big;
SELECT t.jt, check_join_on(format(replace(replace(t.sql, 'js_b', 'js_big'), 'js_a', '(SELECT * FROM js_a WHERE id <= 300)'),
                                  'a.c5 <= b.c3 AND a.c1 <> b.c1 AND (a.id + b.g) % 400 = 0'),
                           'GpuNestLoop') AS result
FROM js_types t WHERE t.jt IN ('semi', 'anti', 'left') ORDER BY t.jt;
-- GpuHashJoin with the build side partitioned (grace) and built in chunks
-- (each key in 400 rows): a row's match may be in a later chunk
SET gpuops.enable_hashjoin = on;
SET gpuops.enable_nestloop = off;
SELECT t.jt, m.mode,
       check_join_on(format(replace(replace(t.sql, 'js_b', 'js_big'), 'js_a', '(SELECT * FROM js_a WHERE id <= 300)'),
                            'a.k = b.k AND ' || m.q), 'GpuHashJoin') AS result
FROM js_types t, js_quals m
WHERE t.jt IN ('semi', 'anti', 'semi_b', 'anti_b') AND m.mode IN ('device', 'host', 'mixed')
ORDER BY t.jt, m.mode;
RESET gpuops.device_memory_limit;
-- parallel plans: GpuHashJoin in each worker (shared build or not)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT t.jt, m.mode,
       check_join_on(format(replace(t.sql, 'js_b', 'js_big'), 'a.k = b.k AND ' || m.q), 'GpuHashJoin') AS result
FROM js_types t, js_quals m
WHERE t.jt IN ('semi', 'anti') AND m.mode IN ('device', 'host', 'mixed')
ORDER BY t.jt, m.mode;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET gpuops.enable_mergejoin;
RESET gpuops.enable_hashjoin;
RESET gpuops.enable_nestloop;
DROP TABLE js_types, js_quals, js_big;
