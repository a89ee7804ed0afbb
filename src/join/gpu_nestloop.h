/*
 * gpu_nestloop.h
 *    GpuNestLoop: what its planner and executor halves share.
 *
 * The CustomScan reads the outer child's output columns followed by the
 * inner child's as its scan tuple (custom_scan_tlist), as GpuHashJoin does.
 * custom_private: a GpuNestLoopPlan (GpuNestLoopPlanFields).  custom_exprs:
 * the join clauses (all of them, for re-checks and EXPLAIN), the filters of
 * outer joins, the Params the program reads, the clauses the program holds
 * and the indexed form's bound clauses (both for EXPLAIN).
 */
#ifndef GPUOPS_GPU_NESTLOOP_H
#define GPUOPS_GPU_NESTLOOP_H

extern "C" {
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
}

#include "gpuops_device.h"
#include "plan_fields.h"

#define GPUNESTLOOP_NAME "GpuNestLoop"

/* custom_exprs, in order */
enum GpuNestLoopExprs
{
	GPUNL_EXPR_CLAUSES = 0,
	GPUNL_EXPR_FILTERS,
	GPUNL_EXPR_PARAMS,
	GPUNL_EXPR_DEVICE,
	GPUNL_EXPR_RANGE, /* the indexed form's bound clauses (EXPLAIN) */
	GPUNL_EXPRS
};

/* The plan's data (custom_private), formed by the planner. */
typedef struct GpuNestLoopPlan
{
	JoinType jointype; /* INNER, LEFT, SEMI or ANTI */
	bool recheck_all;  /* some clause is not in the program */
	int nouter;		   /* the program's columns, as indexes into */
	int ninner;		   /* ... the outer and inner children's outputs */
	int outer_cols[GPUOPS_EXPR_MAX_COLS];
	int inner_cols[GPUOPS_EXPR_MAX_COLS];
	List *param_slots;		   /* constant slots of the Params (int) */
	GpuopsExprProgram program; /* the clauses the device tests */
	GpuopsNestLoopIndex index; /* the indexed form; column -1: none */
} GpuNestLoopPlan;

/* The plan's fields, in their order in custom_private (both directions; gpu_nestloop_plan.cpp). */
extern void GpuNestLoopPlanFields(PlanFields &f, GpuNestLoopPlan *plan);

/* planner (gpu_nestloop_path.cpp) */
extern void GpuNestLoopAddPaths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
								RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra);

/* executor (gpu_nestloop_exec.cpp) */
extern const CustomScanMethods gpu_nestloop_scan_methods;
extern void GpuNestLoopRegister(void);

#endif
