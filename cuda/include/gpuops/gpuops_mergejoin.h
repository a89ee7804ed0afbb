/*
 * gpuops_mergejoin.h
 *    The device engine's C interface, one part: the merge join backend
 *    (GpuopsMergeJoinBackend).
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_MERGEJOIN_H
#define GPUOPS_MERGEJOIN_H

#include "gpuops_base.h"
#include "gpuops_hashjoin.h"

GPUOPS_C_BEGIN

/*
 * Merge join (sort-merge, He et al.): both sides' key columns are sorted on
 * the device and merged with merge path, so every thread does the same
 * share of the merge however the keys are distributed.  Keys are 64-bit
 * words whose unsigned order is the keys' order and whose equality is the
 * join's equality (the caller maps values: integers offset by 2^63, floats
 * by their IEEE order with -0 as 0 and every NaN as one value), plus a
 * null bitmap per key; a row with a NULL key matches nothing and sorts
 * after the others of its key, as ORDER BY ... NULLS LAST does.  A NULL
 * key's word must be 0, so that NULLs tie in every backend's sort.
 *
 * Both sorts are stable.  Two merge-path passes give each outer row the
 * first and the end of its equal run on the inner side; the run lengths
 * are prefix-summed (count then write) and each output pair is written by
 * its own thread.  Pairs come in the outer side's key order (ties in row
 * order), each outer row's inner rows in key then row order, in windows as
 * the hash join's; outer rows with no pair are left out (mj_outer_order
 * gives the whole outer order, so the caller can place them).
 */
typedef struct GpuopsMergeJoinStats
{
	uint64_t outer_rows;
	uint64_t inner_rows;
	uint64_t pairs;
	uint32_t windows;	  /* pair windows beyond the first */
	uint32_t sort_passes; /* radix sort passes, both sides */
	double copy_ms;
	double kernel_ms;
	uint64_t device_bytes;		/* peak */
	uint64_t bytes_from_device; /* copied device -> host (gpuops_device.h) */
} GpuopsMergeJoinStats;

typedef struct GpuopsMergeJoin GpuopsMergeJoin;

/*
 * mj_begin -> mj_side(0: outer) and mj_side(1: inner), each once with all
 * of that side's rows -> mj_join (the first window) -> mj_next_pairs while
 * more -> mj_end (always).  mj_join with pairs NULL only merges and
 * counts: the number of pairs is then mj_stats' `pairs`, and no window or
 * outer order is made (a count(*) over the join needs nothing else).
 * mj_capacity: the most rows of both sides together one merge join holds
 * under the device budget (0: no limit).
 */
typedef struct GpuopsMergeJoinBackend
{
	const char *name;
	GpuopsStatus (*mj_begin)(const GpuopsSettings *settings, int nkeys,
							 GpuopsMergeJoin **mj) GPUOPS_NOEXCEPT;
	GpuopsStatus (*mj_side)(GpuopsMergeJoin *mj, int side,
							const GpuopsJoinKeys *keys) GPUOPS_NOEXCEPT;
	GpuopsStatus (*mj_join)(GpuopsMergeJoin *mj, GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	GpuopsStatus (*mj_next_pairs)(GpuopsMergeJoin *mj, GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	GpuopsStatus (*mj_outer_order)(GpuopsMergeJoin *mj, const uint32_t **order) GPUOPS_NOEXCEPT;
	uint64_t (*mj_capacity)(const GpuopsMergeJoin *mj) GPUOPS_NOEXCEPT;
	void (*mj_stats)(const GpuopsMergeJoin *mj, GpuopsMergeJoinStats *stats) GPUOPS_NOEXCEPT;
	void (*mj_end)(GpuopsMergeJoin *mj) GPUOPS_NOEXCEPT;
} GpuopsMergeJoinBackend;

extern const GpuopsMergeJoinBackend *gpuops_cuda_mergejoin_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsMergeJoinBackend *gpuops_cpu_mergejoin_backend(void) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_MERGEJOIN_H */
