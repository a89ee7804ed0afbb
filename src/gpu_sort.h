/*
 * gpu_sort.h
 *    GpuSort: what its planner and executor halves share.
 *
 * The CustomScan carries, in custom_private, an integer list:
 *   [0] key column: index into custom_scan_tlist (the child's output)
 *   [1] GpuopsKeyType
 *   [2] descending (0/1)
 *   [3] nulls first (0/1)
 */
#ifndef GPUOPS_GPU_SORT_H
#define GPUOPS_GPU_SORT_H

extern "C" {
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
}

#define GPUSORT_NAME "GpuSort"

enum GpuSortPrivate
{
	GPUSORT_KEY_COLUMN = 0,
	GPUSORT_KEY_TYPE,
	GPUSORT_DESCENDING,
	GPUSORT_NULLS_FIRST
};

/* planner (gpu_sort_path.cpp) */
extern void GpuSortAddOrderedPaths(PlannerInfo *root, RelOptInfo *input_rel,
								   RelOptInfo *ordered_rel);

/* executor (gpu_sort_exec.cpp) */
extern const CustomScanMethods gpu_sort_scan_methods;
extern void GpuSortRegister(void);

#endif
