-- test/stress: tables, the query catalog, PostgreSQL's answers, and the
-- check each stress statement runs.  :rows sets the size of st_a.
CREATE TABLE st_a AS
SELECT i AS id,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i::int8 * 7919) % (:rows / 10 + 1) END::int4 AS k,
       (i % 1000)::int8 AS g,
       CASE WHEN i % 13 = 0 THEN NULL ELSE (i::int8 * 104729) % 1000003 END::int8 AS v,
       CASE WHEN i % 19 = 0 THEN 'NaN'::float8 WHEN i % 23 = 0 THEN '-0'::float8
            ELSE ((i::int8 * 37) % 10007) / 7.0 END AS f,
       ((i::int8 * 31) % 100003)::numeric / 100 AS n,
       md5(i::text) AS t
FROM generate_series(1, :rows) i;
CREATE TABLE st_b AS
SELECT i AS id,
       CASE WHEN i % 11 = 0 THEN NULL ELSE (i::int8 * 13) % (:rows / 10 + 1) END::int8 AS k,
       (i::int8 * 7) % 1000003 AS v,
       (i::int8 * 997) % 1000003 AS lo
FROM generate_series(1, :rows / 20) i;
CREATE TABLE st_r AS
SELECT i AS id, (i::int8 * 9973) % 1000003 AS lo, (i::int8 * 9973) % 1000003 + 500 AS hi
FROM generate_series(1, 200) i;
ANALYZE st_a;
ANALYZE st_b;
ANALYZE st_r;

-- the catalog: each query with the settings that steer it to its gpuops
-- node, and whether its order is part of the answer (then its ORDER BY
-- is total)
CREATE TABLE stress_q (id serial PRIMARY KEY, node text, settings text, ordered bool, q text);
INSERT INTO stress_q (node, settings, ordered, q) VALUES
 ('GpuSort', '', true, 'SELECT id, f, t FROM st_a ORDER BY f, id'),
 ('GpuSort', '', true, 'SELECT id, v FROM st_a ORDER BY v DESC NULLS LAST, id LIMIT 100'),
 ('GpuSort', '', true, 'SELECT t, id FROM st_a ORDER BY t COLLATE "C", id'),
 ('GpuSort', '', true, 'SELECT n, g, id FROM st_a ORDER BY n, g DESC, id'),
 ('GpuHashJoin', 'enable_hashjoin=off,enable_mergejoin=off', false,
  'SELECT a.id, b.id FROM st_a a JOIN st_b b ON a.k = b.k'),
 ('GpuHashJoin', 'enable_hashjoin=off,enable_mergejoin=off', false,
  'SELECT a.id, b.id FROM st_a a LEFT JOIN st_b b ON a.k = b.k AND b.v > a.v'),
 ('GpuHashJoin', 'enable_hashjoin=off,enable_mergejoin=off', false,
  'SELECT a.id FROM st_a a WHERE EXISTS (SELECT 1 FROM st_b b WHERE b.k = a.k AND b.v > a.v)'),
 ('GpuHashJoin', 'enable_hashjoin=off,enable_mergejoin=off', false,
  'SELECT a.id FROM st_a a WHERE NOT EXISTS (SELECT 1 FROM st_b b WHERE b.k = a.k AND b.lo < a.v)'),
 ('GpuMergeJoin', 'enable_hashjoin=off,gpuops.enable_hashjoin=off', false,
  'SELECT a.id, b.id FROM st_a a JOIN st_b b ON a.k = b.k AND a.v <> b.v'),
 ('GpuNestLoop', '', false,
  'SELECT a.id, r.id FROM st_a a JOIN st_r r ON a.v BETWEEN r.lo AND r.hi'),
 ('GpuNestLoop', '', false,
  'SELECT a.id FROM st_a a WHERE EXISTS (SELECT 1 FROM st_r r WHERE a.v > r.lo AND a.v < r.hi AND a.t > md5(r.id::text))'),
 ('GpuAgg', 'gpuops.enable_query=off', false, 'SELECT g, count(*), sum(v), min(t), max(n), count(f) FROM st_a GROUP BY g'),
 ('GpuAgg', 'gpuops.enable_query=off', false, 'SELECT k % 100, sum(n), avg(n), count(DISTINCT g) FROM st_a GROUP BY 1'),
 ('GpuAgg', 'gpuops.enable_query=off', false, 'SELECT count(DISTINCT k), sum(v), max(f) FROM st_a'),
 ('GpuHashJoin', 'gpuops.enable_query=off,enable_hashjoin=off,enable_mergejoin=off,parallel_setup_cost=0,parallel_tuple_cost=0,min_parallel_table_scan_size=0,max_parallel_workers_per_gather=2', false,
  'SELECT a.g, count(*) FROM st_a a JOIN st_b b ON a.k = b.k GROUP BY a.g'),
 ('GpuAgg', 'gpuops.enable_query=off,parallel_setup_cost=0,parallel_tuple_cost=0,min_parallel_table_scan_size=0,max_parallel_workers_per_gather=2', false,
  'SELECT g % 7, sum(v), count(*) FROM st_a GROUP BY 1'),
 ('GpuQuery', 'gpuops.enable_agg=off', false, 'SELECT g, count(*), sum(v), avg(v), max(k) FROM st_a WHERE t LIKE ''a%'' OR v < 0 GROUP BY g'),
 ('GpuQuery', 'parallel_setup_cost=0,parallel_tuple_cost=0,min_parallel_table_scan_size=0,max_parallel_workers_per_gather=2', false,
  'SELECT k % 100, sum(v), count(*) FROM st_a GROUP BY 1'),
 ('GpuQuery', 'enable_hashjoin=off,enable_mergejoin=off,gpuops.enable_hashjoin=off,gpuops.enable_mergejoin=off,gpuops.enable_nestloop=off', false,
  'SELECT a.g % 10, count(*), sum(b.v) FROM st_a a JOIN st_b b ON a.k = b.k GROUP BY 1');

-- stress_hash(q, ordered): a digest of q's rows, in order or as a multiset
CREATE FUNCTION stress_hash(q text, ordered bool) RETURNS text LANGUAGE plpgsql AS $$
DECLARE h text;
BEGIN
  EXECUTE format('SELECT md5(coalesce(string_agg(r__::text, E''\n''%s), '''')) FROM (%s) r__',
                 CASE WHEN ordered THEN '' ELSE ' ORDER BY r__::text' END, q) INTO h;
  RETURN h;
END $$;

-- stress_settings(s): applies 'name=value,...' to the current transaction
CREATE FUNCTION stress_settings(s text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE kv text;
BEGIN
  FOREACH kv IN ARRAY string_to_array(s, ',') LOOP
    PERFORM set_config(split_part(kv, '=', 1), split_part(kv, '=', 2), true);
  END LOOP;
END $$;

-- PostgreSQL's answers (gpuops off, PostgreSQL's own plans)
SET gpuops.enabled = off;
CREATE TABLE stress_expected AS SELECT id, stress_hash(q, ordered) AS h FROM stress_q;
RESET gpuops.enabled;

CREATE TABLE stress_mismatch (qid int, at timestamptz DEFAULT clock_timestamp(), got text);
CREATE TABLE stress_slow (qid int, timeout_ms int, took_ms float8);

-- stress_check(qid): runs the query under its settings with gpuops on;
-- a result other than PostgreSQL's is recorded
CREATE FUNCTION stress_check(qid int) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE r record; h text;
BEGIN
  SELECT * INTO r FROM stress_q WHERE id = qid;
  PERFORM stress_settings(r.settings);
  h := stress_hash(r.q, r.ordered);
  IF h IS DISTINCT FROM (SELECT e.h FROM stress_expected e WHERE e.id = qid) THEN
    INSERT INTO stress_mismatch (qid, got) VALUES (qid, h);
    RETURN false;
  END IF;
  RETURN true;
END $$;

-- stress_plan_used(qid): whether the query's plan, under its settings,
-- uses the node it is aimed at (one transaction per call: the settings
-- are local to it)
CREATE FUNCTION stress_plan_used(qid int) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE r record; line text;
BEGIN
  SELECT * INTO r FROM stress_q WHERE id = qid;
  PERFORM stress_settings(r.settings);
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || r.q LOOP
    IF line LIKE '%Custom Scan (' || r.node || ')%' THEN RETURN true; END IF;
  END LOOP;
  RETURN false;
END $$;
