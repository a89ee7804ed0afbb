-- When GpuSort is planned, what EXPLAIN shows, and executor behaviour
-- (rescans, cursors, prepared statements).
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests GpuSort's plans.
-- GpuTopN would read this file's top-N queries by row position (gpu_topn.sql
-- tests it): off, so that GpuSort's bounded sort is what they test
SET gpuops.enable_topn = off;
SET gpuops.enable_query = off;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;

-- used, and shown with its sort key
EXPLAIN (COSTS OFF) SELECT * FROM sort_src ORDER BY a8;
EXPLAIN (COSTS OFF) SELECT id FROM sort_src ORDER BY f8 DESC NULLS LAST;
EXPLAIN (COSTS OFF) SELECT id FROM sort_src ORDER BY a4 NULLS FIRST;
EXPLAIN (VERBOSE, COSTS OFF) SELECT id, a4 + 1 FROM sort_src ORDER BY a4 DESC;
EXPLAIN (COSTS OFF) SELECT id FROM sort_src ORDER BY a4 DESC, pad COLLATE "C", f8 NULLS FIRST;
EXPLAIN (COSTS OFF, FORMAT JSON) SELECT id FROM sort_src ORDER BY a8 DESC;

-- not used: PostgreSQL's plan is kept
SET gpuops.enabled = off;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a8') AS enabled_off;
RESET gpuops.enabled;
SET gpuops.enable_sort = off;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a8') AS enable_sort_off;
RESET gpuops.enable_sort;
SET gpuops.min_rows = 1000000;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a8') AS below_min_rows;
SET gpuops.min_rows = 0;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY int4range(a4, a4 + 1)') AS range_key;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY ARRAY[a4]') AS array_key;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY to_jsonb(a4)') AS jsonb_key;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a4, to_jsonb(a8), f8') AS one_key_unsupported;
-- used: several keys, int2, numeric, text under the C collation
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a4, a8 DESC, f8 NULLS FIRST') AS three_keys;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a4::int2') AS int2_key;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a4::numeric') AS numeric_key;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY pad COLLATE "C"') AS text_c_key;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a4 FOR UPDATE') AS for_update;
SELECT uses_gpusort('SELECT generate_series(1, 2), a4 FROM sort_src ORDER BY a4') AS srf;
CREATE INDEX sort_presorted_k ON sort_presorted (k);
ANALYZE sort_presorted;
SET enable_seqscan = off;
SELECT uses_gpusort('SELECT * FROM sort_presorted ORDER BY k') AS presorted_index;
RESET enable_seqscan;
-- costs decide: a huge start-up cost keeps PostgreSQL's sort
SET gpuops.startup_cost = 1e9;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a8') AS too_expensive;
-- with the default costs: a full sort of 200000 rows goes to GpuSort, and
-- so does a small LIMIT: its cut drops most rows at one comparison each
-- (PostgreSQL's bounded heap copies each row first), and below
-- gpuops.topn_device_min_bound it sorts on the CPU, starting no device
RESET gpuops.startup_cost;
RESET gpuops.tuple_cost;
SET gpuops.host_memory_limit = '1GB';
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a8') AS full_sort_default_costs;
-- over a 4MB limit (the default work_mem) the 14MB input parks its rows in
-- device memory (sort_park.h), costed near the in-memory sort: GpuSort
SET gpuops.host_memory_limit = '4MB';
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a8') AS full_sort_parking;
-- spilling to files is costed: without parking PostgreSQL's own external
-- sort is estimated cheaper
SET gpuops.enable_sort_park = off;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a8') AS full_sort_spilling;
RESET gpuops.enable_sort_park;
SET gpuops.host_memory_limit = '1GB';
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a8 LIMIT 10') AS top10_default_costs;
SELECT line FROM plan_lines('SELECT * FROM sort_src ORDER BY a8 LIMIT 10') line
WHERE line ~ 'Sorts On|Row Bound';
SET gpuops.topn_device_min_bound = 10;
SELECT count(*) AS sorts_on_lines FROM plan_lines('SELECT * FROM sort_src ORDER BY a8 LIMIT 10') line
WHERE line ~ 'Sorts On';
RESET gpuops.topn_device_min_bound;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
-- USING < and USING > are the default btree orderings (ASC, DESC): GpuSort
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a4 USING <') AS using_lt;
SELECT uses_gpusort('SELECT * FROM sort_src ORDER BY a4 USING >') AS using_gt;

-- EXPLAIN ANALYZE: what ran, in TEXT (numbers masked) and JSON
CREATE FUNCTION masked_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    line := regexp_replace(line, 'Backend: (cpu|cuda)', 'Backend: X');
    line := regexp_replace(line, '\m[0-9]+(\.[0-9]+)?', 'N', 'g');
    RETURN NEXT line;
  END LOOP;
END $$;
SELECT * FROM masked_explain('SELECT id FROM sort_src ORDER BY a4');
SELECT j->'Sort Key' AS sort_key, j->>'Backend' IN ('cpu', 'cuda') AS backend_ok,
       j->>'Rows' AS rows, (j->>'Batches')::int >= 1 AS batches_ok,
       NOT (j ? 'Copy Time' OR j ? 'Kernel Time' OR j ? 'Staging Time' OR j ? 'Reorder Time') AS no_times,
       j ? 'Fallback' AS fell_back
FROM gpusort_analyze('SELECT id FROM sort_src ORDER BY f8 DESC') j;
-- times only with TIMING (PostgreSQL's own nodes print none without it),
-- in every gpuops node
CREATE FUNCTION analyze_times(q text) RETURNS TABLE (node text, timing_on bool, timing_off bool)
LANGUAGE plpgsql AS $$
DECLARE jon jsonb; joff jsonb;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO jon;
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO joff;
  RETURN QUERY
  SELECT a.n, a.t, b.t FROM
    (SELECT p->>'Custom Plan Provider' AS n,
            bool_or(k LIKE '% Time') AS t
     FROM jsonb_path_query(jon, 'strict $.** ? (exists(@."Custom Plan Provider"))') p,
          jsonb_object_keys(p) k
     GROUP BY 1) a
  JOIN
    (SELECT p->>'Custom Plan Provider' AS n,
            bool_or(k LIKE '% Time') AS t
     FROM jsonb_path_query(joff, 'strict $.** ? (exists(@."Custom Plan Provider"))') p,
          jsonb_object_keys(p) k
     GROUP BY 1) b ON a.n = b.n;
END $$;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT * FROM analyze_times('SELECT id FROM sort_src ORDER BY f8 DESC');
SELECT * FROM analyze_times('SELECT a4, count(*) FROM sort_src GROUP BY a4');
SELECT * FROM analyze_times('SELECT count(*) FROM sort_src a JOIN sort_src b ON a.a4 = b.a4');
SELECT * FROM analyze_times('SELECT count(*) FROM sort_src a JOIN (SELECT * FROM sort_src LIMIT 50) b ON a.a4 < b.a4');
SET gpuops.enable_hashjoin = off;
SET enable_mergejoin = on;
SELECT * FROM analyze_times('SELECT count(*) FROM sort_src a JOIN sort_src b ON a.a4 = b.a4');
RESET gpuops.enable_hashjoin;
RESET enable_hashjoin;
RESET enable_mergejoin;
DROP FUNCTION analyze_times(text);

-- rescans: with new parameters (the input changes) and without
SELECT check_sort($q$
  SELECT o.i AS k, (SELECT array_agg(a8) FROM (SELECT a8 FROM sort_src WHERE a4 = o.i ORDER BY a8 DESC) s) AS a
  FROM generate_series(-3, 3) o(i) ORDER BY o.i$q$);
SELECT o.i, s.a8 FROM generate_series(1, 3) o(i),
  LATERAL (SELECT a8 FROM sort_src WHERE a4 = o.i * 1000 ORDER BY a8 LIMIT 2) s ORDER BY 1, 2;
SET gpuops.enabled = off;
SELECT o.i, s.a8 FROM generate_series(1, 3) o(i),
  LATERAL (SELECT a8 FROM sort_src WHERE a4 = o.i * 1000 ORDER BY a8 LIMIT 2) s ORDER BY 1, 2;
RESET gpuops.enabled;
-- an uncorrelated sorted subquery scanned again for each outer row
SELECT count(*), sum(x.rn * y.i) FROM generate_series(1, 3) y(i),
  LATERAL (SELECT row_number() OVER () AS rn, k FROM (SELECT k FROM sort_presorted ORDER BY k DESC OFFSET 0) s) x;
SET gpuops.enabled = off;
SELECT count(*), sum(x.rn * y.i) FROM generate_series(1, 3) y(i),
  LATERAL (SELECT row_number() OVER () AS rn, k FROM (SELECT k FROM sort_presorted ORDER BY k DESC OFFSET 0) s) x;
RESET gpuops.enabled;

-- a scrollable cursor moves both ways (a8 is unique)
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT a8 FROM sort_src WHERE a8 IS NOT NULL ORDER BY a8;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 1 FROM c;
FETCH FORWARD 2 FROM c;
FETCH BACKWARD 1 FROM c;
MOVE ABSOLUTE 0 IN c;
FETCH 1 FROM c;
FETCH ABSOLUTE 100000 FROM c;
COMMIT;
SET gpuops.enabled = off;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT a8 FROM sort_src WHERE a8 IS NOT NULL ORDER BY a8;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 1 FROM c;
FETCH FORWARD 2 FROM c;
FETCH BACKWARD 1 FROM c;
MOVE ABSOLUTE 0 IN c;
FETCH 1 FROM c;
FETCH ABSOLUTE 100000 FROM c;
COMMIT;
RESET gpuops.enabled;

-- prepared statements, generic and custom plans: the plan uses GpuSort and
-- the rows (in order) are PostgreSQL's
PREPARE p(int) AS SELECT a8, id FROM sort_src WHERE a4 > $1 ORDER BY a8 DESC;
CREATE FUNCTION compare_tables(a regclass, b regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint; d bigint; x bigint; y bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %s', a) INTO n;
  EXECUTE format('SELECT count(*) FROM (SELECT row_number() OVER () rn, a8 FROM %s) p
                  FULL JOIN (SELECT row_number() OVER () rn, a8 FROM %s) q USING (rn)
                  WHERE p.a8 IS DISTINCT FROM q.a8', a, b) INTO d;
  EXECUTE format('SELECT count(*) FROM (TABLE %s EXCEPT ALL TABLE %s) z', a, b) INTO x;
  EXECUTE format('SELECT count(*) FROM (TABLE %s EXCEPT ALL TABLE %s) z', b, a) INTO y;
  RETURN format('rows=%s order_diff=%s extra=%s missing=%s', n, d, x, y);
END $$;
SET gpuops.enabled = off;
CREATE TEMP TABLE p_off_1 AS SELECT a8, id FROM sort_src WHERE a4 > 5000 ORDER BY a8 DESC;
CREATE TEMP TABLE p_off_2 AS SELECT a8, id FROM sort_src WHERE a4 > -5000 ORDER BY a8 DESC;
RESET gpuops.enabled;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE p(5000);
CREATE TEMP TABLE p_on_1 AS EXECUTE p(5000);
SELECT compare_tables('p_on_1', 'p_off_1');
SET plan_cache_mode = force_custom_plan;
EXPLAIN (COSTS OFF) EXECUTE p(-5000);
CREATE TEMP TABLE p_on_2 AS EXECUTE p(-5000);
SELECT compare_tables('p_on_2', 'p_off_2');
RESET plan_cache_mode;
DEALLOCATE p;
