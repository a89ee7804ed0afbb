/*
 * gpu_sort_plan.cpp
 *    GpuSort's plan data (GpuSortPlan) in custom_private, for the planner,
 *    which forms it, and the executor, which reads it.
 */
extern "C" {
#include "postgres.h"
}

#include "gpu_sort.h"
#include "plan_fields.h"

void
GpuSortPlanFields(PlanFields &f, GpuSortPlan *plan)
{
	f.field(&plan->nkeys);
	f.field(&plan->bound);
	f.enum_field(&plan->placement);
	if (plan->nkeys < 1 || plan->nkeys > GPUOPS_MAX_SORT_KEYS)
		elog(ERROR, "gpuops: malformed %s plan: %d keys", GPUSORT_NAME, plan->nkeys);
	for (int k = 0; k < plan->nkeys; k++)
	{
		GpuSortKeyPlan *key = &plan->keys[k];

		f.field(&key->col);
		f.enum_field(&key->kind);
		f.field(&key->descending);
		f.field(&key->nulls_first);
		f.field(&key->prefix_only);
		f.oid_field(&key->sortop);
		f.oid_field(&key->collation);
	}
	f.ints(plan->prog_cols, &plan->prog_ncols, GPUOPS_EXPR_MAX_COLS);
	for (int c = 0; c < plan->prog_ncols; c++)
		f.oid_field(&plan->prog_types[c]);
	f.field(&plan->programs);
	f.field(&plan->checks);
	if (f.reading() && plan->programs != NIL && list_length(plan->programs) != plan->nkeys)
		elog(ERROR, "gpuops: malformed %s plan: computed keys", GPUSORT_NAME);
	f.done();
}

GpuSortPlan *
GpuSortReadPlan(List *custom_private)
{
	GpuSortPlan *plan = (GpuSortPlan *) palloc0(sizeof(GpuSortPlan));
	PlanFields f(custom_private, GPUSORT_NAME);

	GpuSortPlanFields(f, plan);
	return plan;
}
