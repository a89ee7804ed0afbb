/*
 * gpu_query_plan.cpp
 *    GpuQuery's plan data (GpuQueryPlan) in custom_private, for the
 *    planner, which forms it, and the executor, which reads it.
 */
extern "C" {
#include "postgres.h"
}

#include "gpu_query.h"
#include "plan_fields.h"

static void
CheckCount(const char *what, int n, int max)
{
	if (n < 0 || n > max)
		elog(ERROR, "gpuops: malformed %s plan: %s", GPUQUERY_NAME, what);
}

void
GpuQueryPlanFields(PlanFields &f, GpuQueryPlan *plan)
{
	f.ints(plan->attnums, &plan->ncols, GPUOPS_QUERY_MAX_COLS);
	for (int c = 0; c < plan->ncols; c++)
		f.field(&plan->forms[c]);
	f.field(&plan->nkeys);
	f.field(&plan->naggs);
	f.field(&plan->nhidden);
	CheckCount("keys", plan->nkeys, GPUOPS_QUERY_MAX_KEYS);
	CheckCount("aggregates", plan->naggs, GPUOPS_MAX_AGGS);
	CheckCount("hidden aggregates", plan->nhidden, plan->naggs);
	for (int k = 0; k < plan->nkeys; k++)
	{
		GpuQueryKeyPlan *key = &plan->keys[k];

		f.enum_field(&key->kind);
		f.field(&key->col);
		f.oid_field(&key->type);
		f.field(&key->typmod);
		f.field(&key->dict);
	}
	f.field(&plan->ndims);
	CheckCount("dimensions", plan->ndims, GPUOPS_QUERY_MAX_DIMS);
	f.ints(plan->pay_pos, &plan->npayload, GPUOPS_QUERY_MAX_COLS);
	CheckCount("payload columns", plan->ncols + plan->npayload, GPUOPS_QUERY_MAX_COLS);
	for (int c = 0; c < plan->npayload; c++)
	{
		f.oid_field(&plan->pay_types[c]);
		f.field(&plan->pay_dict[c]);
		if (f.reading() && (plan->pay_dict[c] < 0 || plan->pay_dict[c] > 2))
			elog(ERROR, "gpuops: malformed %s plan: payload form", GPUQUERY_NAME);
	}
	for (int d = 0; d < plan->ndims; d++)
	{
		GpuQueryDimPlan *dim = &plan->dims[d];

		f.enum_field(&dim->kind);
		f.field(&dim->key_col);
		f.field(&dim->key_pos);
		f.oid_field(&dim->key_type);
		f.field(&dim->first_pay);
		f.field(&dim->npayload);
		CheckCount("dimension key column", dim->key_col + 1, plan->ncols + dim->first_pay);
		CheckCount("dimension payload", dim->first_pay + dim->npayload, plan->npayload);
		if (f.reading() && dim->kind != GPUOPS_QDIM_INNER &&
			(dim->npayload != 0 ||
			 (dim->kind != GPUOPS_QDIM_SEMI && dim->kind != GPUOPS_QDIM_ANTI)))
			elog(ERROR, "gpuops: malformed %s plan: dimension kind", GPUQUERY_NAME);
		f.oid_field(&dim->read_relid);
		f.field(&dim->read_workers);
		f.ints(dim->read_attnums, &dim->read_ncols, GPUOPS_QUERY_MAX_COLS);
		for (int c = 0; c < dim->read_ncols; c++)
			f.field(&dim->read_forms[c]);
		f.field(&dim->key_read);
		for (int p = 0; p < dim->npayload; p++)
		{
			f.field(&dim->pay_read[p]);
			if (OidIsValid(dim->read_relid))
				CheckCount("dimension read column", dim->pay_read[p] + 1, dim->read_ncols);
		}
		if (OidIsValid(dim->read_relid))
			CheckCount("dimension read key", dim->key_read + 1, dim->read_ncols);
		f.field(&dim->read_qual);
		f.field(&dim->read_test_cols);
		f.field(&dim->read_test_exprs);
		if (f.reading() && list_length(dim->read_test_cols) != list_length(dim->read_test_exprs))
			elog(ERROR, "gpuops: malformed %s plan: dimension tests", GPUQUERY_NAME);
	}
	for (int k = 0; k < plan->nkeys; k++)
		CheckCount("key column", plan->keys[k].col + 1, plan->ncols + plan->npayload);
	for (int a = 0; a < plan->naggs; a++)
	{
		GpuQueryAggPlan *agg = &plan->aggs[a];

		f.enum_field(&agg->kind);
		f.enum_field(&agg->arg_type);
		f.field(&agg->arg_col);
		f.field(&agg->num_scale);
		f.enum_field(&agg->final);
		f.oid_field(&agg->final_fn);
		f.oid_field(&agg->arg_pgtype);
		f.field(&agg->scale_agg);
		CheckCount("argument column", agg->arg_col + 1, plan->ncols + plan->npayload);
		if (agg->scale_agg >= 0 &&
			(agg->scale_agg < plan->naggs - plan->nhidden || agg->scale_agg >= plan->naggs ||
			 agg->kind != GPUOPS_QAGG_SUM_NUM))
			elog(ERROR, "gpuops: malformed %s plan: scale aggregate", GPUQUERY_NAME);
	}
	f.field(&plan->njoin_quals);
	f.field(&plan->join_qual_prog);
	f.field(&plan->test_cols);
	f.field(&plan->test_exprs);
	f.field(&plan->groups);
	f.field(&plan->nworkers);
	f.field(&plan->qual_prog);
	f.field(&plan->params);
	f.field(&plan->param_slots);
	f.field(&plan->key_progs);
	f.field(&plan->arg_progs);
	f.field(&plan->filter_progs);
	if (f.reading() &&
		(list_length(plan->key_progs) != plan->nkeys ||
		 list_length(plan->arg_progs) != plan->naggs ||
		 list_length(plan->filter_progs) != plan->naggs ||
		 list_length(plan->params) != list_length(plan->param_slots) ||
		 list_length(plan->test_cols) != list_length(plan->test_exprs)))
		elog(ERROR, "gpuops: malformed %s plan: programs", GPUQUERY_NAME);
	f.done();
}
