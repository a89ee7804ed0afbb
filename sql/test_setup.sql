-- Shared fixtures and helpers for the regression suite.
-- Every result test compares gpuops against PostgreSQL itself: the query runs
-- with gpuops.enabled = off and on; results must match as multisets (EXCEPT
-- ALL both ways) and, for sorts, the sort key must come out in exactly the
-- same order.  Nothing here depends on the hardware, so the same expected
-- files hold for the CPU backend (CI) and the GPU.

-- check_sort_cols(q, keys): runs q with gpuops off and on.  keys names q's
-- sort-key output columns, in ORDER BY order.  Reports whether GpuSort
-- planned the query, how many rows came back, at how many positions a key
-- differs from PostgreSQL's (IS DISTINCT FROM, so -0 = 0 and NaN = NaN, as
-- PostgreSQL's sort treats them), and rows missing / extra compared with
-- PostgreSQL's result (EXCEPT ALL both ways).
CREATE FUNCTION check_sort_cols(q text, keys text[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  used bool;
  n bigint;
  order_diff bigint;
  missing bigint;
  extra bigint;
  cond text;
  enabled text := current_setting('gpuops.enabled');
BEGIN
  SELECT string_agg(format('a.%I IS DISTINCT FROM b.%I', key, key), ' OR ')
    INTO cond FROM unnest(keys) key;
  PERFORM set_config('gpuops.enabled', 'off', true);
  EXECUTE 'CREATE TEMP TABLE check_off ON COMMIT DROP AS SELECT row_number() OVER () AS rn__, * FROM (' || q || ') q__';
  PERFORM set_config('gpuops.enabled', 'on', true);
  used := uses_node(q, 'GpuSort');
  EXECUTE 'CREATE TEMP TABLE check_on ON COMMIT DROP AS SELECT row_number() OVER () AS rn__, * FROM (' || q || ') q__';
  -- the comparison itself runs without gpuops
  PERFORM set_config('gpuops.enabled', 'off', true);
  SELECT count(*) INTO n FROM check_on;
  EXECUTE 'SELECT count(*) FROM check_on a FULL JOIN check_off b USING (rn__) WHERE ' || cond
    INTO order_diff;
  ALTER TABLE check_on DROP COLUMN rn__;
  ALTER TABLE check_off DROP COLUMN rn__;
  EXECUTE 'SELECT count(*) FROM (SELECT * FROM check_off EXCEPT ALL SELECT * FROM check_on) x' INTO missing;
  EXECUTE 'SELECT count(*) FROM (SELECT * FROM check_on EXCEPT ALL SELECT * FROM check_off) x' INTO extra;
  DROP TABLE check_on;
  DROP TABLE check_off;
  PERFORM set_config('gpuops.enabled', enabled, true);
  RETURN format('gpusort=%s rows=%s order_diff=%s missing=%s extra=%s',
                used, n, order_diff, missing, extra);
END $$;

-- check_sort(q): one sort key, q's output column k.
CREATE FUNCTION check_sort(q text) RETURNS text
LANGUAGE sql AS $$ SELECT check_sort_cols(q, ARRAY['k']) $$;

-- check_sort_keys(q, nkeys): several sort keys, q's output columns k1, k2, ...
CREATE FUNCTION check_sort_keys(q text, nkeys int) RETURNS text
LANGUAGE sql AS $$ SELECT check_sort_cols(q, ARRAY(SELECT 'k' || i FROM generate_series(1, nkeys) i)) $$;

-- uses_node(q, node): does the plan of q contain a Custom Scan (node)?
CREATE FUNCTION uses_node(q text, node text) RETURNS bool
LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line LIKE '%Custom Scan (' || node || ')%' THEN RETURN true; END IF;
  END LOOP;
  RETURN false;
END $$;

-- uses_gpusort(q): does the plan of q contain a GpuSort node?
CREATE FUNCTION uses_gpusort(q text) RETURNS bool
LANGUAGE sql AS $$ SELECT uses_node(q, 'GpuSort') $$;

-- node_analyze(q, node [, with_verbose]): the Custom Scan (node) of EXPLAIN
-- (ANALYZE, FORMAT JSON) q, with VERBOSE if asked (Heap Rows Read Directly),
-- for its counters.  gpusort_analyze(q [, with_verbose]): GpuSort's.
CREATE FUNCTION node_analyze(q text, node text, with_verbose bool DEFAULT false) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE j jsonb;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE ' || with_verbose ||
          ', COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
  RETURN jsonb_path_query_first(j, 'strict $.**? (@."Custom Plan Provider" == $n)',
                                jsonb_build_object('n', node));
END $$;
CREATE FUNCTION gpusort_analyze(q text, with_verbose bool DEFAULT false) RETURNS jsonb
LANGUAGE sql AS $$ SELECT node_analyze(q, 'GpuSort', with_verbose) $$;

-- plan_lines(q): the lines of EXPLAIN (COSTS OFF) q.
CREATE FUNCTION plan_lines(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    RETURN NEXT line;
  END LOOP;
END $$;

-- check_join_on(q, node): runs q with gpuops off and on; whether the
-- Custom Scan (node) was planned, the row count, and rows missing / extra
-- against PostgreSQL.  The oracle runs with PostgreSQL's hash and merge
-- joins on, whatever the caller set for the gpuops run.
CREATE FUNCTION check_join_on(q text, node text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE used bool; n bigint; missing bigint; extra bigint;
  hj text := current_setting('enable_hashjoin');
  mj text := current_setting('enable_mergejoin');
  enabled text := current_setting('gpuops.enabled');
BEGIN
  PERFORM set_config('gpuops.enabled', 'off', true);
  PERFORM set_config('enable_hashjoin', 'on', true);
  PERFORM set_config('enable_mergejoin', 'on', true);
  EXECUTE 'CREATE TEMP TABLE join_off ON COMMIT DROP AS ' || q;
  PERFORM set_config('enable_hashjoin', hj, true);
  PERFORM set_config('enable_mergejoin', mj, true);
  PERFORM set_config('gpuops.enabled', 'on', true);
  used := uses_node(q, node);
  EXECUTE 'CREATE TEMP TABLE join_on ON COMMIT DROP AS ' || q;
  -- the comparison itself runs without gpuops
  PERFORM set_config('gpuops.enabled', 'off', true);
  SELECT count(*) INTO n FROM join_on;
  EXECUTE 'SELECT count(*) FROM (SELECT * FROM join_off EXCEPT ALL SELECT * FROM join_on) x' INTO missing;
  EXECUTE 'SELECT count(*) FROM (SELECT * FROM join_on EXCEPT ALL SELECT * FROM join_off) x' INTO extra;
  DROP TABLE join_on;
  DROP TABLE join_off;
  PERFORM set_config('gpuops.enabled', enabled, true);
  RETURN format('%s=%s rows=%s missing=%s extra=%s', lower(node), used, n, missing, extra);
END $$;

-- check_join(q): check_join_on for GpuHashJoin.
CREATE FUNCTION check_join(q text) RETURNS text
LANGUAGE sql AS $$ SELECT check_join_on(q, 'GpuHashJoin') $$;

-- check_agg_on(q, node): runs q with gpuops off and on; whether the Custom
-- Scan (node) was planned, the row count, and rows missing / extra against
-- PostgreSQL.  Rows are
-- compared as their text, so a result must print exactly as PostgreSQL's
-- (-0 against 0, the last digit of a float, a numeric's scale).
CREATE FUNCTION check_agg_on(q text, node text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE used bool; n bigint; missing bigint; extra bigint;
  enabled text := current_setting('gpuops.enabled');
BEGIN
  PERFORM set_config('gpuops.enabled', 'off', true);
  EXECUTE 'CREATE TEMP TABLE agg_off ON COMMIT DROP AS SELECT q__::text AS r FROM (' || q || ') q__';
  PERFORM set_config('gpuops.enabled', 'on', true);
  used := uses_node(q, node);
  EXECUTE 'CREATE TEMP TABLE agg_on ON COMMIT DROP AS SELECT q__::text AS r FROM (' || q || ') q__';
  -- the comparison itself runs without gpuops
  PERFORM set_config('gpuops.enabled', 'off', true);
  SELECT count(*) INTO n FROM agg_on;
  SELECT count(*) INTO missing FROM (SELECT r FROM agg_off EXCEPT ALL SELECT r FROM agg_on) x;
  SELECT count(*) INTO extra FROM (SELECT r FROM agg_on EXCEPT ALL SELECT r FROM agg_off) x;
  DROP TABLE agg_on;
  DROP TABLE agg_off;
  PERFORM set_config('gpuops.enabled', enabled, true);
  RETURN format('%s=%s rows=%s missing=%s extra=%s', lower(node), used, n, missing, extra);
END $$;

-- check_query(q): check_agg_on for GpuQuery (gpuquery=t when
-- planned, rows, and rows missing / extra against PostgreSQL)
CREATE FUNCTION check_query(q text) RETURNS text
LANGUAGE sql AS $$ SELECT check_agg_on(q, 'GpuQuery') $$;

-- explain_lines(q, pat): EXPLAIN ANALYZE's lines matching pat, without
-- timings (the GpuQuery tests' view of a plan)
CREATE FUNCTION explain_lines(q text, pat text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ pat THEN
      RETURN NEXT regexp_replace(l, '\(actual.*\)', '');
    END IF;
  END LOOP;
END $$;

-- check_pages(q): check_agg_on for GpuQuery, with the pages form (in
-- place, then copied) and without (query_pages, heap_walk)
CREATE FUNCTION check_pages(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE a text; b text; c text;
BEGIN
  a := check_agg_on(q, 'GpuQuery');
  PERFORM set_config('gpuops.query_pages_in_place', 'off', true);
  c := check_agg_on(q, 'GpuQuery');
  PERFORM set_config('gpuops.query_pages_in_place', 'on', true);
  PERFORM set_config('gpuops.query_read_pages', 'off', true);
  b := check_agg_on(q, 'GpuQuery');
  PERFORM set_config('gpuops.query_read_pages', 'on', true);
  RETURN CASE WHEN a = b AND a = c THEN a ELSE a || ' | copied: ' || c || ' | host: ' || b END;
END $$;

-- check_agg(q): check_agg_on for GpuAgg.
CREATE FUNCTION check_agg(q text) RETURNS text
LANGUAGE sql AS $$ SELECT check_agg_on(q, 'GpuAgg') $$;

-- uses_gpuagg(q): does the plan of q contain a GpuAgg node?
CREATE FUNCTION uses_gpuagg(q text) RETURNS bool
LANGUAGE sql AS $$ SELECT uses_node(q, 'GpuAgg') $$;

-- explain_json(q): EXPLAIN (ANALYZE, FORMAT JSON) q, without timings.
CREATE FUNCTION explain_json(q text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE j jsonb;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
  RETURN j;
END $$;

-- A deterministic table with int4, int8 and float8 keys: NULLs, duplicates,
-- extremes, NaN, infinities and -0; 200000 rows span several 64K-row batches.
CREATE TABLE sort_src AS
SELECT i AS id,
       CASE WHEN i % 97 = 0 THEN NULL
            ELSE ((i::int8 * 7919) % 20011 - 10000)::int4 END AS a4,
       CASE WHEN i % 89 = 0 THEN NULL
            ELSE ((i::int8 * 2654435761) % 1000003 - 500000) * 1000003 END AS a8,
       CASE WHEN i % 83 = 0 THEN NULL
            WHEN i % 101 = 0 THEN 'NaN'::float8
            WHEN i % 103 = 0 THEN 'Infinity'::float8
            WHEN i % 107 = 0 THEN '-Infinity'::float8
            WHEN i % 109 = 0 THEN '-0'::float8
            WHEN i % 113 = 0 THEN 0::float8
            ELSE ((i::int8 * 7919) % 10007) / 7.0 - 700 END AS f8,
       md5(i::text) AS pad
FROM generate_series(1, 200000) i;
INSERT INTO sort_src VALUES
  (-1, 2147483647, 9223372036854775807, 1.7976931348623157e308, 'max'),
  (-2, -2147483648, -9223372036854775808, -1.7976931348623157e308, 'min'),
  (-3, 0, 0, 4.9e-324, 'tiny'),
  (-4, -1, -1, -4.9e-324, 'negtiny'),
  (-5, 1, 1, 2.2250738585072014e-308, 'smallnormal');
ANALYZE sort_src;

-- sql_error(q): runs q and reports the error it raises: SQLSTATE, message,
-- detail (no source locations, so expected files survive code changes).
CREATE FUNCTION sql_error(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN st || ': ' || msg || coalesce(' (' || nullif(det, '') || ')', '');
END $$;

-- check_error_on(q, node): runs q with gpuops on and off; whether the
-- Custom Scan (node) was planned, and each run's error (SQLSTATE and
-- message) or none.  check_error(q): for GpuNestLoop.
CREATE FUNCTION check_error_on(q text, node text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE r text; used bool := uses_node(q, node); res text := '';
BEGIN
  FOREACH r IN ARRAY ARRAY['on', 'off'] LOOP
    PERFORM set_config('gpuops.enabled', r, true);
    BEGIN
      EXECUTE q;
      res := res || r || ': no error; ';
    EXCEPTION WHEN OTHERS THEN
      res := res || r || ': ' || SQLSTATE || ' ' || SQLERRM || '; ';
    END;
  END LOOP;
  PERFORM set_config('gpuops.enabled', 'on', true);
  RETURN format('%s=%s %s', lower(node), used, res);
END $$;
CREATE FUNCTION check_error(q text) RETURNS text
LANGUAGE sql AS $$ SELECT check_error_on(q, 'GpuNestLoop') $$;

-- nl_analyze(q): the GpuNestLoop node of EXPLAIN ANALYZE q (JSON).
CREATE FUNCTION nl_analyze(q text) RETURNS jsonb
LANGUAGE sql AS $$ SELECT node_analyze(q, 'GpuNestLoop') $$;
