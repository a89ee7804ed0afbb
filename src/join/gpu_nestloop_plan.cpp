/*
 * gpu_nestloop_plan.cpp
 *    GpuNestLoop's plan data (GpuNestLoopPlan) in custom_private, for the
 *    planner, which forms it, and the executor, which reads it.
 */
extern "C" {
#include "postgres.h"
}

#include "device_expr.h"
#include "gpu_nestloop.h"
#include "plan_fields.h"

void
GpuNestLoopPlanFields(PlanFields &f, GpuNestLoopPlan *plan)
{
	GpuopsNestLoopIndex *ix = &plan->index;

	f.enum_field(&plan->jointype);
	f.field(&plan->recheck_all);
	f.ints(plan->outer_cols, &plan->nouter, GPUOPS_EXPR_MAX_COLS);
	f.ints(plan->inner_cols, &plan->ninner, GPUOPS_EXPR_MAX_COLS);
	f.field(&plan->param_slots);
	DeviceExprProgramField(f, &plan->program);
	f.field(&ix->column);
	if (ix->column >= 0)
	{
		f.field(&ix->is_float);
		f.field(&ix->has_lower);
		f.field(&ix->lower_strict);
		f.field(&ix->has_upper);
		f.field(&ix->upper_strict);
		if (ix->has_lower)
			DeviceExprProgramField(f, &ix->lower);
		if (ix->has_upper)
			DeviceExprProgramField(f, &ix->upper);
	}
	f.done();
}
