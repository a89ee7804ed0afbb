-- GpuHashJoin: inner, left, right, full, semi and anti joins on hashable keys.  Every result is compared with
-- PostgreSQL's (gpuops.enabled = off) as a multiset, EXCEPT ALL both ways;
-- joins with very many rows are compared through aggregates.
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests GpuHashJoin.
SET gpuops.enable_query = off;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
-- PostgreSQL's own hash and merge joins are cheaper than GpuHashJoin under
-- its cost model for many of these small joins; with gpuops on, leave it
-- only the nested loop, so that the GPU plan is taken wherever possible.
-- The oracle (gpuops off) runs with PostgreSQL's default join methods.
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET gpuops.enable_mergejoin = off;

-- probe side: 200000 rows; keys of every supported type with NULLs,
-- duplicates and extremes; s is skewed (half the rows have s = 7)
CREATE TABLE hj_outer AS
SELECT i AS id,
       CASE WHEN i % 97 = 0 THEN NULL ELSE (i % 5003)::int4 END AS k4,
       CASE WHEN i % 89 = 0 THEN NULL WHEN i % 1009 = 0 THEN 9223372036854775807
            WHEN i % 1013 = 0 THEN -9223372036854775808 ELSE (i % 7001 - 3500)::int8 END AS k8,
       (i % 301 - 150)::int2 AS k2,
       CASE WHEN i % 83 = 0 THEN NULL ELSE date '2020-01-01' + (i % 1500) END AS d,
       CASE WHEN i % 2 = 0 THEN 7 ELSE i END AS s,
       md5(i::text) AS pad
FROM generate_series(1, 200000) i;
-- build side: 30000 rows, keys overlapping the probe side's partly
CREATE TABLE hj_inner AS
SELECT i AS id,
       CASE WHEN i % 53 = 0 THEN NULL ELSE (i * 7 % 8000)::int4 END AS k4,
       CASE WHEN i % 59 = 0 THEN NULL WHEN i % 3001 = 0 THEN 9223372036854775807
            WHEN i % 3011 = 0 THEN -9223372036854775808 ELSE (i % 9001 - 4500)::int8 END AS k8,
       (i % 211 - 105)::int2 AS k2,
       CASE WHEN i % 61 = 0 THEN NULL ELSE date '2019-06-01' + (i % 2000) END AS d,
       CASE WHEN i % 1000 = 0 THEN 7 ELSE -i END AS s,
       repeat(chr(65 + i % 26), 1 + i % 40) AS label
FROM generate_series(1, 30000) i;
ANALYZE hj_outer;
ANALYZE hj_inner;

-- one key per type, and across integer types
SELECT check_join('SELECT o.id AS oid, i.id AS iid, o.pad, i.label FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k8 = i.k8');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k2 = i.k2 WHERE i.id < 500');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.d = i.d');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k8 = i.k4');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k8');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k2 = i.k8 WHERE o.id % 10 = 0');
-- several keys; extra join clauses that are not equalities
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4 AND o.k2 = i.k2');
SELECT check_join('SELECT o.id AS oid, i.id AS iid, o.k8 FROM hj_outer o JOIN hj_inner i
                   ON o.k4 = i.k4 AND o.d = i.d AND o.k8 = i.k8');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i
                   ON o.k4 = i.k4 AND o.id < i.id * 10 AND (o.k8 > 0 OR i.label LIKE ''A%'')');
-- the same join written with WHERE, and with a filter on one side
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o, hj_inner i
                   WHERE o.k4 = i.k4 AND i.k2 > 0 AND o.pad > ''8''');

-- many-to-many and skew, compared through aggregates: half the probe rows
-- have s = 7, which 30 build rows share (3 million pairs)
SELECT check_join('SELECT count(*) AS n, sum(o.id) AS so, sum(i.id) AS si, count(DISTINCT i.id) AS di
                   FROM hj_outer o JOIN hj_inner i ON o.s = i.s');
-- every row on both sides with one key value
CREATE TABLE hj_one_a AS SELECT i AS id, 1 AS k FROM generate_series(1, 3000) i;
CREATE TABLE hj_one_b AS SELECT i AS id, 1::int8 AS k FROM generate_series(1, 2000) i;
ANALYZE hj_one_a;
ANALYZE hj_one_b;
SELECT check_join('SELECT count(*) AS n, sum(a.id * 3 + b.id) AS s FROM hj_one_a a JOIN hj_one_b b ON a.k = b.k');

-- empty inputs on either side, and only NULL keys
CREATE TABLE hj_empty (id int, k4 int4);
CREATE TABLE hj_nulls AS SELECT i AS id, NULL::int4 AS k4 FROM generate_series(1, 1000) i;
ANALYZE hj_empty;
ANALYZE hj_nulls;
SELECT check_join('SELECT o.id AS oid, e.id AS eid FROM hj_outer o JOIN hj_empty e ON o.k4 = e.k4');
SELECT check_join('SELECT e.id AS eid, i.id AS iid FROM hj_empty e JOIN hj_inner i ON e.k4 = i.k4');
SELECT check_join('SELECT o.id AS oid, n.id AS nid FROM hj_outer o JOIN hj_nulls n ON o.k4 = n.k4');

-- three tables: a GpuHashJoin above another
SELECT check_join('SELECT o.id AS oid, i.id AS iid, a.id AS aid FROM hj_outer o
                   JOIN hj_inner i ON o.k4 = i.k4 JOIN hj_one_a a ON a.id = i.k4');
SELECT count(*) >= 2 AS two_gpu_joins FROM (
  SELECT * FROM regexp_matches(
    (SELECT string_agg(l, E'\n') FROM (SELECT * FROM plan_lines($q$
      SELECT o.id, i.id, a.id FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4
      JOIN hj_one_a a ON a.id = i.k4$q$)) p(l)), 'Custom Scan \(GpuHashJoin\)', 'g')) m;

-- a join inside a subquery run again for each outer row (rescans with new
-- parameters)
SELECT check_join('SELECT x.i, (SELECT count(*) FROM hj_outer o JOIN hj_inner n ON o.k4 = n.k4
                                 WHERE n.k2 = x.i) AS c
                   FROM generate_series(-3, 3) x(i)');

-- keys of other types go to the device as their type's hash (equal values
-- hash equal: numeric 1 = 1.00, text under its collation) and every pair is
-- re-checked: text (with long TOAST-ed values), numeric at several scales,
-- uuid, timestamptz, bool, and a text + integer pair of keys
CREATE TABLE hj_t1 AS
SELECT i AS id,
       CASE WHEN i % 31 = 0 THEN NULL WHEN i % 101 = 0 THEN repeat('long', 2000) || (i % 7)
            ELSE 'key-' || (i % 3001) END AS t,
       CASE WHEN i % 37 = 0 THEN NULL ELSE ((i % 900)::numeric / 4) END AS n,
       CASE WHEN i % 41 = 0 THEN NULL ELSE md5((i % 2500)::text)::uuid END AS u,
       CASE WHEN i % 43 = 0 THEN NULL ELSE timestamptz '2024-01-01 00:00+00' + (i % 1700) * interval '1 hour' END AS ts,
       CASE WHEN i % 47 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
       i % 50 AS g
FROM generate_series(1, 50000) i;
CREATE TABLE hj_t2 AS
SELECT i AS id,
       CASE WHEN i % 29 = 0 THEN NULL WHEN i % 97 = 0 THEN repeat('long', 2000) || (i % 5)
            ELSE 'key-' || (i % 4001) END AS t,
       CASE WHEN i % 23 = 0 THEN NULL ELSE ((i % 700)::numeric(12,4) / 2) END AS n,
       CASE WHEN i % 19 = 0 THEN NULL ELSE md5((i % 3100)::text)::uuid END AS u,
       CASE WHEN i % 17 = 0 THEN NULL ELSE timestamptz '2024-01-01 00:00+00' + (i % 2300) * interval '30 minutes' END AS ts,
       CASE WHEN i % 13 = 0 THEN NULL ELSE i % 2 = 0 END AS b,
       i % 70 AS g
FROM generate_series(1, 8000) i;
ANALYZE hj_t1;
ANALYZE hj_t2;
SELECT check_join('SELECT a.id AS aid, b.id AS bid, length(a.t) AS len FROM hj_t1 a JOIN hj_t2 b ON a.t = b.t');
SELECT check_join('SELECT a.id AS aid, b.id AS bid, a.n FROM hj_t1 a JOIN hj_t2 b ON a.n = b.n');
SELECT check_join('SELECT a.id AS aid, b.id AS bid FROM hj_t1 a JOIN hj_t2 b ON a.u = b.u');
SELECT check_join('SELECT a.id AS aid, b.id AS bid FROM hj_t1 a JOIN hj_t2 b ON a.ts = b.ts');
SELECT check_join('SELECT count(*) AS n, sum(a.id) AS sa, sum(b.id) AS sb FROM hj_t1 a JOIN hj_t2 b ON a.b = b.b
                   WHERE a.id < 1000 AND b.id < 2000');
SELECT check_join('SELECT a.id AS aid, b.id AS bid FROM hj_t1 a JOIN hj_t2 b ON a.t = b.t AND a.g = b.g');
SELECT check_join('SELECT a.id AS aid, b.id AS bid FROM hj_t1 a LEFT JOIN hj_t2 b ON a.n = b.n AND a.t = b.t');
SELECT check_join('SELECT a.id AS aid FROM hj_t1 a WHERE NOT EXISTS (SELECT 1 FROM hj_t2 b WHERE b.u = a.u)');
SELECT check_join('SELECT a.id AS aid FROM hj_t1 a WHERE a.t IN (SELECT t FROM hj_t2 WHERE id % 3 = 0)');
SELECT line FROM plan_lines('SELECT a.id FROM hj_t1 a JOIN hj_t2 b ON a.n = b.n') line
WHERE line LIKE '%Hash Keys%' OR line LIKE '%Join Filter%';

-- LEFT, SEMI (EXISTS, IN) and ANTI (NOT EXISTS) joins, with NULL keys on
-- either side, join clauses beyond the keys (they decide matches), filters
-- above the join (they apply to NULL-extended rows too), and empty sides
SELECT check_join('SELECT o.id AS oid, i.id AS iid, i.label FROM hj_outer o LEFT JOIN hj_inner i ON o.k4 = i.k4');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o LEFT JOIN hj_inner i
                   ON o.k8 = i.k8 AND i.id % 3 = 0 AND o.id < i.id * 5');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o LEFT JOIN hj_inner i ON o.k4 = i.k4
                   WHERE i.id IS NULL OR i.k2 > 50');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o LEFT JOIN hj_inner i ON o.k4 = i.k4 AND o.k2 = i.k2');
SELECT check_join('SELECT o.id AS oid, e.id AS eid FROM hj_outer o LEFT JOIN hj_empty e ON o.k4 = e.k4');
SELECT check_join('SELECT o.id AS oid FROM hj_outer o WHERE EXISTS (SELECT 1 FROM hj_inner i WHERE i.k4 = o.k4)');
SELECT check_join('SELECT o.id AS oid FROM hj_outer o WHERE EXISTS
                   (SELECT 1 FROM hj_inner i WHERE i.k8 = o.k8 AND i.label > o.pad)');
SELECT check_join('SELECT o.id AS oid, o.d FROM hj_outer o WHERE o.d IN (SELECT d FROM hj_inner WHERE id % 2 = 0)');
SELECT check_join('SELECT o.id AS oid FROM hj_outer o WHERE NOT EXISTS (SELECT 1 FROM hj_inner i WHERE i.k4 = o.k4)');
SELECT check_join('SELECT o.id AS oid FROM hj_outer o WHERE NOT EXISTS
                   (SELECT 1 FROM hj_inner i WHERE i.k8 = o.k8 AND i.k2 = o.k2 AND i.id > o.id % 1000)');
SELECT check_join('SELECT o.id AS oid FROM hj_outer o WHERE NOT EXISTS (SELECT 1 FROM hj_empty e WHERE e.k4 = o.k4)');
SELECT check_join('SELECT count(*) AS n, sum(o.id) AS s FROM hj_outer o WHERE EXISTS (SELECT 1 FROM hj_inner i WHERE i.s = o.s)');
SELECT line FROM plan_lines('SELECT o.id FROM hj_outer o WHERE NOT EXISTS (SELECT 1 FROM hj_inner i WHERE i.k4 = o.k4)') line
WHERE line LIKE '%Join Type%' OR line LIKE '%GpuHashJoin%';
SELECT line FROM plan_lines('SELECT o.id, i.id FROM hj_outer o LEFT JOIN hj_inner i ON o.k4 = i.k4 WHERE i.id IS NULL OR i.k2 > 50') line
WHERE line LIKE '%Join Type%' OR line LIKE '%Filter%';

-- RIGHT and FULL joins: the inner (build) side's rows no pair matched come
-- out at the end with NULL outer columns.  A LEFT JOIN whose left side is
-- the larger one runs as a Right join building the smaller side.  Join
-- clauses beyond the keys decide matches on both sides; filters above the
-- join apply to every NULL-extended row.
SELECT check_join('SELECT o.id AS oid, i.id AS iid, i.label FROM hj_inner i LEFT JOIN hj_outer o ON o.k4 = i.k4');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o RIGHT JOIN hj_inner i ON o.k4 = i.k4 AND o.k2 = i.k2');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o RIGHT JOIN hj_inner i ON o.k8 = i.k8 AND o.id < i.id * 3');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o RIGHT JOIN hj_inner i ON o.k4 = i.k4
                   WHERE o.id IS NULL OR o.k2 > 50');
SELECT check_join('SELECT o.id AS oid, i.id AS iid, o.pad, i.label FROM hj_outer o FULL JOIN hj_inner i ON o.k4 = i.k4');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o FULL JOIN hj_inner i ON o.k8 = i.k8 AND i.id > o.id % 1000');
SELECT check_join('SELECT coalesce(o.d, i.d) AS d, o.id AS oid, i.id AS iid FROM hj_outer o FULL JOIN hj_inner i USING (d)
                   WHERE coalesce(o.id, 0) % 7 <> 3');
SELECT check_join('SELECT o.id AS oid, e.id AS eid FROM hj_outer o FULL JOIN hj_empty e ON o.k4 = e.k4');
SELECT check_join('SELECT e.id AS eid, i.id AS iid FROM hj_empty e FULL JOIN hj_inner i ON e.k4 = i.k4');
SELECT check_join('SELECT e.id AS eid, n.id AS nid FROM hj_empty e FULL JOIN hj_nulls n ON e.k4 = n.k4');
SELECT check_join('SELECT a.id AS aid, b.id AS bid FROM hj_t1 a FULL JOIN hj_t2 b ON a.t = b.t');
SELECT check_join('SELECT a.id AS aid, b.id AS bid FROM hj_t1 a RIGHT JOIN hj_t2 b ON a.n = b.n AND a.u = b.u');
SELECT check_join('SELECT count(*) AS n, count(o.id) AS no, count(i.id) AS ni, sum(o.id) AS so, sum(i.id) AS si
                   FROM hj_outer o FULL JOIN hj_inner i ON o.s = i.s');
SELECT check_join('SELECT count(*) AS n, sum(a.id * 3 + b.id) AS s FROM hj_one_a a FULL JOIN hj_one_b b ON a.k = b.k');
SELECT check_join('SELECT a.id AS aid, b.id AS bid FROM hj_one_a a FULL JOIN hj_one_b b ON a.id = b.id');
-- rescanned with new parameters: the matches start over each time
SELECT check_join('SELECT x.i, (SELECT count(*) FROM hj_outer o FULL JOIN hj_inner n ON o.k4 = n.k4 AND n.id % 5 = x.i
                   WHERE o.id IS NULL OR n.id IS NULL) AS c FROM generate_series(0, 2) x(i)');
SELECT line FROM plan_lines('SELECT o.id, i.id FROM hj_inner i LEFT JOIN hj_outer o ON o.k4 = i.k4') line
WHERE line LIKE '%Join Type%' OR line LIKE '%GpuHashJoin%';
SELECT line FROM plan_lines('SELECT o.id, i.id FROM hj_outer o FULL JOIN hj_inner i ON o.k4 = i.k4 AND o.id < i.id') line
WHERE line LIKE '%Join Type%' OR line LIKE '%Join Filter%';

-- EXPLAIN
SELECT * FROM plan_lines('SELECT o.id, i.id FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4 AND o.id < i.id');
SELECT j->>'Join Type' AS join_type, j->'Hash Keys' AS hash_keys, j->>'Backend' IN ('cpu', 'cuda') AS backend_ok,
       j->>'Build Rows' AS build_rows, j->>'Probe Rows' AS probe_rows,
       (j->>'Candidate Pairs')::int8 - (j->>'Rows Removed by Join Filter')::int8 = (j->>'Actual Rows')::numeric::int8 AS pairs_add_up
FROM (SELECT jsonb_path_query_first(e, 'strict $.**? (@."Custom Plan Provider" == "GpuHashJoin")') AS j
      FROM (SELECT explain_json('SELECT o.id, i.id FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4') AS e) x) y;

-- not handled: keeps PostgreSQL's plan
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k4 + 1 = i.k4 WHERE o.id < 2000');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k2::int4 = i.k4 WHERE o.id < 2000');
SET gpuops.enable_hashjoin = off;
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4 WHERE o.id < 2000');
RESET gpuops.enable_hashjoin;

-- device failures (forced; the CPU backend raises them too, so this runs
-- the same without a GPU): with a fallback the CPU backend finishes the
-- join, without one the error carries its SQLSTATE
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = no_device;
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4');
SET gpuops.fault_injection = out_of_memory;
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k8 = i.k8');
SET gpuops.fault_injection = kernel_error;
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.d = i.d');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o FULL JOIN hj_inner i ON o.k4 = i.k4');
SELECT j->>'Backend' AS backend, j->>'Fallback' AS fallback
FROM (SELECT jsonb_path_query_first(e, 'strict $.**? (@."Custom Plan Provider" == "GpuHashJoin")') AS j
      FROM (SELECT explain_json('SELECT o.id, i.id FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4') AS e) x) y;
SET gpuops.cpu_fallback = off;
SET gpuops.fault_injection = no_device;
SELECT sql_error('SELECT count(*) FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4');
SET gpuops.fault_injection = out_of_memory;
SELECT sql_error('SELECT count(*) FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4');
SET gpuops.fault_injection = kernel_error;
SELECT sql_error('SELECT count(*) FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4');
RESET gpuops.fault_injection;
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4');

-- parallel plans: each worker (and the leader) builds the whole inner side
-- and probes its share of a Parallel Seq Scan; inner, left, semi and anti
-- joins (right and full joins stay serial: every process would return its
-- own unmatched inner rows)
SET gpuops.parallel_startup_cost = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE FUNCTION parallel_gpuhashjoin(q text) RETURNS bool
LANGUAGE plpgsql AS $$
DECLARE line text; g bool := false; hj bool := false; ps bool := false;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    g := g OR line LIKE '%Gather%';
    hj := hj OR (g AND line LIKE '%Custom Scan (GpuHashJoin)%');
    ps := ps OR (hj AND line LIKE '%Parallel Seq Scan on hj_outer%');
  END LOOP;
  RETURN g AND hj AND ps;
END $$;
SELECT parallel_gpuhashjoin('SELECT o.id, i.id FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4') AS inner_parallel,
       parallel_gpuhashjoin('SELECT count(*) FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4') AS count_parallel,
       parallel_gpuhashjoin('SELECT o.id, i.id FROM hj_outer o LEFT JOIN hj_inner i ON o.k4 = i.k4') AS left_parallel,
       parallel_gpuhashjoin('SELECT o.id, i.id FROM hj_outer o FULL JOIN hj_inner i ON o.k4 = i.k4') AS full_parallel;
SELECT check_join('SELECT o.id AS oid, i.id AS iid, o.pad, i.label FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4');
SELECT check_join('SELECT count(*) AS n, sum(o.id) AS so, sum(i.id) AS si FROM hj_outer o JOIN hj_inner i ON o.k8 = i.k8');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o LEFT JOIN hj_inner i ON o.k4 = i.k4 AND o.k2 = i.k2');
SELECT check_join('SELECT o.id AS oid FROM hj_outer o WHERE EXISTS (SELECT 1 FROM hj_inner i WHERE i.d = o.d)');
SELECT check_join('SELECT o.id AS oid FROM hj_outer o WHERE NOT EXISTS (SELECT 1 FROM hj_inner i WHERE i.k4 = o.k4)');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o FULL JOIN hj_inner i ON o.k4 = i.k4');
SET gpuops.device_memory_limit = '2MB';
SELECT check_join('SELECT count(*) AS n, count(i.id) AS ni, sum(o.id) AS so, sum(i.id) AS si
                   FROM hj_outer o LEFT JOIN hj_inner i ON o.k4 = i.k4');
RESET gpuops.device_memory_limit;
RESET max_parallel_workers_per_gather;

-- join clauses beside the keys run on the device where they compile:
-- errors stay PostgreSQL's own (with gpuops on and off)
SELECT sql_error('SELECT o.id, i.id FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4 AND o.id / (i.id % 2) > 0');
SET gpuops.enabled = off;
SELECT sql_error('SELECT o.id, i.id FROM hj_outer o JOIN hj_inner i ON o.k4 = i.k4 AND o.id / (i.id % 2) > 0');
SET gpuops.enabled = on;
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM hj_outer o JOIN hj_inner i
                   ON o.k4 = i.k4 AND (i.id % 2 = 0 OR o.id / (i.id % 2) > 0) WHERE o.id % 10 = 0');
