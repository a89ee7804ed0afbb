/*
 * explain_device.h
 *    EXPLAIN ANALYZE output common to every gpuops operator.
 */
#ifndef GPUOPS_EXPLAIN_DEVICE_H
#define GPUOPS_EXPLAIN_DEVICE_H

extern "C" {
#include "postgres.h"

#include "pg_compat.h"
}

#include "gpuops_device.h"

extern void GpuopsExplainDeviceRun(ExplainState *es, const char *backend, const char *fallback,
								   const GpuopsStats *stats, double staging_ms, Size host_memory);

#endif
