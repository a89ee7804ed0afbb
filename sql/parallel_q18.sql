-- TPC-H Q18's shape at a small scale (issue 26): a Gather whose workers run
-- a Parallel GpuHashJoin with a shared build whose inner side is a GpuAgg,
-- under PostgreSQL's Parallel Hash Join and a GpuStage, while the leader
-- runs a GpuAgg above the Gather.  At scale this never ended and ignored
-- cancel.  The plan shape is forced with the parallel cost settings and
-- checked; the rows (in order) must equal PostgreSQL's and the query must
-- end (cancel_sweep cancels this shape at many points).
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests the parallel GpuHashJoin and GpuAgg plans.
SET gpuops.enable_query = off;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET gpuops.parallel_startup_cost = 0;
SET gpuops.cpu_fallback = off;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0.02;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET enable_mergejoin = off;
SET enable_nestloop = off;
SET gpuops.enable_mergejoin = off;
SET gpuops.enable_nestloop = off;

-- TPC-H's columns of customer, orders and lineitem; unique prices, so the
-- top 100 by price is one list
CREATE TABLE q18_customer AS
SELECT i AS c_custkey, 'Customer#' || lpad(i::text, 9, '0') AS c_name
FROM generate_series(1, 3000) i;
CREATE TABLE q18_orders AS
SELECT i AS o_orderkey, (i * 7 % 3000) + 1 AS o_custkey,
       (1000 + (i * 7919 % 500000) / 100.0)::numeric(15,2) AS o_totalprice,
       date '1992-01-01' + (i % 2400) AS o_orderdate
FROM generate_series(1, 40000) i;
CREATE TABLE q18_lineitem AS
SELECT o AS l_orderkey, l AS l_linenumber,
       ((o * 31 + l * 17) % 50 + 1 + CASE WHEN o % 97 = 0 THEN 40 ELSE 0 END)::numeric(15,2) AS l_quantity
FROM generate_series(1, 40000) o, generate_series(1, 1 + o % 7) l;
-- statistics from every row (not a random sample), so the plan is the same each run
SET default_statistics_target = 10000;
ANALYZE q18_customer;
ANALYZE q18_orders;
ANALYZE q18_lineitem;
RESET default_statistics_target;

CREATE VIEW q18 AS
SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) AS qty
FROM q18_customer, q18_orders, q18_lineitem
WHERE o_orderkey IN (SELECT l_orderkey FROM q18_lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 300)
  AND c_custkey = o_custkey AND o_orderkey = l_orderkey
GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
ORDER BY o_totalprice DESC, o_orderdate LIMIT 100;

-- the shape: GpuAgg over Gather over GpuStage over a Parallel Hash Join,
-- with a parallel-aware GpuHashJoin (shared build) under it whose inner
-- side is a GpuAgg
CREATE FUNCTION q18_shape() RETURNS TABLE (agg_above_gather bool, stage bool,
  parallel_hash_join bool, shared_gpuhashjoin bool, its_inner_gpuagg bool)
LANGUAGE plpgsql AS $$
DECLARE e jsonb; g jsonb; j jsonb;
BEGIN
  EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) SELECT * FROM q18' INTO e;
  g := jsonb_path_query_first(e, 'strict $.**? (@."Custom Plan Provider" == "GpuAgg" && exists(@.Plans[*] ? (@."Node Type" == "Gather")))');
  j := jsonb_path_query_first(g, 'strict $.**? (@."Custom Plan Provider" == "GpuHashJoin" && @."Parallel Aware" == true)');
  RETURN QUERY SELECT g IS NOT NULL,
    jsonb_path_exists(g, 'strict $.Plans[*].Plans[*] ? (@."Custom Plan Provider" == "GpuStage")'),
    jsonb_path_exists(g, 'strict $.**? (@."Node Type" == "Hash Join" && @."Parallel Aware" == true)'),
    j IS NOT NULL,
    jsonb_path_exists(g, 'strict $.**? (@."Custom Plan Provider" == "GpuHashJoin" && @."Parallel Aware" == true && @.Plans[1]."Custom Plan Provider" == "GpuAgg")');
END $$;
SELECT * FROM q18_shape();

-- PostgreSQL's rows, then gpuops' (twice: the second run in a backend whose
-- device state the first one left)
SET gpuops.enabled = off;
CREATE TEMP TABLE q18_expected AS SELECT row_number() OVER () AS n, q.* FROM q18 q;
SET gpuops.enabled = on;
SELECT count(*) AS expected_rows FROM q18_expected;
CREATE FUNCTION q18_same() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE missing bigint; extra bigint;
BEGIN
  CREATE TEMP TABLE q18_got AS SELECT row_number() OVER () AS n, q.* FROM q18 q;
  SELECT count(*) INTO missing FROM (SELECT * FROM q18_expected EXCEPT ALL SELECT * FROM q18_got) d;
  SELECT count(*) INTO extra FROM (SELECT * FROM q18_got EXCEPT ALL SELECT * FROM q18_expected) d;
  DROP TABLE q18_got;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;
SELECT q18_same();
SELECT q18_same();

-- the workers' accounts agree with the leader's (what the shared build
-- guarantees; which workers attached is timing)
CREATE FUNCTION q18_accounts() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE e jsonb; j jsonb; ok bool; all_ok bool := true; n int := 0;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) SELECT * FROM q18' INTO e;
  FOR j IN SELECT jsonb_path_query(e, 'strict $.**? (@."Custom Plan Provider" == "GpuHashJoin" && @."Parallel Aware" == true)') LOOP
    SELECT COALESCE(bool_and(NOT (p->>'Left Service')::bool
                             AND CASE WHEN (p->>'Attached')::bool
                                      THEN (p->>'Probe Rows')::bigint = 0 OR (p->>'Lookups')::bigint > 0
                                      ELSE (p->>'Lookups')::bigint = 0 END), true)
           AND COALESCE(sum((p->>'Lookups')::bigint), 0) = (j->>'Shared Lookups')::bigint
      INTO ok
      FROM jsonb_path_query(j, 'strict $.Processes[*] ? (exists(@."Worker Number"))') p;
    all_ok := all_ok AND ok;
    n := n + 1;
  END LOOP;
  RETURN CASE WHEN n > 0 AND all_ok THEN 'consistent' ELSE 'inconsistent' END;
END $$;
SELECT q18_accounts();

-- without the leader's participation, and without the shared build
SET parallel_leader_participation = off;
SELECT q18_same();
RESET parallel_leader_participation;
SET gpuops.enable_shared_build = off;
SELECT q18_same();
RESET gpuops.enable_shared_build;

DROP FUNCTION q18_shape(), q18_same(), q18_accounts();
DROP VIEW q18;
DROP TABLE q18_customer, q18_orders, q18_lineitem;
