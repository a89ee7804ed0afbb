/*
 * gpu_agg_plan.cpp
 *    GpuAgg's plan data (GpuAggPlan) in custom_private, for the planner,
 *    which forms it, and the executor, which reads it.
 */
extern "C" {
#include "postgres.h"
}

#include "device_expr.h"
#include "gpu_agg.h"
#include "plan_fields.h"

void
GpuAggPlanFields(PlanFields &f, GpuAggPlan *plan)
{
	f.field(&plan->nkeys);
	f.field(&plan->nextra);
	f.field(&plan->naggs);
	f.field(&plan->partial);
	f.field(&plan->hash_capacity);
	if (plan->nkeys < 0 || plan->nkeys > GPUOPS_MAX_SORT_KEYS || plan->naggs < 0 ||
		plan->naggs > GPUOPS_MAX_AGGS)
		elog(ERROR, "gpuops: malformed %s plan", GPUAGG_NAME);
	for (int k = 0; k < plan->nkeys; k++)
	{
		GpuAggKeyPlan *key = &plan->keys[k];

		f.enum_field(&key->kind);
		f.enum_field(&key->enc);
		f.oid_field(&key->type);
		f.oid_field(&key->collation);
	}
	for (int a = 0; a < plan->naggs; a++)
	{
		GpuAggPlanAgg *agg = &plan->aggs[a];

		f.enum_field(&agg->kind);
		f.enum_field(&agg->final);
		f.enum_field(&agg->value_kind);
		f.field(&agg->arg_col);
		f.field(&agg->filter_col);
		f.field(&agg->notnull_col);
		f.oid_field(&agg->final_fn);
		f.field(&agg->fraction);
		f.field(&agg->desc);
		f.enum_field(&agg->arg_enc);
		f.oid_field(&agg->collation);
		f.oid_field(&agg->arg_type);
	}
	f.ints(plan->prog_cols, &plan->prog_ncols, GPUOPS_EXPR_MAX_COLS);
	for (int c = 0; c < plan->prog_ncols; c++)
		f.oid_field(&plan->prog_types[c]);
	f.field(&plan->programs);
	f.field(&plan->prog_exprs);
	if (f.reading() &&
		(list_length(plan->programs) != plan->naggs ||
		 list_length(plan->prog_exprs) != plan->naggs))
		elog(ERROR, "gpuops: malformed %s plan: computed inputs", GPUAGG_NAME);
	f.done();
}
