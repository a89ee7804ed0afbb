-- GpuHashJoin's shared build in parallel plans: the leader builds the
-- directory and looks up the workers' probe keys; workers that find it
-- building or built expand the entries into pairs with their own copy of
-- the directory, the others build their own.  Every result is
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

-- Which workers take the leader's build depends on when they start (one
-- that finds the leader has not begun builds its own), so the tests assert
-- only what the protocol guarantees: results equal PostgreSQL's, a worker
-- that attached probed only through the service, and the leader's count of
-- lookups served is the attached workers' sum.
--
-- shared_use(q): whether the plan is a parallel-aware GpuHashJoin, and
-- whether the accounts agree (EXPLAIN ANALYZE VERBOSE): no worker left the
-- service, an attached worker with probe rows sent lookups, a worker that
-- built its own sent none, and the leader served exactly the lookups sent
CREATE FUNCTION shared_use(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE e jsonb; j jsonb; ok bool;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO e;
  j := jsonb_path_query_first(e, 'strict $.**? (@."Custom Plan Provider" == "GpuHashJoin")');
  IF NOT j ? 'Shared Lookups' THEN
    RETURN format('parallel_aware=%s served=none', COALESCE((j->>'Parallel Aware')::bool, false));
  END IF;
  SELECT COALESCE(bool_and(NOT (p->>'Left Service')::bool
                           AND CASE WHEN (p->>'Attached')::bool
                                    THEN (p->>'Probe Rows')::bigint = 0 OR (p->>'Lookups')::bigint > 0
                                    ELSE (p->>'Lookups')::bigint = 0 END), true)
         AND COALESCE(sum((p->>'Lookups')::bigint), 0) = (j->>'Shared Lookups')::bigint
    INTO ok
    FROM jsonb_path_query(j, 'strict $.Processes[*] ? (exists(@."Worker Number"))') p;
  RETURN format('parallel_aware=%s served=%s', (j->>'Parallel Aware')::bool,
                CASE WHEN ok THEN 'consistent' ELSE 'inconsistent' END);
END $$;

-- worker_accounts(q, counts): the attached workers' accounts: did each
-- probe only through the service, and use match counts only exactly when
-- the join reads no inner column?  (t when none attached)
CREATE FUNCTION worker_accounts(q text, counts bool) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE j jsonb;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
  RETURN (SELECT format('shared=%s counts_only_as_expected=%s',
                        coalesce(bool_and(NOT (p->>'Left Service')::bool
                                          AND ((p->>'Probe Rows')::bigint = 0 OR (p->>'Shared')::bool)), true),
                        coalesce(bool_and((p->>'Counts Only')::bool = counts), true))
          FROM jsonb_path_query(j, 'strict $.**.Processes[*] ? (exists(@."Worker Number"))') p
          WHERE (p->>'Attached')::bool);
END $$;

-- some_attached(q): whether a worker took the leader's build in one of up
-- to five runs (the leader claims the build as it starts running the node,
-- workers take milliseconds to start: five misses in a row mean sharing is
-- broken, not unlucky timing)
CREATE FUNCTION some_attached(q text) RETURNS bool
LANGUAGE plpgsql AS $$
DECLARE j jsonb;
BEGIN
  FOR i IN 1..5 LOOP
    EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
    IF jsonb_path_exists(j, 'strict $.**.Processes[*] ? (@."Attached" == true)') THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END $$;

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
SELECT worker_accounts('SELECT count(*) FROM sb_outer o JOIN sb_inner i ON o.k = i.k', true);
SELECT worker_accounts('SELECT o.id FROM sb_outer o WHERE EXISTS (SELECT 1 FROM sb_inner i WHERE i.k = o.k)', true);
SELECT worker_accounts('SELECT o.id FROM sb_outer o WHERE NOT EXISTS (SELECT 1 FROM sb_inner i WHERE i.k = o.k)', true);
SELECT worker_accounts('SELECT o.id, i.id FROM sb_outer o JOIN sb_inner i ON o.k = i.k', false);
SELECT worker_accounts('SELECT o.id FROM sb_outer o JOIN sb_inner i ON o.k = i.k AND (o.id + i.id) % 3 <> 0', false);
SELECT some_attached('SELECT count(*) FROM sb_outer o JOIN sb_inner i ON o.k = i.k') AS counts_attached;
SELECT some_attached('SELECT o.id, i.id FROM sb_outer o JOIN sb_inner i ON o.k = i.k') AS rows_attached;

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

DROP FUNCTION shared_use(text), worker_accounts(text, bool), some_attached(text);
DROP TABLE sb_outer, sb_inner;
