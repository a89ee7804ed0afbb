/*
 * guc.h
 *    gpuops' configuration parameters.
 */
#ifndef GPUOPS_GUC_H
#define GPUOPS_GUC_H

#include "gpuops_device.h"

typedef enum GpuopsDeviceMode
{
	GPUOPS_DEVICE_AUTO = 0, /* the GPU when present, else PostgreSQL's plans */
	GPUOPS_DEVICE_GPU,		/* plan for the GPU; run-time failures -> cpu_fallback */
	GPUOPS_DEVICE_CPU		/* gpuops' CPU backend (tests, machines without GPU) */
} GpuopsDeviceMode;

typedef enum GpuopsFallbackMode
{
	GPUOPS_FALLBACK_OFF = 0, /* device failure raises an error */
	GPUOPS_FALLBACK_ON,		 /* finish on the CPU, DEBUG1 message */
	GPUOPS_FALLBACK_NOTICE	 /* finish on the CPU, NOTICE */
} GpuopsFallbackMode;

extern bool gpuops_enabled;
extern bool gpuops_enable_sort;
extern bool gpuops_enable_topn;
extern bool gpuops_enable_hashjoin;
extern bool gpuops_enable_mergejoin;
extern bool gpuops_enable_nestloop;
extern bool gpuops_enable_nestloop_index;
extern bool gpuops_enable_shared_build;
extern bool gpuops_enable_direct_scan;
extern bool gpuops_enable_agg;
extern bool gpuops_enable_query;
extern bool gpuops_enable_query_join;
extern double gpuops_query_page_cost;
extern bool gpuops_enable_float_aggs;
extern bool gpuops_enable_parallel_staging;
extern bool gpuops_enable_sort_park;
extern bool gpuops_enable_device_exprs;
extern int gpuops_device_mode;
extern int gpuops_cpu_fallback;
extern int gpuops_min_rows;
extern int gpuops_topn_device_min_bound;
extern int gpuops_agg_hash_max_groups;
extern int gpuops_device_memory_limit_mb;
extern int gpuops_host_memory_limit_kb;
extern int gpuops_pinned_pool_mb;
extern int gpuops_batch_size_mb;
extern int gpuops_streams;
extern double gpuops_startup_cost;
extern double gpuops_parallel_startup_cost;
extern double gpuops_tuple_cost;
extern double gpuops_transfer_cost;
extern int gpuops_fault_injection;
extern int gpuops_max_device_sessions;
extern int gpuops_page_service_channels; /* PGC_POSTMASTER: page_service.cpp */
extern int gpuops_page_cache_size;		 /* PGC_POSTMASTER, MB: page_service.cpp */
extern int gpuops_device_session_wait;
extern int gpuops_reader_threads;

/* gpuops.query_read_pages */
typedef enum GpuopsReadPages
{
	GPUOPS_READ_PAGES_AUTO = 0, /* on the GPU, where the columns allow */
	GPUOPS_READ_PAGES_ON,		/* the CPU backend too (tests) */
	GPUOPS_READ_PAGES_OFF
} GpuopsReadPages;
extern int gpuops_query_read_pages;
extern int gpuops_query_pages_in_place; /* the same values: GpuopsReadPages */

extern void GpuopsDefineGucs(void);

/* Bytes of rows a sort holds in memory before spilling (host_memory_limit or work_mem). */
extern Size GpuopsHostMemoryLimit(void);

/* The settings the device layer needs, from the current GUC values. */
extern GpuopsSettings GpuopsCurrentSettings(void);

/*
 * The same, for a node that knows whether other processes of its query use
 * the device at the same time (shared) or not: a node above a Gather of
 * GpuStage whose workers run no gpuops device node is alone.
 */
extern GpuopsSettings GpuopsSettingsFor(bool shared);

#endif
