-- GpuHashJoin's shared build in parallel plans: the leader builds the
-- directory and looks up the workers' probe keys; workers expand the
-- entries into pairs with their own copy of the directory.  Every result is
-- compared with PostgreSQL's (check_join, from test_setup); the workers'
-- use of the service is read from EXPLAIN ANALYZE.  Uses sql_error from
-- hashjoin.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET gpuops.cpu_fallback = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET gpuops.enable_mergejoin = off;
SET gpuops.enable_agg = off;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;

-- 400K probe rows (NULL keys, keys with no match, keys matching up to 7
-- build rows, one key in a fifth of the rows) against 20K build rows
CREATE TABLE sb_outer AS
SELECT i AS id,
       CASE WHEN i % 97 = 0 THEN NULL WHEN i % 5 = 0 THEN 42 ELSE (i::int8 * 7919 % 30000)::int4 END AS k,
       (i % 3)::int2 AS k2,
       md5(i::text) AS t
FROM generate_series(1, 400000) i;
CREATE TABLE sb_inner AS
SELECT i AS id,
       CASE WHEN i % 101 = 0 THEN NULL ELSE i % 20000 / 7 * 7 + (i % 3) END AS k,
       (i % 3)::int2 AS k2,
       md5((i % 20000 / 7 * 7 + (i % 3))::text) AS t,
       'row ' || i AS label
FROM generate_series(1, 20000) i;
ANALYZE sb_outer;
ANALYZE sb_inner;

-- What the shared build guarantees, and so all these helpers assert: a
-- worker that probes rows does so through the leader's service once the
-- leader has built (it waits up to 10 s for that); a worker may also get
-- no rows at all, when the leader and the other workers have read the
-- whole probe side before it started (on a busy machine, often): such a
-- worker has nothing to show and is not counted.  Which worker reads
-- which rows is timing, never part of an expected result.
--
-- process_accounts(q): the per-process accounts of the GpuHashJoin
-- (EXPLAIN ANALYZE VERBOSE), one JSON object per worker that reported
CREATE FUNCTION process_accounts(q text) RETURNS SETOF jsonb
LANGUAGE plpgsql AS $$
DECLARE j jsonb;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
  RETURN QUERY SELECT p FROM jsonb_path_query(j, 'strict $.**.Processes[*] ? (exists(@."Worker Number"))') p;
END $$;

-- shared_use(q): whether the plan is a parallel-aware GpuHashJoin, and
-- whether every worker that probed rows did so through the service
CREATE FUNCTION shared_use(q text) RETURNS text
LANGUAGE sql AS $$
  SELECT format('parallel_aware=%s served=%s',
                COALESCE((j->>'Parallel Aware')::bool, false),
                CASE WHEN NOT j ? 'Shared Lookups' THEN 'none'
                     WHEN (SELECT coalesce(bool_and((p->>'Shared')::bool), true)
                           FROM process_accounts(q) p WHERE (p->>'Probe Rows')::bigint > 0)
                     THEN 'yes' ELSE 'no' END)
  FROM explain_json(q) e,
       jsonb_path_query_first(e, 'strict $.**? (@."Custom Plan Provider" == "GpuHashJoin")') j
$$;

-- worker_accounts(q): did every worker that probed rows probe through the
-- service, and did every worker take match counts only (decided before it
-- reads anything, once the leader has built)?
CREATE FUNCTION worker_accounts(q text) RETURNS text
LANGUAGE sql AS $$
  SELECT format('shared=%s counts_only=%s',
                coalesce(bool_and((p->>'Shared')::bool) FILTER (WHERE (p->>'Probe Rows')::bigint > 0), true),
                coalesce(bool_and((p->>'Counts Only')::bool), true))
  FROM process_accounts(q) p
$$;

-- inner, left, semi and anti joins; NULL keys; duplicates; skew
SELECT check_join('SELECT o.id AS oid, i.id AS iid, o.t, i.label FROM sb_outer o JOIN sb_inner i ON o.k = i.k');
SELECT shared_use('SELECT o.id, i.id FROM sb_outer o JOIN sb_inner i ON o.k = i.k');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM sb_outer o LEFT JOIN sb_inner i ON o.k = i.k');
SELECT shared_use('SELECT o.id, i.id FROM sb_outer o LEFT JOIN sb_inner i ON o.k = i.k');
SELECT check_join('SELECT o.id AS oid FROM sb_outer o WHERE EXISTS (SELECT 1 FROM sb_inner i WHERE i.k = o.k)');
SELECT check_join('SELECT o.id AS oid FROM sb_outer o WHERE NOT EXISTS (SELECT 1 FROM sb_inner i WHERE i.k = o.k)');
-- two keys, a text key (hashed: candidates re-checked), an extra clause
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM sb_outer o JOIN sb_inner i ON o.k = i.k AND o.k2 = i.k2');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM sb_outer o JOIN sb_inner i ON o.t = i.t');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM sb_outer o JOIN sb_inner i
                   ON o.k = i.k AND (o.id + i.id) % 3 <> 0');

-- whole rows and expressions of both sides (a joined row fills only the
-- columns its expressions read)
SELECT check_join('SELECT o AS orow, i.label || o.t AS lt FROM sb_outer o JOIN sb_inner i ON o.k = i.k WHERE i.id % 50 = 0');

-- an aggregate above, in each process
SELECT check_join('SELECT count(*) AS n, sum(o.id) AS so, sum(i.id) AS si FROM sb_outer o JOIN sb_inner i ON o.k = i.k');

-- joins that read no inner column (count(*), outer columns only, semi and
-- anti joins): workers take the leader's match counts and never read the
-- inner side; a join that reads one builds its own host directory
SELECT check_join('SELECT count(*) AS n FROM sb_outer o JOIN sb_inner i ON o.k = i.k');
SELECT check_join('SELECT o.id AS oid, o.t FROM sb_outer o JOIN sb_inner i ON o.k = i.k');
SELECT check_join('SELECT o.id AS oid, o.k FROM sb_outer o LEFT JOIN sb_inner i ON o.k = i.k');
SELECT worker_accounts('SELECT count(*) FROM sb_outer o JOIN sb_inner i ON o.k = i.k');
SELECT worker_accounts('SELECT o.id FROM sb_outer o WHERE EXISTS (SELECT 1 FROM sb_inner i WHERE i.k = o.k)');
SELECT worker_accounts('SELECT o.id FROM sb_outer o WHERE NOT EXISTS (SELECT 1 FROM sb_inner i WHERE i.k = o.k)');
SELECT worker_accounts('SELECT o.id, i.id FROM sb_outer o JOIN sb_inner i ON o.k = i.k');
SELECT worker_accounts('SELECT o.id FROM sb_outer o JOIN sb_inner i ON o.k = i.k AND (o.id + i.id) % 3 <> 0');

-- a LIMIT that stops before the workers are done: the service closes and
-- a worker still waiting builds its own directory (no error, no wrong row)
SELECT count(*) AS limited FROM (SELECT o.id, i.id FROM sb_outer o JOIN sb_inner i ON o.k = i.k LIMIT 10) s;

-- an error in the middle of a parallel join: the service thread stops
-- before the shared memory goes (the next query runs in the same backend)
SELECT sql_error('SELECT o.id, i.id FROM sb_outer o JOIN sb_inner i ON o.k = i.k WHERE 1 / (o.id - 300000) > 5');
SELECT check_join('SELECT count(*) AS n FROM sb_outer o JOIN sb_inner i ON o.k = i.k');

-- no shared build: the leader does not run the join, or the GUC is off;
-- each process builds its own directory, with the same results.  A plan
-- made with the leader's participation, run without it: the workers find
-- no service and build alone.
SET plan_cache_mode = force_generic_plan;
PREPARE sb_count AS SELECT count(*) AS n, sum(o.id) AS s, count(i.id) AS ni FROM sb_outer o LEFT JOIN sb_inner i ON o.k = i.k;
SET gpuops.enabled = off;
SET enable_hashjoin = on;
CREATE TEMP TABLE sb_expected AS SELECT count(*) AS n, sum(o.id) AS s, count(i.id) AS ni FROM sb_outer o LEFT JOIN sb_inner i ON o.k = i.k;
SET enable_hashjoin = off;
SET gpuops.enabled = on;
SELECT bool_or(l LIKE '%Parallel Custom Scan (GpuHashJoin)%') AS shared_plan
FROM plan_lines('EXECUTE sb_count') l;
SET parallel_leader_participation = off;
CREATE TEMP TABLE sb_got AS EXECUTE sb_count;
SELECT (SELECT row(g.*)::text FROM sb_got g) = (SELECT row(e.*)::text FROM sb_expected e) AS without_leader_same;
DROP TABLE sb_got, sb_expected;
RESET parallel_leader_participation;
DEALLOCATE sb_count;
RESET plan_cache_mode;
SET parallel_leader_participation = off;
SELECT shared_use('SELECT o.id, i.id FROM sb_outer o JOIN sb_inner i ON o.k = i.k');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM sb_outer o JOIN sb_inner i ON o.k = i.k');
RESET parallel_leader_participation;
SET gpuops.enable_shared_build = off;
SET gpuops.parallel_startup_cost = 0;
SELECT shared_use('SELECT o.id, i.id FROM sb_outer o JOIN sb_inner i ON o.k = i.k');
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM sb_outer o LEFT JOIN sb_inner i ON o.k = i.k');
RESET gpuops.enable_shared_build;
RESET gpuops.parallel_startup_cost;

-- device failures: the leader's lookups fail (injected), its own probe
-- falls back to the CPU, the service closes, and each worker builds alone
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = 'kernel_error';
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM sb_outer o JOIN sb_inner i ON o.k = i.k');
SET gpuops.fault_injection = 'out_of_memory';
SELECT check_join('SELECT o.id AS oid, i.id AS iid FROM sb_outer o LEFT JOIN sb_inner i ON o.k = i.k');
RESET gpuops.fault_injection;
SET gpuops.cpu_fallback = off;

-- an inner side larger than one build (partitioned in the leader): no
-- shared build, the workers partition their own
SET gpuops.device_memory_limit = '1MB';
SELECT check_join('SELECT count(*) AS n, count(i.id) AS ni, sum(o.id) AS so FROM sb_outer o LEFT JOIN sb_inner i ON o.k = i.k');
RESET gpuops.device_memory_limit;

DROP FUNCTION shared_use(text), worker_accounts(text), process_accounts(text);
DROP TABLE sb_outer, sb_inner;
