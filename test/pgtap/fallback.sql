-- pgTAP: device failures (gpuops.fault_injection) under each gpuops.cpu_fallback:
--   on / notice -> the query finishes on the CPU with the same result as PostgreSQL;
--   off         -> ERROR with the contract's SQLSTATE
--                  (no_device 55000, out_of_memory 53200, kernel_error 58000).
-- Uses the CPU backend (gpuops.device = cpu), so it runs without a GPU. The
-- query under test is always "SELECT k FROM gpuops_tap_fb ORDER BY k", and the
-- plan is checked to contain the GpuSort node. Runs as superuser.
BEGIN;
SELECT plan(19);

SET client_min_messages = warning;      -- the fallback NOTICEs are expected
SET cursor_tuple_fraction = 1.0;        -- plan cursors like plain queries

-- 20000 rows; int8 key with NULLs, many duplicates, negatives and extremes
CREATE TABLE gpuops_tap_fb AS
SELECT i AS id,
       CASE WHEN i % 97 = 0 THEN NULL
            WHEN i % 1000 = 1 THEN 9223372036854775807 - i
            WHEN i % 1000 = 2 THEN -9223372036854775807 + i
            ELSE ((i::int8 * 7919) % 5000) - 2500 END::int8 AS k
  FROM generate_series(1, 20000) AS i;
ANALYZE gpuops_tap_fb;

CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  line text;
  acc  text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    acc := acc || line || E'\n';
  END LOOP;
  RETURN acc;
END $$;

SELECT is((SELECT count(*)::int FROM gpuops_tap_fb), 20000, 'test table has 20000 rows');
SELECT ok((SELECT count(*) FROM gpuops_tap_fb WHERE k IS NULL) > 0, 'test table has NULL keys');
SELECT ok((SELECT count(DISTINCT k) < count(k) FROM gpuops_tap_fb), 'test table has duplicate keys');

SET gpuops.device = cpu;
SET gpuops.min_rows = 0;
-- pgTAP's own bookkeeping (SELECT max(id) FROM __tcache__ ...) would plan
-- GpuQuery and fail under the injected faults: this file tests GpuSort's
SET gpuops.enable_query = off;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET gpuops.fault_injection = none;

-- the node is used when enabled, and not when disabled
SET gpuops.enabled = off;
SELECT doesnt_match(pg_temp.plan_of('SELECT k FROM gpuops_tap_fb ORDER BY k'), 'GpuSort',
                    'enabled = off: the plan has no GpuSort');
SET gpuops.enabled = on;
SELECT matches(pg_temp.plan_of('SELECT k FROM gpuops_tap_fb ORDER BY k'), 'Custom Scan \(GpuSort\)',
               'enabled = on, device = cpu, min_rows = 0: the plan uses Custom Scan (GpuSort)');

-- no fault: same result as PostgreSQL's sort
SET gpuops.cpu_fallback = off;
SET gpuops.enabled = off;
DECLARE want CURSOR FOR SELECT k FROM gpuops_tap_fb ORDER BY k;
SET gpuops.enabled = on;
DECLARE have CURSOR FOR SELECT k FROM gpuops_tap_fb ORDER BY k;
SELECT results_eq('have'::refcursor, 'want'::refcursor, 'no fault: GpuSort (cpu backend) sorts like PostgreSQL');
CLOSE have; CLOSE want;

-- compare: with the session's fault / fallback settings, the GpuSort result
-- (gpuops on) must equal PostgreSQL's (gpuops off)
CREATE FUNCTION pg_temp.same_as_postgres(descr text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  want refcursor := 'want';
  have refcursor := 'have';
  res  text;
BEGIN
  SET LOCAL gpuops.enabled = off;
  OPEN want FOR EXECUTE 'SELECT k FROM gpuops_tap_fb ORDER BY k';
  SET LOCAL gpuops.enabled = on;
  OPEN have FOR EXECUTE 'SELECT k FROM gpuops_tap_fb ORDER BY k';
  res := results_eq(have, want, descr);
  CLOSE have; CLOSE want;
  RETURN res;
END $$;

-- fault: no_device (55000)
SET gpuops.fault_injection = no_device;
SELECT matches(pg_temp.plan_of('SELECT k FROM gpuops_tap_fb ORDER BY k'), 'Custom Scan \(GpuSort\)',
               'no_device: the plan still uses GpuSort');
SET gpuops.cpu_fallback = on;
SELECT pg_temp.same_as_postgres('no_device, cpu_fallback = on: same result as PostgreSQL');
SET gpuops.cpu_fallback = notice;
SELECT pg_temp.same_as_postgres('no_device, cpu_fallback = notice: same result as PostgreSQL');
SET gpuops.cpu_fallback = off;
SELECT throws_ok('SELECT k FROM gpuops_tap_fb ORDER BY k', '55000', NULL,
                 'no_device, cpu_fallback = off: ERROR 55000');

-- fault: out_of_memory (53200)
SET gpuops.fault_injection = out_of_memory;
SELECT matches(pg_temp.plan_of('SELECT k FROM gpuops_tap_fb ORDER BY k'), 'Custom Scan \(GpuSort\)',
               'out_of_memory: the plan still uses GpuSort');
SET gpuops.cpu_fallback = on;
SELECT pg_temp.same_as_postgres('out_of_memory, cpu_fallback = on: same result as PostgreSQL');
SET gpuops.cpu_fallback = notice;
SELECT pg_temp.same_as_postgres('out_of_memory, cpu_fallback = notice: same result as PostgreSQL');
SET gpuops.cpu_fallback = off;
SELECT throws_ok('SELECT k FROM gpuops_tap_fb ORDER BY k', '53200', NULL,
                 'out_of_memory, cpu_fallback = off: ERROR 53200');

-- fault: kernel_error (58000)
SET gpuops.fault_injection = kernel_error;
SELECT matches(pg_temp.plan_of('SELECT k FROM gpuops_tap_fb ORDER BY k'), 'Custom Scan \(GpuSort\)',
               'kernel_error: the plan still uses GpuSort');
SET gpuops.cpu_fallback = on;
SELECT pg_temp.same_as_postgres('kernel_error, cpu_fallback = on: same result as PostgreSQL');
SET gpuops.cpu_fallback = notice;
SELECT pg_temp.same_as_postgres('kernel_error, cpu_fallback = notice: same result as PostgreSQL');
SET gpuops.cpu_fallback = off;
SELECT throws_ok('SELECT k FROM gpuops_tap_fb ORDER BY k', '58000', NULL,
                 'kernel_error, cpu_fallback = off: ERROR 58000');

-- after the errors, the session still sorts correctly
SET gpuops.fault_injection = none;
SELECT pg_temp.same_as_postgres('after the injected errors: same result as PostgreSQL');

RESET ALL;
SELECT * FROM finish();
ROLLBACK;
