-- pgTAP: the GUCs of doc/contract.md exist with their types, defaults, units,
-- ranges and contexts; valid values can be SET; bad values raise 22023;
-- superuser-only settings raise 42501 for a non-superuser.
-- Runs as superuser in a database with gpuops and pgtap installed.
BEGIN;
SELECT plan(188);

-- name, vartype, boot_val (pg_settings, base unit), shown default
-- (current_setting), unit, context, min_val, max_val (NULL: not fixed), enum values
CREATE TEMP TABLE want_guc (
  name text PRIMARY KEY, vartype text, boot_val text, shown text, unit text,
  context text, min_val text, max_val text, enumvals text[]);
INSERT INTO want_guc VALUES
  ('gpuops.enabled',             'bool',    'on',     'on',     '',   'user',      NULL, NULL, NULL),
  ('gpuops.enable_sort',         'bool',    'on',     'on',     '',   'user',      NULL, NULL, NULL),
  ('gpuops.enable_hashjoin',     'bool',    'on',     'on',     '',   'user',      NULL, NULL, NULL),
  ('gpuops.enable_mergejoin',    'bool',    'on',     'on',     '',   'user',      NULL, NULL, NULL),
  ('gpuops.enable_nestloop',     'bool',    'on',     'on',     '',   'user',      NULL, NULL, NULL),
  ('gpuops.enable_agg',          'bool',    'on',     'on',     '',   'user',      NULL, NULL, NULL),
  ('gpuops.device',              'enum',    'auto',   'auto',   '',   'user',      NULL, NULL, '{auto,gpu,cpu}'),
  ('gpuops.cpu_fallback',        'enum',    'notice', 'notice', '',   'user',      NULL, NULL, '{off,on,notice}'),
  ('gpuops.min_rows',            'integer', '100000', '100000', '',   'user',      '0',  '2147483647', NULL),
  ('gpuops.device_memory_limit', 'integer', '0',      '0',      'MB', 'superuser', '0',  NULL, NULL),
  ('gpuops.host_memory_limit',   'integer', '-1',     '-1',     'kB', 'user',      '-1', '2147483647', NULL),
  ('gpuops.pinned_pool_size',    'integer', '256',    '256MB',  'MB', 'superuser', '16', '65536', NULL),
  ('gpuops.batch_size',          'integer', '16',     '16MB',   'MB', 'superuser', '1',  '1024', NULL),
  ('gpuops.streams',             'integer', '4',      '4',      '',   'superuser', '1',  '32', NULL),
  ('gpuops.startup_cost',        'real',    '1000',   '1000',   '',   'user',      '0',  NULL, NULL),
  ('gpuops.parallel_startup_cost', 'real',  '500000', '500000', '',   'user',      '0',  NULL, NULL),
  ('gpuops.tuple_cost',          'real',    '0.04',   '0.04'  , '',   'user',      '0',  NULL, NULL),
  ('gpuops.transfer_cost',       'real',    '2',      '2',      '',   'user',      '0',  NULL, NULL),
  ('gpuops.fault_injection',     'enum',    'none',   'none',   '',   'superuser', NULL, NULL,
                                 '{none,no_device,out_of_memory,kernel_error}');

-- 19 GUCs x 5 checks = 95
SELECT ok(current_setting(w.name, true) IS NOT NULL, w.name || ' exists')
  FROM want_guc w ORDER BY w.name;
SELECT is(s.vartype, w.vartype, w.name || ' is of type ' || w.vartype)
  FROM want_guc w LEFT JOIN pg_settings s USING (name) ORDER BY w.name;
SELECT is(s.boot_val, w.boot_val, w.name || ' defaults to ' || w.shown)
  FROM want_guc w LEFT JOIN pg_settings s USING (name) ORDER BY w.name;
SELECT is(coalesce(s.unit, ''), w.unit, w.name || ' unit is ' || coalesce(nullif(w.unit, ''), 'none'))
  FROM want_guc w LEFT JOIN pg_settings s USING (name) ORDER BY w.name;
SELECT is(s.context, w.context, w.name || ' can be set by ' || w.context)
  FROM want_guc w LEFT JOIN pg_settings s USING (name) ORDER BY w.name;

-- what current_setting() shows, where the configuration does not override it
-- (make check sets gpuops.device = cpu in postgresql.conf): 19
SELECT CASE WHEN s.source = 'default'
            THEN is(current_setting(w.name, true), w.shown, w.name || ' shows ' || w.shown)
            ELSE skip(w.name || ' is set by ' || coalesce(s.source, '?') || ', default not visible', 1) END
  FROM want_guc w LEFT JOIN pg_settings s USING (name) ORDER BY w.name;

-- ranges fixed by the contract: 10 min_val + 5 max_val = 15
SELECT is(s.min_val, w.min_val, w.name || ' minimum is ' || w.min_val)
  FROM want_guc w LEFT JOIN pg_settings s USING (name) WHERE w.min_val IS NOT NULL ORDER BY w.name;
SELECT is(s.max_val, w.max_val, w.name || ' maximum is ' || w.max_val)
  FROM want_guc w LEFT JOIN pg_settings s USING (name) WHERE w.max_val IS NOT NULL ORDER BY w.name;

-- enum values: 3
SELECT ok(coalesce(s.enumvals @> w.enumvals, false),
          w.name || ' accepts ' || array_to_string(w.enumvals, ', '))
  FROM want_guc w LEFT JOIN pg_settings s USING (name) WHERE w.enumvals IS NOT NULL ORDER BY w.name;

-- SET with valid values (as superuser): 21 lives_ok + 6 is = 27
SELECT lives_ok('SET gpuops.enabled = off', 'SET gpuops.enabled = off');
SELECT lives_ok('SET gpuops.enable_sort = off', 'SET gpuops.enable_sort = off');
SELECT lives_ok('SET gpuops.enable_hashjoin = false', 'SET gpuops.enable_hashjoin = false');
SELECT lives_ok('SET gpuops.enable_mergejoin = 0', 'SET gpuops.enable_mergejoin = 0');
SELECT lives_ok('SET gpuops.enable_nestloop = no', 'SET gpuops.enable_nestloop = no');
SELECT lives_ok('SET gpuops.enable_agg = off', 'SET gpuops.enable_agg = off');
SELECT lives_ok('SET gpuops.device = gpu', 'SET gpuops.device = gpu');
SELECT lives_ok('SET gpuops.device = cpu', 'SET gpuops.device = cpu');
SELECT is(current_setting('gpuops.device'), 'cpu', 'gpuops.device shows cpu after SET');
SELECT lives_ok('SET gpuops.cpu_fallback = off', 'SET gpuops.cpu_fallback = off');
SELECT is(current_setting('gpuops.cpu_fallback'), 'off', 'gpuops.cpu_fallback shows off after SET');
SELECT lives_ok('SET gpuops.min_rows = 0', 'SET gpuops.min_rows = 0');
SELECT lives_ok('SET gpuops.device_memory_limit = ''2GB''', 'SET gpuops.device_memory_limit = 2GB');
SELECT is(current_setting('gpuops.device_memory_limit'), '2GB', 'gpuops.device_memory_limit shows 2GB after SET');
SELECT lives_ok('SET gpuops.host_memory_limit = ''2GB''', 'SET gpuops.host_memory_limit = 2GB');
SELECT is(current_setting('gpuops.host_memory_limit'), '2GB', 'gpuops.host_memory_limit shows 2GB after SET');
SELECT lives_ok('SET gpuops.parallel_startup_cost = 0', 'SET gpuops.parallel_startup_cost = 0');
SELECT lives_ok('SET gpuops.pinned_pool_size = ''16MB''', 'SET gpuops.pinned_pool_size = 16MB');
SELECT lives_ok('SET gpuops.batch_size = ''1GB''', 'SET gpuops.batch_size = 1GB');
SELECT is(current_setting('gpuops.batch_size'), '1GB', 'gpuops.batch_size shows 1GB after SET');
SELECT lives_ok('SET gpuops.streams = 32', 'SET gpuops.streams = 32');
SELECT lives_ok('SET gpuops.startup_cost = 0', 'SET gpuops.startup_cost = 0');
SELECT lives_ok('SET gpuops.tuple_cost = 0.01', 'SET gpuops.tuple_cost = 0.01');
SELECT lives_ok('SET gpuops.transfer_cost = 0.5', 'SET gpuops.transfer_cost = 0.5');
SELECT lives_ok('SET gpuops.fault_injection = kernel_error', 'SET gpuops.fault_injection = kernel_error (superuser)');
SELECT is(current_setting('gpuops.fault_injection'), 'kernel_error', 'gpuops.fault_injection shows kernel_error after SET');
SELECT lives_ok('RESET gpuops.fault_injection', 'RESET gpuops.fault_injection');
RESET ALL;

-- invalid enum / bool values and out-of-range numbers: 22023 (19)
SELECT throws_ok('SET gpuops.enabled = maybe', '22023', NULL, 'gpuops.enabled = maybe: 22023');
SELECT throws_ok('SET gpuops.enable_sort = sometimes', '22023', NULL, 'gpuops.enable_sort = sometimes: 22023');
SELECT throws_ok('SET gpuops.device = tpu', '22023', NULL, 'gpuops.device = tpu: 22023');
SELECT throws_ok('SET gpuops.cpu_fallback = always', '22023', NULL, 'gpuops.cpu_fallback = always: 22023');
SELECT throws_ok('SET gpuops.fault_injection = meteor_strike', '22023', NULL, 'gpuops.fault_injection = meteor_strike: 22023');
SELECT throws_ok('SET gpuops.min_rows = -1', '22023', NULL, 'gpuops.min_rows = -1: 22023');
SELECT throws_ok('SET gpuops.min_rows = lots', '22023', NULL, 'gpuops.min_rows = lots: 22023');
SELECT throws_ok('SET gpuops.device_memory_limit = -1', '22023', NULL, 'gpuops.device_memory_limit = -1: 22023');
SELECT throws_ok('SET gpuops.pinned_pool_size = ''8MB''', '22023', NULL, 'gpuops.pinned_pool_size = 8MB: 22023');
SELECT throws_ok('SET gpuops.pinned_pool_size = ''65537MB''', '22023', NULL, 'gpuops.pinned_pool_size = 65537MB: 22023');
SELECT throws_ok('SET gpuops.batch_size = 0', '22023', NULL, 'gpuops.batch_size = 0: 22023');
SELECT throws_ok('SET gpuops.batch_size = ''2GB''', '22023', NULL, 'gpuops.batch_size = 2GB: 22023');
SELECT throws_ok('SET gpuops.streams = 0', '22023', NULL, 'gpuops.streams = 0: 22023');
SELECT throws_ok('SET gpuops.streams = 33', '22023', NULL, 'gpuops.streams = 33: 22023');
SELECT throws_ok('SET gpuops.startup_cost = -1', '22023', NULL, 'gpuops.startup_cost = -1: 22023');
SELECT throws_ok('SET gpuops.tuple_cost = -0.5', '22023', NULL, 'gpuops.tuple_cost = -0.5: 22023');
SELECT throws_ok('SET gpuops.transfer_cost = -1', '22023', NULL, 'gpuops.transfer_cost = -1: 22023');
SELECT throws_ok('SET gpuops.host_memory_limit = -2', '22023', NULL, 'gpuops.host_memory_limit = -2: 22023');
SELECT throws_ok('SET gpuops.parallel_startup_cost = -1', '22023', NULL, 'gpuops.parallel_startup_cost = -1: 22023');

-- a non-superuser: user settings work, superuser ones raise 42501 (10)
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'gpuops_tap_nosuper') THEN
    CREATE ROLE gpuops_tap_nosuper NOSUPERUSER;
  END IF;
END $$;
SET ROLE gpuops_tap_nosuper;
SELECT lives_ok('SET gpuops.enabled = off', 'non-superuser: SET gpuops.enabled works');
SELECT lives_ok('SET gpuops.device = cpu', 'non-superuser: SET gpuops.device works');
SELECT lives_ok('SET gpuops.min_rows = 10', 'non-superuser: SET gpuops.min_rows works');
SELECT lives_ok('SET gpuops.cpu_fallback = off', 'non-superuser: SET gpuops.cpu_fallback works');
SELECT throws_ok('SET gpuops.fault_injection = no_device', '42501', NULL, 'non-superuser: SET gpuops.fault_injection = no_device: 42501');
SELECT throws_ok('SET gpuops.fault_injection = none', '42501', NULL, 'non-superuser: SET gpuops.fault_injection = none: 42501');
SELECT throws_ok('SET gpuops.device_memory_limit = 100', '42501', NULL, 'non-superuser: SET gpuops.device_memory_limit: 42501');
SELECT throws_ok('SET gpuops.pinned_pool_size = ''32MB''', '42501', NULL, 'non-superuser: SET gpuops.pinned_pool_size: 42501');
SELECT throws_ok('SET gpuops.batch_size = ''8MB''', '42501', NULL, 'non-superuser: SET gpuops.batch_size: 42501');
SELECT throws_ok('SET gpuops.streams = 2', '42501', NULL, 'non-superuser: SET gpuops.streams: 42501');
RESET ROLE;
RESET ALL;

SELECT * FROM finish();
ROLLBACK;
