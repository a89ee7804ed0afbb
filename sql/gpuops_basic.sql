-- The extension's objects, its functions and its settings.
SELECT extname, extversion, extnamespace::regnamespace FROM pg_extension WHERE extname = 'gpuops';
SELECT gpuops.version() ~ '^gpuops [0-9]+\.[0-9]+\.[0-9]+ \(CUDA [0-9]+\.[0-9]+,( sm_[0-9]+)+, PTX compute_[0-9]+\)$' AS version_ok;
-- device_info: one row; the backend is the one this server runs on
SELECT count(*) FROM gpuops.device_info();
SELECT backend IN ('cpu', 'cuda') AS backend_ok,
       (backend = 'cuda') = coalesce(gpu_available, false) OR backend = 'cpu' AS consistent,
       gpu_available OR reason IS NOT NULL AS reason_when_no_gpu
FROM gpuops.device_info();
SET gpuops.device = cpu;
SELECT backend FROM gpuops.device_info();
RESET gpuops.device;
-- the page service: off without a GPU (it exits at once), mapping or serving with one
SELECT (s.state <> 'off') = coalesce(d.gpu_available, false) AS state_matches_gpu,
       (s.state <> 'off') = (s.pid IS NOT NULL) AS pid_when_running, s.channels,
       s.channels_in_use BETWEEN 0 AND s.channels AS in_use_ok
FROM gpuops.page_service() s, gpuops.device_info() d;

-- every setting exists; SET/SHOW work; bad values get PostgreSQL's errors
SELECT name, setting, unit, context, vartype FROM pg_settings
WHERE name LIKE 'gpuops.%' AND name NOT IN ('gpuops.device')
ORDER BY name;
SET gpuops.min_rows = 10;
SHOW gpuops.min_rows;
SET gpuops.min_rows = -1;
SET gpuops.device = 'tpu';
SET gpuops.cpu_fallback = 'sometimes';
SET gpuops.cpu_fallback = on;
SHOW gpuops.cpu_fallback;
SET gpuops.fault_injection = 'meteor';
SET gpuops.startup_cost = -5;
SET gpuops.streams = 0;
SET gpuops.enable_sort = 'maybe';
SET gpuops.no_such_setting = 1;
RESET ALL;
SHOW gpuops.cpu_fallback;
SHOW gpuops.min_rows;

-- only superusers may inject faults
CREATE ROLE gpuops_regress_user NOSUPERUSER;
SET ROLE gpuops_regress_user;
SET gpuops.fault_injection = 'out_of_memory';
SET gpuops.min_rows = 0;
SHOW gpuops.min_rows;
RESET ROLE;
DROP ROLE gpuops_regress_user;
