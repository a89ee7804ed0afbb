-- GpuMergeJoin: merge-joinable equi-joins sorted and merged on the device.
-- Every result is compared with PostgreSQL's (gpuops.enabled = off) as a
-- multiset, EXCEPT ALL both ways; where the query orders by the join key,
-- the order too.  PostgreSQL offers merge clauses only with
-- enable_mergejoin on (or a full join), so it stays on; PostgreSQL's hash
-- join and GpuHashJoin are switched off for the gpuops runs.
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests GpuMergeJoin.
SET gpuops.enable_query = off;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET enable_hashjoin = off;
SET gpuops.enable_hashjoin = off;

-- keys of every supported type with NULLs, duplicates on both sides
-- (many-to-many), a key on 2-3% of the rows of each side (skew: 180000
-- pairs), NaN, -0 and infinities
CREATE TABLE mj_a AS
SELECT i AS id,
       CASE WHEN i % 53 = 0 THEN NULL WHEN i % 100 < 3 THEN 7 ELSE (i * 7919) % 4000 END::int4 AS k4,
       CASE WHEN i % 59 = 0 THEN NULL WHEN i % 997 = 0 THEN 9223372036854775807
            WHEN i % 991 = 0 THEN -9223372036854775808 ELSE (i % 3001) - 1500 END::int8 AS k8,
       (i % 2011 - 1005)::int2 AS k2,
       CASE WHEN i % 61 = 0 THEN NULL WHEN i % 667 = 0 THEN 'NaN' WHEN i % 711 = 0 THEN '-0'
            WHEN i % 733 = 0 THEN '-Infinity' ELSE (i % 5000) / 4.0 END::float8 AS f8,
       CASE WHEN i % 79 = 0 THEN NULL WHEN i % 833 = 0 THEN 'NaN' ELSE (i % 3000) / 2.0 END::float4 AS f4,
       CASE WHEN i % 89 = 0 THEN NULL ELSE date '2024-01-01' + (i % 7000) END AS d,
       CASE WHEN i % 97 = 0 THEN NULL ELSE timestamp '2024-01-01' + (i % 9000) * interval '1 hour' END AS ts,
       CASE WHEN i % 101 = 0 THEN NULL ELSE timestamptz '2024-01-01 00:00+00' + (i % 8000) * interval '1 hour' END AS tz,
       CASE WHEN i % 103 = 0 THEN NULL ELSE time '00:00' + (i % 14400) * interval '6 seconds' END AS tm,
       CASE WHEN i % 107 = 0 THEN NULL WHEN i % 500 = 0 THEN i % 3 = 0 END AS b,
       md5(i::text) AS pad
FROM generate_series(1, 20000) i;
CREATE TABLE mj_b AS
SELECT i AS id,
       CASE WHEN i % 43 = 0 THEN NULL WHEN i % 100 < 2 THEN 7 ELSE (i * 104729) % 5000 END::int4 AS k4,
       CASE WHEN i % 47 = 0 THEN NULL WHEN i % 1999 = 0 THEN 9223372036854775807
            WHEN i % 1993 = 0 THEN -9223372036854775808 ELSE (i % 4001) - 2000 END::int8 AS k8,
       (i % 3001 - 1500)::int2 AS k2,
       CASE WHEN i % 41 = 0 THEN NULL WHEN i % 370 = 0 THEN 'NaN' WHEN i % 311 = 0 THEN '0'
            WHEN i % 293 = 0 THEN '-Infinity' ELSE (i % 7000) / 4.0 END::float8 AS f8,
       CASE WHEN i % 23 = 0 THEN NULL WHEN i % 191 = 0 THEN 'NaN' ELSE (i % 2000) / 2.0 END::float4 AS f4,
       CASE WHEN i % 17 = 0 THEN NULL ELSE date '2024-03-01' + (i % 5000) END AS d,
       CASE WHEN i % 13 = 0 THEN NULL ELSE timestamp '2024-01-10' + (i % 7000) * interval '1 hour' END AS ts,
       CASE WHEN i % 11 = 0 THEN NULL ELSE timestamptz '2024-01-05 00:00+00' + (i % 6000) * interval '1 hour' END AS tz,
       CASE WHEN i % 9 = 0 THEN NULL ELSE time '06:00' + (i % 9000) * interval '6 seconds' END AS tm,
       CASE WHEN i % 7 = 0 THEN NULL WHEN i % 300 = 0 THEN i % 4 = 0 END AS b,
       repeat(chr(65 + i % 26), 1 + i % 30) AS label
FROM generate_series(1, 15000) i;
ANALYZE mj_a;
ANALYZE mj_b;

EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM mj_a a JOIN mj_b b ON a.k4 = b.k4 AND a.k8 = b.k8 ORDER BY a.k4;
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM mj_a a FULL JOIN mj_b b ON a.d = b.d AND a.id < b.id;

-- every key type, every join type
SELECT k, j, check_join_on(format('SELECT a.id AS aid, b.id AS bid FROM mj_a a %s JOIN mj_b b ON %s', j, k),
                           'GpuMergeJoin')
FROM (VALUES ('a.k4 = b.k4'), ('a.k8 = b.k8'), ('a.k2 = b.k2'), ('a.k4 = b.k8'), ('a.k2 = b.k4'),
             ('a.f8 = b.f8'), ('a.f4 = b.f4'), ('a.f4 = b.f8'), ('a.d = b.d'), ('a.ts = b.ts'),
             ('a.tz = b.tz'), ('a.tm = b.tm'), ('a.b = b.b')) keys(k),
     (VALUES ('INNER'), ('LEFT'), ('RIGHT'), ('FULL')) joins(j)
WHERE j = 'INNER' OR k IN ('a.k4 = b.k4', 'a.f8 = b.f8', 'a.d = b.d', 'a.b = b.b', 'a.k2 = b.k4')
ORDER BY k, j;
SELECT check_join_on('SELECT a.id FROM mj_a a WHERE EXISTS (SELECT 1 FROM mj_b b WHERE b.k8 = a.k8)', 'GpuMergeJoin');
SELECT check_join_on('SELECT a.id FROM mj_a a WHERE NOT EXISTS (SELECT 1 FROM mj_b b WHERE b.k8 = a.k8)', 'GpuMergeJoin');
SELECT check_join_on('SELECT a.id FROM mj_a a WHERE NOT EXISTS (SELECT 1 FROM mj_b b WHERE b.f8 = a.f8 AND b.id > a.id)', 'GpuMergeJoin');
-- several keys, other join clauses, filters on the joined rows
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid FROM mj_a a JOIN mj_b b
                      ON a.k4 = b.k4 AND a.d = b.d AND a.f4 = b.f4', 'GpuMergeJoin');
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid FROM mj_a a FULL JOIN mj_b b
                      ON a.k2 = b.k2 AND a.ts = b.ts AND a.id % 7 < b.id % 5', 'GpuMergeJoin');
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid, b.label FROM mj_a a LEFT JOIN mj_b b
                      ON a.k4 = b.k4 AND b.label LIKE ''C%''
                      WHERE b.id IS NULL OR a.pad > b.label', 'GpuMergeJoin');
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid FROM mj_a a RIGHT JOIN mj_b b
                      ON a.k8 = b.k8 AND a.tm = b.tm', 'GpuMergeJoin');
-- other join clauses run on the device where they compile: errors stay
-- PostgreSQL's own, and only the pairs that pass reach PostgreSQL
SELECT sql_error('SELECT a.id, b.id FROM mj_a a JOIN mj_b b ON a.k4 = b.k4 AND a.id / (b.id % 2) > 0');
SET gpuops.enabled = off;
SELECT sql_error('SELECT a.id, b.id FROM mj_a a JOIN mj_b b ON a.k4 = b.k4 AND a.id / (b.id % 2) > 0');
SET gpuops.enabled = on;
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid FROM mj_a a JOIN mj_b b
                      ON a.k4 = b.k4 AND (b.id % 2 = 0 OR a.id / (b.id % 2) > 0)', 'GpuMergeJoin');
SELECT (j->>'Rows Removed by Join Filter')::int8 > 0 AS removed,
       (j->>'Key Pairs')::int8 - (j->>'Rows Removed by Join Filter')::int8 = (j->>'Actual Rows')::numeric::int8 AS pairs_add_up
FROM (SELECT jsonb_path_query_first(e, 'strict $.**? (@."Custom Plan Provider" == "GpuMergeJoin")') AS j
      FROM (SELECT explain_json('SELECT a.id, b.id FROM mj_a a JOIN mj_b b ON a.k4 = b.k4 AND a.id < b.id') AS e) x) y;
-- many-to-many on the skewed key, through aggregates
SELECT check_join_on('SELECT count(*) AS n, sum(a.id::int8 * 3 + b.id) AS s FROM mj_a a JOIN mj_b b ON a.k4 = b.k4',
                     'GpuMergeJoin');
-- no matches at all; empty sides
CREATE TABLE mj_none AS SELECT id, k4 + 100000 AS k4 FROM mj_b;
ANALYZE mj_none;
SELECT j, check_join_on(format('SELECT a.id AS aid, b.id AS bid FROM mj_a a %s JOIN mj_none b ON a.k4 = b.k4', j),
                        'GpuMergeJoin')
FROM (VALUES ('INNER'), ('LEFT'), ('RIGHT'), ('FULL')) joins(j);
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid FROM mj_a a FULL JOIN (SELECT * FROM mj_b WHERE id < 0) b
                      ON a.k4 = b.k4', 'GpuMergeJoin');
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid FROM (SELECT * FROM mj_a WHERE id < 0) a LEFT JOIN mj_b b
                      ON a.k4 = b.k4', 'GpuMergeJoin');

-- the output is in key order: no Sort above the join, the same order as PostgreSQL's
SELECT line FROM plan_lines('SELECT a.k4 AS k, a.id, b.id FROM mj_a a JOIN mj_b b ON a.k4 = b.k4 ORDER BY a.k4') line
WHERE line ~ 'Sort|GpuMergeJoin';
SELECT check_sort('SELECT a.k4 AS k, a.id AS aid, b.id AS bid FROM mj_a a JOIN mj_b b ON a.k4 = b.k4 ORDER BY a.k4');
SELECT check_sort('SELECT a.f8 AS k, a.id AS aid FROM mj_a a LEFT JOIN mj_b b ON a.f8 = b.f8 ORDER BY a.f8');
SELECT check_sort_keys('SELECT a.k4 AS k1, a.k2 AS k2, a.id AS aid, b.id AS bid FROM mj_a a JOIN mj_b b
                        ON a.k4 = b.k4 AND a.k2 = b.k2 ORDER BY a.k4, a.k2', 2);
-- a window of 4.41M pairs (one key on 2100 rows of each side): its columns
-- are gathered into pair order 4M pairs at a time
CREATE TABLE mj_dup AS SELECT i AS id, 1 AS k FROM generate_series(1, 2100) i;
ANALYZE mj_dup;
SELECT check_join_on('SELECT count(*) AS n, sum(hashint8(a.id * 100000 + b.id)::int8) AS h, max(b.id) AS m
                      FROM mj_dup a JOIN mj_dup b ON a.k = b.k', 'GpuMergeJoin');
SELECT (j->>'Key Pairs')::int8 AS pairs, (j->>'Extra Pair Windows') IS NULL AS one_window
FROM (SELECT jsonb_path_query_first(explain_json('SELECT sum(a.id + b.id) FROM mj_dup a JOIN mj_dup b ON a.k = b.k'),
                                    'strict $.**? (@."Custom Plan Provider" == "GpuMergeJoin")') AS j) x;
-- three tables: merge joins up the tree on the same key
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid, c.id AS cid FROM mj_a a JOIN mj_b b ON a.k8 = b.k8
                      JOIN mj_b c ON c.k8 = a.k8 WHERE c.id < 2000', 'GpuMergeJoin');

-- rescans: a correlated subquery's merge join, with a new parameter each time
SELECT check_join_on('SELECT t.x, (SELECT count(*) FROM mj_a a JOIN mj_b b ON a.k2 = b.k2 WHERE a.id < t.x) AS n
                      FROM generate_series(1000, 20000, 4750) t(x)', 'GpuMergeJoin');

-- over the device budget (1 MB holds 8192 rows of one key): the CPU
-- backend, whose windows of pairs are the budget's too
SET gpuops.device_memory_limit = '1MB';
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid FROM mj_a a FULL JOIN mj_b b ON a.k4 = b.k4', 'GpuMergeJoin');
SELECT (j->>'Key Pairs')::int8 > 100000 AS many_pairs, (j->>'Extra Pair Windows')::int > 0 AS windowed
FROM (SELECT jsonb_path_query_first(e, 'strict $.**? (@."Custom Plan Provider" == "GpuMergeJoin")') AS j
      FROM (SELECT explain_json('SELECT a.id, b.id FROM mj_a a JOIN mj_b b ON a.k4 = b.k4') AS e) x) y;
RESET gpuops.device_memory_limit;

-- device failures: the CPU backend redoes the join and the walk resumes;
-- without a fallback the error carries its SQLSTATE
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid FROM mj_a a FULL JOIN mj_b b ON a.k8 = b.k8', 'GpuMergeJoin');
SET gpuops.fault_injection = out_of_memory;
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid FROM mj_a a LEFT JOIN mj_b b ON a.d = b.d', 'GpuMergeJoin');
SET gpuops.cpu_fallback = off;
SELECT sql_error('SELECT a.id, b.id FROM mj_a a JOIN mj_b b ON a.k8 = b.k8');
RESET gpuops.fault_injection;

-- parallel: each process sorts its share of the outer side and the whole
-- inner side; Gather Merge keeps the key order.  A high tuple cost makes
-- staging a share of the outer side worth the workers; PostgreSQL's own
-- sorts (for its merge join) are off.
SET gpuops.tuple_cost = 1;
SET enable_sort = off;
SET gpuops.parallel_startup_cost = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
-- (sides staged by workers for the join in the leader: below)
SET gpuops.enable_parallel_staging = off;
SELECT line FROM plan_lines('SELECT a.k8 AS k, a.id, b.id FROM mj_a a JOIN mj_b b ON a.k8 = b.k8 ORDER BY a.k8') line
WHERE line ~ 'Gather|GpuMergeJoin|Sort|Parallel';
SELECT check_sort('SELECT a.k8 AS k, a.id AS aid, b.id AS bid FROM mj_a a JOIN mj_b b ON a.k8 = b.k8 ORDER BY a.k8');
SELECT check_join_on('SELECT a.id AS aid, b.id AS bid FROM mj_a a LEFT JOIN mj_b b ON a.d = b.d AND a.id < b.id',
                     'GpuMergeJoin');
SELECT check_join_on('SELECT a.id FROM mj_a a WHERE NOT EXISTS (SELECT 1 FROM mj_b b WHERE b.k8 = a.k8)', 'GpuMergeJoin');
SET gpuops.tuple_cost = 0;
RESET enable_sort;
RESET gpuops.parallel_startup_cost;
RESET gpuops.enable_parallel_staging;
RESET parallel_tuple_cost;

-- count(*) of an inner join on merge keys alone: one GpuMergeJoin at the
-- grouping step counts the key pairs and returns the count (EXPLAIN
-- "Aggregate"); no joined row is made.  Expressions over the count, HAVING,
-- zero and empty sides, three tables.  Not counted: other aggregates, join
-- clauses beyond the keys, outer joins, count(column), GROUP BY.
SET max_parallel_workers_per_gather = 0;
-- mj_counts(q): whether q's GpuMergeJoin counts
CREATE FUNCTION mj_counts(q text) RETURNS bool
LANGUAGE sql AS $$
  SELECT jsonb_path_exists(explain_json(q),
    'strict $.**? (@."Custom Plan Provider" == "GpuMergeJoin" && exists(@."Aggregate"))')
$$;
CREATE TABLE mj_count_q (n int, q text);
INSERT INTO mj_count_q VALUES
  (1, 'SELECT count(*) AS n FROM mj_a a JOIN mj_b b ON a.k4 = b.k4'),
  (2, 'SELECT count(*) AS n, count(*) * 2 - 1 AS m FROM mj_a a JOIN mj_b b ON a.k4 = b.k4 AND a.d = b.d'),
  (3, 'SELECT count(*) AS n FROM mj_a a JOIN mj_b b ON a.f8 = b.f8 HAVING count(*) > 10'),
  (4, 'SELECT count(*) AS n FROM mj_a a JOIN mj_b b ON a.f8 = b.f8 HAVING count(*) < 10'),
  (5, 'SELECT count(*) AS n FROM mj_a a JOIN mj_none b ON a.k4 = b.k4'),
  (6, 'SELECT count(*) AS n FROM (SELECT * FROM mj_a WHERE id < 0) a JOIN mj_b b ON a.k4 = b.k4'),
  (7, 'SELECT count(*) AS n FROM mj_a a JOIN mj_b b ON a.k8 = b.k8 JOIN mj_b c ON c.k8 = a.k8 WHERE c.id < 2000'),
  (8, 'SELECT count(*) AS n FROM mj_a a JOIN mj_b b ON a.ts = b.ts WHERE a.id % 3 = 0'),
  (9, 'SELECT count(*) AS n, sum(a.id) AS s FROM mj_a a JOIN mj_b b ON a.k4 = b.k4'),
  (10, 'SELECT count(*) AS n FROM mj_a a JOIN mj_b b ON a.k4 = b.k4 AND a.id < b.id'),
  (11, 'SELECT count(*) AS n FROM mj_a a LEFT JOIN mj_b b ON a.k4 = b.k4'),
  (12, 'SELECT count(b.id) AS n FROM mj_a a JOIN mj_b b ON a.k4 = b.k4'),
  (13, 'SELECT a.k2, count(*) AS n FROM mj_a a JOIN mj_b b ON a.k2 = b.k2 GROUP BY a.k2');
SELECT n, mj_counts(q) AS counts, check_join_on(q, 'GpuMergeJoin') FROM mj_count_q ORDER BY n;
SELECT (j->>'Key Pairs')::int8 AS pairs, (j->'Plans'->0->>'Actual Rows')::numeric::int8 AS outer_rows, (j->>'Actual Rows')::numeric::int8 AS returned
FROM (SELECT jsonb_path_query_first(explain_json(q), 'strict $.**? (@."Custom Plan Provider" == "GpuMergeJoin")') AS j
      FROM mj_count_q WHERE n = 1) x;
-- a new count at each rescan
SELECT check_join_on('SELECT t.x, (SELECT count(*) FROM mj_a a JOIN mj_b b ON a.k8 = b.k8 WHERE a.id < t.x) AS n
                      FROM generate_series(0, 20000, 5000) t(x)', 'GpuMergeJoin');
-- without merge joins PostgreSQL makes no merge clauses: no GpuMergeJoin
SET enable_mergejoin = off;
SELECT uses_node('SELECT count(*) FROM mj_a a JOIN mj_b b ON a.k4 = b.k4', 'GpuMergeJoin') AS without_mergejoin;
RESET enable_mergejoin;

-- staged sides: the workers and the leader read each side whose relation
-- has a partial path into shared memory (Gather -> GpuStage), and the join
-- runs in the leader over their chunks: every join type, RIGHT and FULL
-- included, text columns carried along, the key order, LIMIT above,
-- counting, and rescans (one side staged: the other reads a parameter,
-- which keeps it out of parallel plans)
SET gpuops.host_memory_limit = '1GB';
SET max_parallel_workers_per_gather = 2;
-- check_staged_join(q): check_join_on, and whether a GpuStage read a side
CREATE FUNCTION check_staged_join(q text) RETURNS text
LANGUAGE sql AS $$ SELECT check_join_on(q, 'GpuMergeJoin') || ' staged=' || uses_node(q, 'GpuStage') $$;
SELECT line FROM plan_lines('SELECT a.id, b.id FROM mj_a a FULL JOIN mj_b b ON a.k4 = b.k4') line
WHERE line ~ 'Gather|GpuMergeJoin|GpuStage';
SELECT j, check_staged_join(format('SELECT a.id AS aid, b.id AS bid, b.label FROM mj_a a %s JOIN mj_b b ON %s', j, k))
FROM (VALUES ('INNER', 'a.k4 = b.k4'), ('LEFT', 'a.f8 = b.f8'), ('RIGHT', 'a.d = b.d AND a.k2 = b.k2'),
             ('FULL', 'a.k8 = b.k8 AND a.id % 7 < b.id % 5')) joins(j, k);
SELECT check_staged_join('SELECT a.id FROM mj_a a WHERE EXISTS (SELECT 1 FROM mj_b b WHERE b.ts = a.ts)');
SELECT check_staged_join('SELECT a.id FROM mj_a a WHERE NOT EXISTS (SELECT 1 FROM mj_b b WHERE b.k8 = a.k8)');
SELECT check_sort('SELECT a.k8 AS k, a.id AS aid, b.id AS bid FROM mj_a a JOIN mj_b b ON a.k8 = b.k8 ORDER BY a.k8')
       || ' staged=' || uses_node('SELECT a.k8 FROM mj_a a JOIN mj_b b ON a.k8 = b.k8 ORDER BY a.k8', 'GpuStage');
SELECT check_staged_join('SELECT * FROM (SELECT a.k4, a.id AS aid, b.id AS bid FROM mj_a a JOIN mj_b b ON a.k4 = b.k4
                          ORDER BY a.k4, a.id, b.id LIMIT 100) x');
SELECT n, mj_counts(q) AS counts, check_staged_join(q) FROM mj_count_q WHERE n IN (1, 2, 3, 5, 7, 8) ORDER BY n;
SELECT check_staged_join('SELECT t.x, (SELECT max(a.id) FROM mj_a a JOIN mj_b b ON a.k2 = b.k2 WHERE a.id < t.x) AS m
                          FROM generate_series(0, 20000, 5000) t(x)');
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_staged_join('SELECT a.id AS aid, b.id AS bid FROM mj_a a LEFT JOIN mj_b b ON a.k4 = b.k4');
SELECT n, check_staged_join(q) FROM mj_count_q WHERE n = 1;
SET gpuops.cpu_fallback = off;
RESET gpuops.fault_injection;
RESET gpuops.host_memory_limit;
RESET parallel_setup_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- keys the device cannot merge keep PostgreSQL's plans
SELECT uses_node('SELECT a.id FROM mj_a a JOIN mj_b b ON a.pad = b.label', 'GpuMergeJoin') AS text_key;
SELECT uses_node('SELECT a.id FROM mj_a a JOIN mj_b b ON a.d = b.ts', 'GpuMergeJoin') AS date_timestamp;
