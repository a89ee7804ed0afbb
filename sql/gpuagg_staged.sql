-- GpuAgg over rows staged by parallel workers (GpuStage): the workers and
-- the leader read their share of the scan, compute the group keys and the
-- aggregate inputs, and copy them in batches into shared memory; Gather
-- carries no tuple; the one GpuAgg above it aggregates all of them.  Every
-- result is compared with PostgreSQL's own as text.
-- float sums, averages and variances too (off by default: their rounding
-- is a parallel plan's); these tables' values give PostgreSQL's digits
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests GpuAgg and GpuStage.
SET gpuops.enable_query = off;
SET gpuops.enable_float_aggs = on;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
-- no staging cost: the staged plan beats PostgreSQL's partial aggregation
-- even for these small tables
SET gpuops.tuple_cost = 0;
SET gpuops.cpu_fallback = off;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = on;

-- check_staged(q): check_agg(q), and whether the input came through GpuStage
CREATE FUNCTION check_staged(q text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN check_agg(q) || ' staged=' || uses_node(q, 'GpuStage');
END $$;

-- staged_counts(q): rows staged (all processes), read by GpuAgg, returned by Gather
CREATE FUNCTION staged_counts(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE j jsonb := explain_json(q); agg jsonb; stage jsonb;
BEGIN
  agg := j->0->'Plan';
  WHILE agg IS NOT NULL AND agg->>'Custom Plan Provider' IS DISTINCT FROM 'GpuAgg' LOOP
    agg := agg->'Plans'->0;
  END LOOP;
  stage := agg->'Plans'->0->'Plans'->0;
  RETURN format('%s: staged %s rows, GpuAgg read %s, gather returned %s',
                stage->>'Custom Plan Provider', stage->>'Staged Rows', agg->>'Input Rows',
                (agg->'Plans'->0->>'Actual Rows')::numeric::int8);
END $$;

-- 300000 rows: each of three processes fills full chunks (65536 rows,
-- taken in place) and a partial last one (copied).  Values whose sums are
-- exact in any order; no two equal-but-distinct values in a group (which
-- one a plan shows depends on its row order, in PostgreSQL's parallel
-- plans too).
CREATE TABLE stg_src AS
SELECT i AS id,
       CASE WHEN i % 97 = 0 THEN NULL ELSE (i % 500)::int4 END AS g,
       (i % 5)::int2 AS g5,
       CASE WHEN i % 89 = 0 THEN NULL ELSE (i % 20001 - 10000)::int4 END AS v4,
       CASE WHEN i % 1009 = 0 THEN 9223372036854775807
            WHEN i % 79 = 0 THEN NULL ELSE i::int8 * -1000003 END AS v8,
       CASE WHEN i % 71 = 0 THEN NULL WHEN i % 1000 = 1 THEN 'NaN'
            ELSE (i % 4001 - 2000) / 8.0 END::float8 AS f8,
       CASE WHEN i % 5 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
       date '2020-01-01' + (i % 1500) AS d,
       (i % 50) * interval '1 hour' + (i % 7) * interval '1 second' AS iv,
       CASE WHEN i % 61 = 0 THEN NULL ELSE 'key ' || (i % 37) END AS t,
       CASE WHEN i % 67 = 0 THEN NULL ELSE ((i % 3001) / 7.0)::numeric(12, 4) END AS n,
       -- TOAST-ed values: long, incompressible strings in every 5000th row
       CASE WHEN i % 5000 = 7 THEN (SELECT string_agg(md5((i * 31 + k)::text), '') FROM generate_series(1, 200) k)
            ELSE 'short ' || (i % 11) END AS long_t
FROM generate_series(1, 300000) i;
ALTER TABLE stg_src ALTER COLUMN long_t SET STORAGE EXTERNAL;
ANALYZE stg_src;

-- the plan: one GpuAgg above Gather, the staging below it
EXPLAIN (COSTS OFF) SELECT g, count(*), sum(v4), avg(v8) FROM stg_src GROUP BY g;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v4) FROM stg_src;

-- every row reaches GpuAgg; Gather returns none
SELECT staged_counts('SELECT g, count(*), sum(v4) FROM stg_src GROUP BY g');

-- fixed-width keys and every state kind
SELECT check_staged('SELECT g, count(*) AS n, count(v4), sum(v4), avg(v4), sum(v8), avg(v8) FROM stg_src GROUP BY g');
SELECT check_staged('SELECT g5, sum(f8), avg(f8), min(f8), max(f8), min(d), max(iv), bool_and(b), bool_or(b) FROM stg_src GROUP BY g5');
SELECT check_staged('SELECT g5, b, d, count(*) AS n FROM stg_src GROUP BY g5, b, d');
-- variable-length columns: text keys (a dictionary), numeric keys and
-- min/max (ranks), text min/max, count(DISTINCT), a percentile
SELECT check_staged('SELECT t, count(*) AS n, sum(v4), max(n), min(n) FROM stg_src GROUP BY t');
SELECT check_staged('SELECT n, count(*) AS c FROM stg_src GROUP BY n');
SELECT check_staged('SELECT g5, sum(n) AS s, avg(n) AS a FROM stg_src GROUP BY g5');
SELECT check_staged('SELECT g5, min(t), max(t), count(DISTINCT t) FROM stg_src GROUP BY g5');
SELECT check_staged('SELECT g5, percentile_disc(0.5) WITHIN GROUP (ORDER BY v4) FROM stg_src GROUP BY g5');
-- TOAST-ed text passes through shared memory as its pointer
SELECT check_staged('SELECT long_t, count(*) AS c, min(id) FROM stg_src GROUP BY long_t');
SELECT check_staged('SELECT g5, max(long_t) AS m, count(DISTINCT long_t) FROM stg_src GROUP BY g5');
-- expressions, FILTER, HAVING, a WHERE clause in the workers' scan
SELECT check_staged('SELECT g % 7 AS m, sum(v4 * 2) AS s, avg(f8 + 1) AS a FROM stg_src GROUP BY g % 7');
SELECT check_staged('SELECT g5, sum(v4) FILTER (WHERE b) AS s, count(*) FILTER (WHERE v4 > 0) AS c FROM stg_src GROUP BY g5');
SELECT check_staged('SELECT g, count(*) AS n, avg(v8) FROM stg_src GROUP BY g HAVING avg(v4) > 0 AND count(*) > 500');
-- (PostgreSQL's plans switched off where its estimates of few rows would win)
SET enable_hashagg = off;
SET enable_sort = off;
SELECT check_staged('SELECT g, count(*) AS n FROM stg_src WHERE id % 3 = 1 AND t LIKE ''key 1%'' GROUP BY g');
-- no GROUP BY, and an empty input (one row, NULL aggregates)
SELECT check_staged('SELECT count(*) AS n, sum(v4), avg(v8), min(d), max(t) FROM stg_src');
SELECT check_staged('SELECT count(*) AS n, sum(v4), avg(v8), max(d) FROM stg_src WHERE id < 0');
SELECT check_staged('SELECT g, count(*) AS n FROM stg_src WHERE id < 0 GROUP BY g');
RESET enable_hashagg;
RESET enable_sort;
-- overflow raises PostgreSQL's error in the leader
SELECT sum(x) FROM (SELECT g5, 9223372036854775807 - id + 1000000 AS x FROM stg_src) s;

-- the leader alone (no worker launched), workers alone
SET max_parallel_workers = 0;
SELECT check_staged('SELECT g, count(*) AS n, sum(v4), max(t) FROM stg_src GROUP BY g');
RESET max_parallel_workers;
SET parallel_leader_participation = off;
SELECT check_staged('SELECT g, count(*) AS n, sum(v4), max(t) FROM stg_src GROUP BY g');
SET parallel_leader_participation = on;

-- PL/pgSQL's SELECT INTO asks for one row, so the plan runs without
-- parallel mode: Gather runs the staging in the leader alone, which keeps
-- the chunks in its own memory
CREATE FUNCTION staged_into() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  SELECT string_agg(format('%s:%s:%s:%s', g5, n, s, m), ' ' ORDER BY g5) INTO r
  FROM (SELECT g5, count(*) AS n, sum(v4) AS s, max(t) AS m FROM stg_src GROUP BY g5) a;
  RETURN r;
END $$;
SELECT uses_node('SELECT g5, count(*) AS n, sum(v4) AS s, max(t) AS m FROM stg_src GROUP BY g5',
                 'GpuStage') AS staged;
SELECT staged_into() AS gpuops_on \gset
SET gpuops.enabled = off;
SELECT staged_into() = :'gpuops_on' AS same_as_postgres;
SET gpuops.enabled = on;
DROP FUNCTION staged_into();

-- device failures: fall back to the CPU backend over the same staged rows, or raise
SET gpuops.fault_injection = kernel_error;
SELECT g5, count(*) FROM stg_src GROUP BY g5 ORDER BY g5 LIMIT 1;
SET gpuops.cpu_fallback = on;
SET client_min_messages = warning;
SELECT check_staged('SELECT g5, count(*) AS n, avg(v8), max(t) FROM stg_src GROUP BY g5');
RESET client_min_messages;
RESET gpuops.fault_injection;
RESET gpuops.cpu_fallback;

-- switched off: the serial GpuAgg
SET gpuops.enable_parallel_staging = off;
SELECT uses_node('SELECT g, count(*) FROM stg_src GROUP BY g', 'GpuStage') AS staged_when_off;
RESET gpuops.enable_parallel_staging;

DROP TABLE stg_src;
DROP FUNCTION check_staged(text);
DROP FUNCTION staged_counts(text);
