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
