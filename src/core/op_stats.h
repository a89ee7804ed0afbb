/*
 * op_stats.h
 *    gpuops.stat: what each kind of gpuops operator did, summed over every
 *    backend since the last gpuops.stat_reset(), in shared memory (like
 *    pg_stat_statements; gpuops is always in shared_preload_libraries).
 *
 * Cheap by construction: a node counts into its own accumulator
 * (GpuopsOpStatAcc, in the node's state) while it runs, and
 * GpuopsOpStatsFlush adds the accumulator to shared memory once, when the
 * node ends (one spinlock per node, never per row).  Device out-of-memory
 * events are counted when they happen (GpuopsOpStatsCountOom: rare, and the
 * query may be about to raise, so the node's end may never come).
 */
#ifndef GPUOPS_OP_STATS_H
#define GPUOPS_OP_STATS_H

extern "C" {
#include "postgres.h"
}

/* The operator kinds counted, one row of gpuops.stat each. */
typedef enum GpuopsOpKind
{
	GPUOPS_OP_SORT = 0,
	GPUOPS_OP_HASHJOIN,
	GPUOPS_OP_MERGEJOIN,
	GPUOPS_OP_NESTLOOP,
	GPUOPS_OP_AGG,
	GPUOPS_OP_QUERY,
	GPUOPS_OP_STAGE,
	GPUOPS_OP_TOPN,
	GPUOPS_OP_NKINDS
} GpuopsOpKind;

/*
 * One node instance's figures, summed while it runs and flushed at its end.
 * rows_in, device_ms and bytes_from_device come from the figures the node
 * keeps for EXPLAIN ANALYZE (its device stats, gpuops_device.h), and
 * bytes_to_device from its row stores; rows_out and executions from the
 * common ExecScan wrapper (node.h).
 */
typedef struct GpuopsOpStatAcc
{
	uint64 executions;		  /* runs: the first row asked for after begin or a rescan */
	uint64 rows_in;			  /* rows the device (or the CPU twin) took in */
	uint64 rows_out;		  /* rows the node returned */
	uint64 bytes_to_device;	  /* bytes of the input rows staged for the device */
	uint64 bytes_from_device; /* bytes the backend copied back (the CPU twin: its results) */
	double device_ms;		  /* copy + kernel time the backend measured */
	bool running;			  /* counted as an execution since begin or rescan */
} GpuopsOpStatAcc;

/* The kind of a node by its CustomName ("GpuSort", ...); -1 if not one of them. */
extern int GpuopsOpKindOf(const char *custom_name);

/* shmem_request_hook / shmem_startup_hook chaining, from _PG_init. */
extern void GpuopsOpStatsInit(void);

/*
 * Adds one ended node instance of `kind` to the shared counters: one plan
 * use, acc's figures, and a CPU fallback with its reason when `fallback`
 * is not NULL.  Nothing when gpuops' shared memory is absent.
 */
extern void GpuopsOpStatsFlush(int kind, const GpuopsOpStatAcc *acc, const char *fallback);

/* A device out-of-memory event in a node of `kind`, counted at once. */
extern void GpuopsOpStatsCountOom(int kind);

#endif
