/*
 * gpu_sort.h
 *    GpuSort: what its planner and executor halves share.
 *
 * The CustomScan carries a GpuSortPlan in custom_private (GpuSortPlanFields).
 */
#ifndef GPUOPS_GPU_SORT_H
#define GPUOPS_GPU_SORT_H

extern "C" {
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
}

#include "gpuops_device.h"
#include "plan_fields.h"

#define GPUSORT_NAME "GpuSort"

/*
 * Where a GpuSort sorts.  Bounded sorts hold few rows at a time: below
 * gpuops.topn_device_min_bound they sort on the CPU backend in every process,
 * and in parallel workers up to a bound of 1M rows, where only the leader
 * opens a CUDA context.
 */
enum GpuSortPlacement
{
	GPUSORT_ON_DEVICE = 0,	 /* the primary backend (gpuops.device) */
	GPUSORT_WORKERS_ON_HOST, /* the leader on the device, workers on the CPU */
	GPUSORT_ON_HOST			 /* the CPU backend in every process */
};

/* A sort key in the plan. */
typedef struct GpuSortKeyPlan
{
	int col; /* index into custom_scan_tlist (the child's output,
								 * then the computed keys) */
	GpuopsKeyKind kind;
	bool descending;
	bool nulls_first;
	bool prefix_only; /* the device sees a prefix; ties go to the comparator */
	Oid sortop;		  /* for that comparator */
	Oid collation;
} GpuSortKeyPlan;

/*
 * The plan's data (custom_private).  Computed keys: a key the device
 * computes has a program over prog_ncols child columns, and its expression
 * for checking the rows its program stopped at (in the plan, with OUTER_VAR
 * references to the child's columns; the path keeps it apart).
 */
typedef struct GpuSortPlan
{
	int nkeys;
	int bound; /* LIMIT + OFFSET when known at planning, else 0 */
	GpuSortPlacement placement;
	GpuSortKeyPlan keys[GPUOPS_MAX_SORT_KEYS];
	int prog_ncols;
	int prog_cols[GPUOPS_EXPR_MAX_COLS];
	Oid prog_types[GPUOPS_EXPR_MAX_COLS];
	List *programs; /* per key its program's list form, or NIL; NIL: none computed */
	List *checks;	/* plan: per computed key its expression */
} GpuSortPlan;

/* The plan's fields, in their order in custom_private (both directions; gpu_sort_plan.cpp). */
extern void GpuSortPlanFields(PlanFields &f, GpuSortPlan *plan);

/* A plan read from custom_private, in palloc'd memory. */
extern GpuSortPlan *GpuSortReadPlan(List *custom_private);

/* planner (gpu_sort_path.cpp) */
extern void GpuSortAddOrderedPaths(PlannerInfo *root, RelOptInfo *input_rel,
								   RelOptInfo *ordered_rel);

/* executor (gpu_sort_exec.cpp) */
extern const CustomScanMethods gpu_sort_scan_methods;
extern void GpuSortRegister(void);

/*
 * The rows the query can ever take from its ORDER BY: LIMIT + OFFSET when
 * both are constants; 0 when unknown (gpu_sort_path.cpp).
 */
extern uint64 GpuSortBound(PlannerInfo *root);

#endif
