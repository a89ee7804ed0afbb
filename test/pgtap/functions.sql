-- pgTAP: the SQL functions of doc/contract.md (gpuops.version, gpuops.device_info)
-- and the extension's schema. Runs as superuser in a database with gpuops and
-- pgtap installed.
BEGIN;
SELECT plan(19);

-- the extension
SELECT is((SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'gpuops'),
          'gpuops', 'extension gpuops lives in schema gpuops');
SELECT is((SELECT extrelocatable FROM pg_extension WHERE extname = 'gpuops'),
          false, 'extension gpuops is not relocatable');

-- gpuops.version()
SELECT has_function('gpuops', 'version', ARRAY[]::name[], 'gpuops.version() exists');
SELECT function_returns('gpuops', 'version', ARRAY[]::name[], 'text', 'gpuops.version() returns text');
SELECT matches(gpuops.version(), '^gpuops [0-9]', 'gpuops.version() looks like "gpuops N..."');

-- gpuops.device_info(): signature
SELECT has_function('gpuops', 'device_info', ARRAY[]::name[], 'gpuops.device_info() exists');
SELECT is(
  (SELECT array_agg(a.n || ' ' || format_type(a.t, NULL) ORDER BY a.o)
     FROM pg_proc p,
          unnest(p.proargnames, p.proallargtypes, p.proargmodes::text[]) WITH ORDINALITY AS a(n, t, m, o)
    WHERE p.oid = 'gpuops.device_info'::regproc AND a.m = 'o'),
  ARRAY['backend text', 'gpu_available boolean', 'device_name text', 'compute_capability text',
        'total_memory_mb bigint', 'free_memory_mb bigint', 'multiprocessors integer',
        'driver_version text', 'runtime_version text', 'reason text'],
  'gpuops.device_info() has the OUT columns of the contract');
SELECT is((SELECT count(*)::int FROM pg_proc p, unnest(p.proargmodes::text[]) m
            WHERE p.oid = 'gpuops.device_info'::regproc AND m <> 'o'),
          0, 'gpuops.device_info() takes no input arguments');

-- gpuops.device_info(): contents, with the session's gpuops.device
SELECT is((SELECT count(*)::int FROM gpuops.device_info()), 1, 'device_info() returns exactly one row');
SELECT ok((SELECT backend IN ('cuda', 'cpu', 'none') FROM gpuops.device_info()),
          'device_info().backend is cuda, cpu or none');
SELECT ok((SELECT gpu_available IS NOT NULL FROM gpuops.device_info()),
          'device_info().gpu_available is not null');
SELECT ok((SELECT NOT gpu_available
                  OR (device_name IS NOT NULL AND total_memory_mb > 0
                      AND free_memory_mb BETWEEN 0 AND total_memory_mb
                      AND multiprocessors > 0 AND compute_capability ~ '[0-9]')
             FROM gpuops.device_info()),
          'with a GPU, device_info() describes it (name, memory, SMs, compute capability)');

-- gpuops.device = auto: cuda with a GPU, none without
SET gpuops.device = auto;
SELECT is((SELECT backend FROM gpuops.device_info()),
          (SELECT CASE WHEN gpu_available THEN 'cuda' ELSE 'none' END FROM gpuops.device_info()),
          'device = auto: backend is cuda with a GPU, none without');

-- gpuops.device = cpu: the CPU backend
SET gpuops.device = cpu;
SELECT is((SELECT backend FROM gpuops.device_info()), 'cpu', 'device = cpu: backend is cpu');
SELECT is((SELECT count(*)::int FROM gpuops.device_info()), 1, 'device = cpu: still one row');

-- gpuops.device = gpu: device_info() never raises, even without a GPU
SET gpuops.device = gpu;
SELECT lives_ok('SELECT * FROM gpuops.device_info()', 'device = gpu: device_info() does not raise');

-- with gpuops switched off, the functions still work
SET gpuops.enabled = off;
SELECT lives_ok('SELECT * FROM gpuops.device_info()', 'enabled = off: device_info() works');
SELECT lives_ok('SELECT gpuops.version()', 'enabled = off: version() works');
RESET ALL;

-- a non-superuser may call both
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'gpuops_tap_nosuper') THEN
    CREATE ROLE gpuops_tap_nosuper NOSUPERUSER;
  END IF;
END $$;
GRANT USAGE ON SCHEMA gpuops TO gpuops_tap_nosuper;
SET ROLE gpuops_tap_nosuper;
SELECT lives_ok('SELECT gpuops.version(), (gpuops.device_info()).*', 'a non-superuser can call version() and device_info()');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
