-- gpuops extension script, version 0.1.0
\echo Use "CREATE EXTENSION gpuops" to load this file. \quit

CREATE FUNCTION gpuops.version() RETURNS text
AS 'MODULE_PATHNAME', 'gpuops_version'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION gpuops.version() IS 'gpuops version and the CUDA it was built with';

CREATE FUNCTION gpuops.device_info(
    OUT backend text,
    OUT gpu_available bool,
    OUT device_name text,
    OUT compute_capability text,
    OUT total_memory_mb bigint,
    OUT free_memory_mb bigint,
    OUT multiprocessors int,
    OUT driver_version text,
    OUT runtime_version text,
    OUT reason text)
RETURNS record
AS 'MODULE_PATHNAME', 'gpuops_device_info'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuops.device_info() IS
  'the backend gpuops would use now (cuda, cpu or none) and the GPU found, or why there is none';

CREATE FUNCTION gpuops.page_service(
    OUT state text,
    OUT pid int,
    OUT channels int,
    OUT channels_in_use int,
    OUT generation int,
    OUT map_ms double precision,
    OUT requests bigint,
    OUT cache_mb bigint,
    OUT pages bigint,
    OUT cached_pages bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'gpuops_page_service'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION gpuops.page_service() IS
  'the page service (gpuops.page_service_channels): off, mapping or serving, its channels and requests, its device page cache (gpuops.page_cache_size) and the pages gathered, cached_pages of them from that cache';

-- What ran on the GPU: per operator kind, summed over every backend since
-- the last gpuops.stat_reset() (shared memory; doc/monitoring in README.md)
CREATE FUNCTION gpuops.stat_counters(
    OUT operator text,
    OUT plans bigint,
    OUT executions bigint,
    OUT rows_in bigint,
    OUT rows_out bigint,
    OUT bytes_to_device bigint,
    OUT bytes_from_device bigint,
    OUT device_ms double precision,
    OUT fallbacks bigint,
    OUT last_fallback_reason text,
    OUT device_oom bigint,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuops_stat_counters'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW gpuops.stat AS SELECT * FROM gpuops.stat_counters();

COMMENT ON VIEW gpuops.stat IS
  'per gpuops operator kind: plans, executions, rows, bytes, device time, CPU fallbacks and device out-of-memory events, across all backends';

CREATE FUNCTION gpuops.stat_reset() RETURNS void
AS 'MODULE_PATHNAME', 'gpuops_stat_reset'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuops.stat_reset() IS 'sets every gpuops.stat counter to zero';

-- Why didn't this query use the GPU: plans (never runs) the query and
-- reports each gpuops operator considered, chosen or not, and why
CREATE FUNCTION gpuops.explain_why(
    query text,
    OUT operator text,
    OUT context text,
    OUT decision text,
    OUT reason text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuops_explain_why'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuops.explain_why(text) IS
  'plans a query (without running it) and lists each gpuops operator considered: chosen, declined (and why) or lost on cost';

REVOKE ALL ON FUNCTION gpuops.stat_reset() FROM PUBLIC;
