-- Cancels statements at many points in every operator (issue 26): each
-- query runs in a second session (dblink to this server, so each statement
-- is its own top-level statement with its own statement_timeout) under
-- timeouts from 1 ms up to one it completes within.  Each statement must
-- either return PostgreSQL's answer or fail with 57014, and end within 1 s
-- of its timeout (3 s for parallel plans: on abort the leader waits for
-- every launched worker to exit, and a worker that PostgreSQL starts after
-- the cancel takes over a second to start and exit on a machine with four
-- times more runnable processes than cores; measured, not gpuops' waits);
-- the session must then answer correctly, and the server must not have
-- crashed (this session would be gone).  What is printed does
-- not depend on which timeouts fired.
CREATE EXTENSION dblink;
SELECT dblink_connect('cs', format('host=%s port=%s dbname=%s user=%s',
       split_part(current_setting('unix_socket_directories'), ',', 1),
       current_setting('port'), current_database(), current_user)) AS connected;

CREATE TABLE cs_a AS
SELECT i AS id, (i * 7919 % 50000)::int4 AS k, (i % 100)::int8 AS g, md5(i::text) AS t
FROM generate_series(1, 200000) i;
CREATE TABLE cs_b AS
SELECT i AS id, (i * 31 % 50000)::int4 AS k, (i % 7)::int8 AS g
FROM generate_series(1, 20000) i;
-- TPC-H Q18's shape (parallel_q18 checks it)
CREATE TABLE cs_customer AS
SELECT i AS c_custkey, 'Customer#' || lpad(i::text, 9, '0') AS c_name FROM generate_series(1, 3000) i;
CREATE TABLE cs_orders AS
SELECT i AS o_orderkey, (i * 7 % 3000) + 1 AS o_custkey,
       (1000 + (i * 7919 % 500000) / 100.0)::numeric(15,2) AS o_totalprice,
       date '1992-01-01' + (i % 2400) AS o_orderdate
FROM generate_series(1, 40000) i;
CREATE TABLE cs_lineitem AS
SELECT o AS l_orderkey, l AS l_linenumber,
       ((o * 31 + l * 17) % 50 + 1 + CASE WHEN o % 97 = 0 THEN 40 ELSE 0 END)::numeric(15,2) AS l_quantity
FROM generate_series(1, 40000) o, generate_series(1, 1 + o % 7) l;
-- statistics from every row (not a random sample), so the plans are the same each run
SET default_statistics_target = 10000;
ANALYZE cs_a; ANALYZE cs_b; ANALYZE cs_customer; ANALYZE cs_orders; ANALYZE cs_lineitem;
RESET default_statistics_target;

-- the settings every case starts from (in the second session)
CREATE FUNCTION cs_reset() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM dblink_exec('cs', 'RESET ALL');
  -- GpuQuery (on by default) would take most blocks here: its own cases turn it on
  PERFORM dblink_exec('cs', 'SET gpuops.min_rows = 0; SET gpuops.startup_cost = 0; '
    'SET gpuops.tuple_cost = 0; SET gpuops.cpu_fallback = off; SET max_parallel_workers_per_gather = 0; '
    'SET gpuops.enable_query = off');
END $$;

-- cs_untimeout(): the second session without a timeout (RESET itself runs
-- under the timeout being reset: a busy machine may cancel it; again)
CREATE FUNCTION cs_untimeout() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..1000 LOOP
    BEGIN
      PERFORM dblink_exec('cs', 'RESET statement_timeout');
      RETURN;
    EXCEPTION WHEN query_canceled THEN
      NULL;
    END;
  END LOOP;
  RAISE EXCEPTION 'statement_timeout could not be reset';
END $$;

-- cs_case(name, settings, q, node): q (one text column, one row) under
-- timeouts 1 ms, 2 ms, 5 ms, ... until one completes; reports whether the
-- plan uses the node, whether every statement returned the right answer or
-- 57014 within 1 s of its timeout, and whether the session then answers
CREATE FUNCTION cs_case(name text, settings text, q text, node text)
RETURNS TABLE (case_name text, uses_node bool, each_right_or_canceled bool, quick bool,
               completed bool, session_works bool)
LANGUAGE plpgsql AS $$
DECLARE
  expected text; got text; st text; t int; t0 timestamptz; over interval;
  plan text; all_right bool := true; all_quick bool := true; done bool := false;
BEGIN
  PERFORM cs_reset();
  PERFORM dblink_exec('cs', 'SET gpuops.enabled = off');
  SELECT r INTO expected FROM dblink('cs', q) AS x(r text);
  PERFORM dblink_exec('cs', 'SET gpuops.enabled = on');
  IF settings <> '' THEN
    PERFORM dblink_exec('cs', settings);
  END IF;
  SELECT string_agg(l, E'\n') INTO plan FROM dblink('cs', 'EXPLAIN (COSTS OFF) ' || q) AS x(l text);
  FOREACH t IN ARRAY ARRAY[1, 2, 5, 10, 20, 50, 100, 200, 400, 800, 1600, 3200, 6400] LOOP
    t0 := clock_timestamp();
    BEGIN
      -- one string: the SET runs without the timeout, q under it
      SELECT r INTO got FROM dblink('cs', format('SET statement_timeout = %s; %s', t, q)) AS x(r text);
      done := true;
      all_right := all_right AND got IS NOT DISTINCT FROM expected;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE;
      all_right := all_right AND st = '57014';
    END;
    over := clock_timestamp() - t0 - make_interval(secs => t / 1000.0);
    all_quick := all_quick AND over < CASE WHEN plan LIKE '%Gather%' THEN interval '3 s' ELSE interval '1 s' END;
    PERFORM cs_untimeout();
    EXIT WHEN done;
  END LOOP;
  SELECT r INTO got FROM dblink('cs', q) AS x(r text);
  RETURN QUERY SELECT name, plan LIKE '%' || node || '%', all_right, all_quick, done,
                      got IS NOT DISTINCT FROM expected;
END $$;

-- every operator: sorts (full, top-N, top-N by row position alone and with
-- workers), hash joins (serial, parallel
-- with the shared build, partitioned), merge join, nested loop (plain and
-- indexed), aggregation (serial, parallel staged), and Q18's shape
SELECT * FROM cs_case('sort', '',
  $q$SELECT md5(string_agg(id::text, ',')) FROM (SELECT id FROM cs_a ORDER BY t, id LIMIT 50000) s$q$, 'GpuSort');
SELECT * FROM cs_case('sort top-N', 'SET gpuops.enable_topn = off',
  $q$SELECT string_agg(id::text, ',') FROM (SELECT id FROM cs_a ORDER BY k DESC, id LIMIT 20) s$q$, 'GpuSort');
SELECT * FROM cs_case('top-N by row position', '',
  $q$SELECT string_agg(id::text, ',') FROM (SELECT id FROM cs_a ORDER BY k DESC, id LIMIT 20) s$q$, 'GpuTopN');
SELECT * FROM cs_case('top-N by row position, workers',
  'SET gpuops.enable_sort = off; SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET min_parallel_table_scan_size = 0',
  $q$SELECT string_agg(id::text, ',') FROM (SELECT id FROM cs_a ORDER BY k DESC, id LIMIT 20) s$q$, 'GpuTopN');
SELECT * FROM cs_case('top-N by row position, workers fetching',
  'SET gpuops.enable_sort = off; SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET min_parallel_table_scan_size = 0',
  $q$SELECT md5(string_agg(id::text || t, ',')) FROM (SELECT id, t FROM cs_a ORDER BY k DESC, id LIMIT 30000) s$q$, 'GpuTopN');
SELECT * FROM cs_case('hash join', 'SET enable_hashjoin = off; SET enable_mergejoin = off; SET gpuops.enable_mergejoin = off',
  $q$SELECT count(*) || ' ' || sum(a.id + b.id) FROM cs_a a JOIN cs_b b ON a.k = b.k$q$, 'GpuHashJoin');
SELECT * FROM cs_case('hash join, shared build',
  'SET enable_hashjoin = off; SET enable_mergejoin = off; SET gpuops.enable_mergejoin = off; SET gpuops.enable_agg = off; '
  'SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2',
  $q$SELECT count(*) || ' ' || sum(a.id) FROM cs_a a WHERE EXISTS (SELECT 1 FROM cs_b b WHERE b.k = a.k)$q$, 'Parallel Custom Scan (GpuHashJoin)');
SELECT * FROM cs_case('hash join, partitioned',
  'SET enable_hashjoin = off; SET enable_mergejoin = off; SET gpuops.enable_mergejoin = off; SET gpuops.device_memory_limit = ''1MB''',
  $q$SELECT count(*) || ' ' || sum(a.id + b.id) FROM cs_a a JOIN cs_b b ON a.k = b.k$q$, 'GpuHashJoin');
SELECT * FROM cs_case('merge join', 'SET enable_hashjoin = off; SET gpuops.enable_hashjoin = off',
  $q$SELECT count(*) || ' ' || sum(a.id - b.id) FROM cs_a a JOIN cs_b b ON a.k = b.k$q$, 'GpuMergeJoin');
SELECT * FROM cs_case('nested loop', 'SET enable_hashjoin = off; SET enable_mergejoin = off',
  $q$SELECT count(*) || ' ' || sum(a.id) FROM cs_a a JOIN cs_b b ON a.k BETWEEN b.k AND b.k + 1 WHERE b.id <= 300$q$, 'GpuNestLoop');
SELECT * FROM cs_case('aggregate', '',
  $q$SELECT count(*) || ' ' || sum(c) || ' ' || sum(s) FROM (SELECT k, count(*) AS c, sum(id) AS s FROM cs_a GROUP BY k) g$q$, 'GpuAgg');
SELECT * FROM cs_case('aggregate, staged',
  'SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0.01; SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2; SET gpuops.parallel_startup_cost = 0',
  $q$SELECT count(*) || ' ' || sum(c) || ' ' || sum(s) FROM (SELECT g, k, count(*) AS c, sum(id) AS s FROM cs_a GROUP BY g, k) x$q$, 'GpuStage');
SELECT * FROM cs_case('Q18 shape',
  'SET gpuops.parallel_startup_cost = 0; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0.02; '
  'SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2; SET enable_mergejoin = off; '
  'SET enable_nestloop = off; SET gpuops.enable_mergejoin = off; SET gpuops.enable_nestloop = off',
  $q$SELECT md5(string_agg(format('%s %s %s %s %s %s', c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, qty), ';'))
     FROM (SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) AS qty
           FROM cs_customer, cs_orders, cs_lineitem
           WHERE o_orderkey IN (SELECT l_orderkey FROM cs_lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 300)
             AND c_custkey = o_custkey AND o_orderkey = l_orderkey
           GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
           ORDER BY o_totalprice DESC, o_orderdate LIMIT 100) q$q$, 'Parallel Custom Scan (GpuHashJoin)');
SELECT * FROM cs_case('query block, a join',
  'SET gpuops.enable_query = on; SET enable_hashjoin = off; SET enable_mergejoin = off; '
  'SET gpuops.enable_hashjoin = off; SET gpuops.enable_mergejoin = off; SET gpuops.enable_nestloop = off',
  $q$SELECT count(*) || ' ' || sum(a.id + b.g) FROM cs_a a JOIN cs_b b ON a.k = b.k$q$, 'GpuQuery');
SELECT * FROM cs_case('query block, parallel read',
  'SET gpuops.enable_query = on; SET gpuops.enable_agg = off; SET parallel_setup_cost = 0; '
  'SET parallel_tuple_cost = 0.01; SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2',
  $q$SELECT count(*) || ' ' || sum(c) || ' ' || sum(s) FROM (SELECT g, k, count(*) AS c, sum(id) AS s FROM cs_a GROUP BY g, k) x$q$, 'GpuQuery');

-- a long device-layer call (a nested loop testing 40 billion pairs in few
-- calls, serial, and such a nested loop under a parallel join; an H100
-- tests 4 billion in under 200 ms): a 200 ms timeout ends each within
-- 1 s of it (3 s with parallel workers, as above)
CREATE FUNCTION cs_long(settings text, q text, slack interval) RETURNS TABLE (sqlstate text, quick bool)
LANGUAGE plpgsql AS $$
DECLARE st text := 'none'; t0 timestamptz;
BEGIN
  PERFORM cs_reset();
  PERFORM dblink_exec('cs', settings);
  t0 := clock_timestamp();
  BEGIN
    PERFORM * FROM dblink('cs', 'SET statement_timeout = 200; ' || q) AS x(r text);
  EXCEPTION WHEN OTHERS OR query_canceled THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE;
  END;
  PERFORM cs_untimeout();
  RETURN QUERY SELECT st, clock_timestamp() - t0 < interval '200 ms' + slack;
END $$;
SELECT * FROM cs_long('SET enable_hashjoin = off; SET enable_mergejoin = off',
  $q$SELECT count(*)::text FROM cs_a a JOIN cs_a b ON a.k + b.k = -1$q$, '1 s');
SELECT * FROM cs_long('SET enable_hashjoin = off; SET enable_mergejoin = off; SET gpuops.enable_mergejoin = off; '
  'SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; '
  'SET max_parallel_workers_per_gather = 2; SET gpuops.parallel_startup_cost = 0',
  $q$SELECT count(*)::text FROM cs_a a JOIN (SELECT x.k FROM cs_a x JOIN cs_a y ON x.k + y.k = -1) b ON a.k = b.k$q$, '3 s');

-- the second session, and this one, still answer; no backend crashed
SELECT r AS remote_answer FROM dblink('cs', 'SELECT count(*)::text FROM cs_b') AS x(r text);
SELECT dblink_disconnect('cs') AS disconnected;
DROP FUNCTION cs_case(text, text, text, text), cs_long(text, text, interval), cs_reset(), cs_untimeout();
DROP TABLE cs_a, cs_b, cs_customer, cs_orders, cs_lineitem;
DROP EXTENSION dblink;
