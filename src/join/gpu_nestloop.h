/*
 * gpu_nestloop.h
 *    GpuNestLoop: what its planner and executor halves share.
 *
 * The CustomScan reads the outer child's output columns followed by the
 * inner child's as its scan tuple (custom_scan_tlist), as GpuHashJoin does.
 * custom_private: an integer list (the join type, whether every candidate
 * pair is re-checked by PostgreSQL, the program's outer columns and inner
 * columns as indexes into the children's outputs) and the device program
 * (device_expr.h's list form), then the indexed form (NIL: none; an
 * integer list of GpuopsNestLoopIndex's fields from column to
 * upper_strict, and the lower and upper bound programs, NIL where there is
 * none).  custom_exprs: the join clauses (all of them, for re-checks and
 * EXPLAIN), the filters of outer joins, the Params the program reads, the
 * clauses the program holds and the indexed form's bound clauses (both
 * for EXPLAIN).
 */
#ifndef GPUOPS_GPU_NESTLOOP_H
#define GPUOPS_GPU_NESTLOOP_H

extern "C" {
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
}

#define GPUNESTLOOP_NAME "GpuNestLoop"

/* custom_exprs, in order */
enum GpuNestLoopExprs
{
	GPUNL_EXPR_CLAUSES = 0,
	GPUNL_EXPR_FILTERS,
	GPUNL_EXPR_PARAMS,
	GPUNL_EXPR_DEVICE,
	GPUNL_EXPR_RANGE,			/* the indexed form's bound clauses (EXPLAIN) */
	GPUNL_EXPRS
};

/* planner (gpu_nestloop_path.cpp) */
extern void GpuNestLoopAddPaths(PlannerInfo *root, RelOptInfo *joinrel,
								RelOptInfo *outerrel, RelOptInfo *innerrel,
								JoinType jointype, JoinPathExtraData *extra);

/* executor (gpu_nestloop_exec.cpp) */
extern const CustomScanMethods gpu_nestloop_scan_methods;
extern void GpuNestLoopRegister(void);

#endif
