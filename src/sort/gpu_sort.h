/*
 * gpu_sort.h
 *    GpuSort: what its planner and executor halves share.
 *
 * The CustomScan carries, in custom_private, an integer list: the number of
 * sort keys, the bound (LIMIT + OFFSET when known at planning, else 0),
 * where it sorts (enum GpuSortPlacement), then
 * GPUSORT_KEY_FIELDS integers per key (enum GpuSortKeyField):
 * the key's column (index into custom_scan_tlist, the child's output), its
 * GpuopsKeyKind, DESC, NULLS FIRST, whether the device sees only a prefix
 * (ties resolved with PostgreSQL's comparator), the sort operator and the
 * collation (for that comparator).
 */
#ifndef GPUOPS_GPU_SORT_H
#define GPUOPS_GPU_SORT_H

extern "C" {
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
}

#define GPUSORT_NAME "GpuSort"

#define GPUSORT_PRIV_KEYS 3		/* where the keys start in custom_private */

/*
 * Where a GpuSort sorts.  Bounded sorts hold few rows at a time: below
 * gpuops.topn_device_min_bound they sort on the CPU backend in every process,
 * and in parallel workers up to a bound of 1M rows, where only the leader
 * opens a CUDA context.
 */
enum GpuSortPlacement
{
	GPUSORT_ON_DEVICE = 0,		/* the primary backend (gpuops.device) */
	GPUSORT_WORKERS_ON_HOST,	/* the leader on the device, workers on the CPU */
	GPUSORT_ON_HOST				/* the CPU backend in every process */
};

enum GpuSortKeyField
{
	GPUSORT_KEY_COLUMN = 0,
	GPUSORT_KEY_KIND,
	GPUSORT_KEY_DESC,
	GPUSORT_KEY_NULLS_FIRST,
	GPUSORT_KEY_PREFIX_ONLY,
	GPUSORT_KEY_SORTOP,
	GPUSORT_KEY_COLLATION,
	GPUSORT_KEY_FIELDS
};

/* planner (gpu_sort_path.cpp) */
extern void GpuSortAddOrderedPaths(PlannerInfo *root, RelOptInfo *input_rel,
								   RelOptInfo *ordered_rel);

/* executor (gpu_sort_exec.cpp) */
extern const CustomScanMethods gpu_sort_scan_methods;
extern void GpuSortRegister(void);

#endif
