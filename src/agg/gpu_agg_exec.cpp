/*
 * gpu_agg_exec.cpp
 *    GpuAgg execution.
 *
 * The child's rows (group keys, other columns, aggregate inputs: gpu_agg.h)
 * are read into a row store, where they stay.  Its batches go to the device
 * as they are: the group key columns (text keys as numbers from a
 * dictionary of distinct byte strings), and per aggregate its argument
 * column with a null bitmap that also marks the rows its FILTER rejects.
 * The device groups and aggregates (gpuops_device.h) and returns per group
 * its first row and one state per aggregate; the node emits one scan tuple
 * per group: key and other columns from that row, aggregate results made
 * by gpu_agg_final.cpp.  ExecScan applies HAVING and the projection.
 *
 * Device failures: with gpuops.cpu_fallback the CPU backend aggregates the
 * stored rows again.  Device memory is released by a memory-context
 * callback on the query context, also on error and cancel.
 *
 * This file is the node: the groups' rows and the executor's callbacks;
 * gpu_agg_device.cpp reads the input and talks to the backend.
 */
extern "C" {
#include "postgres.h"

#include "pg_compat.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "portability/instr_time.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
}

#include "batch.h"
#include "boundary.h"
#include "guarded_scan.h"
#include "device.h"
#include "device_session.h"
#include "device_expr.h"
#include "gpu_agg.h"
#include "gpu_agg_exec.h"
#include "agg_common.hpp"
#include "guc.h"

extern const CustomExecMethods gpu_agg_exec_methods;

/* Fills the scan tuple of group g (or, g < 0, the one row of an empty input). */
static TupleTableSlot *
GroupRow(GpuAggState *st, int64 g, TupleTableSlot *slot)
{
	static const GpuopsAggResult empty = {};
	int ncols = st->nkeys + st->nextra;
	MemoryContext old;

	ExecClearTuple(slot);
	old = MemoryContextSwitchTo(st->css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory);
	for (int c = 0; c < ncols; c++)
	{
		if (g >= 0)
			slot->tts_values[c] = GpuopsRowStoreDatum(st->store(), st->group_rows[g], c,
													  &slot->tts_isnull[c]);
		else
		{
			slot->tts_values[c] = (Datum) 0;
			slot->tts_isnull[c] = true;
		}
	}
	for (int a = 0; a < st->naggs; a++)
	{
		const GpuAggDesc *d = &st->aggs[a];
		const GpuopsAggResult *r = g >= 0 ? &st->results[g * st->naggs + a] : &empty;
		Datum value = (Datum) 0;
		Datum value2 = (Datum) 0;
		bool isnull;

		if (d->host_sum)
		{
			/* sum/avg(numeric) summed on the host (gpu_agg_numeric.cpp) */
			slot->tts_isnull[ncols + a] = g < 0 || d->host_nulls[g];
			slot->tts_values[ncols + a] = g < 0 || d->host_nulls[g] ? (Datum) 0 : d->host_values[g];
			continue;
		}
		if ((d->final == GPUAGG_FINAL_VALUE || d->final == GPUAGG_FINAL_PERCENTILE_CONT) &&
			r->count > 0)
			value = GpuopsRowStoreDatum(st->store(), r->row, d->arg_col, &isnull);
		if (d->final == GPUAGG_FINAL_PERCENTILE_CONT && r->count > 0)
			value2 = GpuopsRowStoreDatum(st->store(), r->row2, d->arg_col, &isnull);
		slot->tts_values[ncols + a] = GpuAggResultDatum(d, r, value, value2,
														&slot->tts_isnull[ncols + a]);
	}
	MemoryContextSwitchTo(old);
	return ExecStoreVirtualTuple(slot);
}

static TupleTableSlot *
GpuAggNext(ScanState *ss)
{
	GpuAggState *st = (GpuAggState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;

	if (!st->aggregated)
		GpuAggReadAndAggregate(st);
	if (st->next_group < st->ngroups)
		return GroupRow(st, (int64) st->next_group++, slot);
	/* without GROUP BY an aggregate returns one row, also over no rows */
	if (st->nkeys == 0 && st->ngroups == 0 && !st->empty_row_done)
	{
		st->empty_row_done = true;
		return GroupRow(st, -1, slot);
	}
	return ExecClearTuple(slot);
}

static Node *
CreateGpuAggStateImpl(CustomScan *cscan)
{
	GpuAggState *st = NewCustomScanState<GpuAggState>(cscan, &gpu_agg_exec_methods);
	GpuAggPlan *plan = (GpuAggPlan *) palloc0(sizeof(GpuAggPlan));
	PlanFields fields(cscan->custom_private, GPUAGG_NAME);
	int a = 0;
	ListCell *lc;

	GpuAggPlanFields(fields, plan);
	st->nkeys = plan->nkeys;
	st->nextra = plan->nextra;
	st->naggs = plan->naggs;
	st->partial = plan->partial;
	st->hash_capacity = (uint64) plan->hash_capacity;
	for (int k = 0; k < st->nkeys; k++)
	{
		st->key_kind[k] = plan->keys[k].kind;
		st->key_enc[k] = plan->keys[k].enc;
		st->key_type[k] = plan->keys[k].type;
		st->key_collation[k] = plan->keys[k].collation;
	}
	st->aggs = (GpuAggDesc *) palloc0(sizeof(GpuAggDesc) * Max(st->naggs, 1));
	for (a = 0; a < st->naggs; a++)
	{
		GpuAggDesc *d = &st->aggs[a];
		const GpuAggPlanAgg *p = &plan->aggs[a];

		d->kind = p->kind;
		d->final = p->final;
		d->value_kind = p->value_kind;
		d->arg_col = p->arg_col;
		d->filter_col = p->filter_col;
		d->notnull_col = p->notnull_col;
		d->final_fn = p->final_fn;
		d->fraction = p->fraction;
		d->desc = p->desc;
		d->partial = st->partial;
		d->arg_enc = p->arg_enc;
		d->collation = p->collation;
		d->arg_type = p->arg_type;
		if (OidIsValid(d->final_fn))
			fmgr_info(d->final_fn, &d->final_flinfo);
	}
	st->prog_ncols = plan->prog_ncols;
	memcpy(st->prog_cols, plan->prog_cols, sizeof(int) * plan->prog_ncols);
	memcpy(st->prog_types, plan->prog_types, sizeof(Oid) * plan->prog_ncols);
	a = 0;
	foreach (lc, plan->programs)
	{
		if (lfirst(lc) != NIL)
		{
			st->programs[a] = (GpuopsExprProgram *) palloc(sizeof(GpuopsExprProgram));
			DeviceExprProgramFromList((List *) lfirst(lc), st->programs[a]);
		}
		a++;
	}
	st->prog_exprs = plan->prog_exprs;
	pfree(plan);
	return (Node *) st;
}

static void
BeginGpuAggImpl(CustomScanState *node, EState *estate, int eflags)
{
	GpuAggState *st = (GpuAggState *) node;
	TupleDesc desc;

	/* over GpuStage the workers only read rows: the device is this process's alone */
	GpuopsNodeBegin(st, estate, eflags, 1, NULL);
	GpuopsNodePrewarm(st, eflags);
	desc = ExecGetResultType(st->input[0].ps);
	/* the device reads argument columns raw: their widths must be the kinds' */
	for (int a = 0; a < st->naggs; a++)
	{
		const GpuAggDesc *d = &st->aggs[a];

		if (d->arg_col >= 0 && d->arg_enc == GPUAGG_KEY_VALUE &&
			TupleDescAttr(desc, d->arg_col)->attlen != (int) gpuops_key_raw_width(d->value_kind))
			elog(ERROR, "GpuAgg: aggregate input column %d has an unexpected width", d->arg_col);
	}
	/* PostgreSQL's own evaluation of computed inputs, for a row the device stops at */
	{
		for (int a = 0; a < st->naggs && a < list_length(st->prog_exprs); a++)
		{
			Expr *e = (Expr *) list_nth(st->prog_exprs, a);

			if (e == NULL)
				continue;
			e = (Expr *) copyObject(e);
			fix_opfuncids((Node *) e);
			st->program_exprs[a] = ExecInitExpr(e, &node->ss.ps);
		}
		st->recheck_slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
	}
	st->scratch_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuAgg batch",
											ALLOCSET_DEFAULT_SIZES);
	st->dict_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuAgg dictionaries",
										 ALLOCSET_DEFAULT_SIZES);
	st->merge_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuAgg merge",
										  ALLOCSET_DEFAULT_SIZES);
	st->dev = GpuopsNodeDevice<GpuAggDevice>(st, estate);
}

static void
EndGpuAggImpl(CustomScanState *node)
{
	GpuAggState *st = (GpuAggState *) node;

	GpuopsNodeStatDevice(st, st->stats.rows, st->stats.copy_ms, st->stats.kernel_ms,
						 st->stats.bytes_from_device);
	GpuopsNodeEnd(st);
}

static void
ReScanGpuAggImpl(CustomScanState *node)
{
	GpuAggState *st = (GpuAggState *) node;

	GpuopsNodeRescanParams(st);
	if (st->aggregated && !GpuopsNodeInputChanged(st, 0))
	{
		/* the same input: emit the same groups again */
		st->next_group = 0;
		st->empty_row_done = false;
		return;
	}
	st->dev->end();
	st->aggregated = false;
	st->ngroups = 0;
	st->group_rows = NULL;
	st->results = NULL;
	st->merge = NULL;
	MemoryContextReset(st->dict_cxt);
	MemoryContextReset(st->merge_cxt);
	GpuopsNodeRestartInput(st, 0);
}

static void
ExplainGpuAggImpl(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuAggState *st = (GpuAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List *context;
	List *keys = NIL;
	List *aggs = NIL;
	bool prefix = GpuopsExplainUsePrefix(es);

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	for (int k = 0; k < st->nkeys; k++)
	{
		TargetEntry *tle = (TargetEntry *) list_nth(cscan->custom_scan_tlist, k);

		keys = lappend(keys, deparse_expression((Node *) tle->expr, context, prefix, false));
	}
	if (keys != NIL)
		ExplainPropertyList("Group Key", keys, es);
	for (int a = 0; a < st->naggs; a++)
	{
		TargetEntry *tle = (TargetEntry *) list_nth(cscan->custom_scan_tlist,
													st->nkeys + st->nextra + a);

		aggs = lappend(aggs, deparse_expression((Node *) tle->expr, context, prefix, false));
	}
	if (aggs != NIL)
		ExplainPropertyList("Aggregates", aggs, es);
	aggs = NIL;
	for (int a = 0; a < st->naggs; a++)
		if (st->programs[a] != NULL)
			aggs = lappend(
				aggs,
				deparse_expression((Node *) ((TargetEntry *) list_nth(cscan->custom_scan_tlist,
																	  st->nkeys + st->nextra + a))
									   ->expr,
								   context, prefix, false));
	if (aggs != NIL)
		ExplainPropertyList("Inputs Computed on Device", aggs, es);
	ExplainPropertyText("Strategy",
						st->nkeys == 0				? "plain on device"
							: st->hash_capacity > 0 ? "hashed on device"
													: "sorted on device",
						es);
	if (st->partial)
		ExplainPropertyText("Stage", "partial", es);
	if (es->analyze && st->aggregated)
	{
		GpuopsNodeExplainBackend(st, es);
		ExplainPropertyInteger("Input Rows", NULL, (int64) st->stats.rows, es);
		ExplainPropertyInteger("Groups", NULL, (int64) st->stats.groups, es);
		ExplainPropertyInteger("Key Words", NULL, st->stats.key_words, es);
		if (st->stats.hash_capacity > 0)
			ExplainPropertyInteger("Hash Capacity", NULL, (int64) st->stats.hash_capacity, es);
		if (st->overflow_chunks > 0)
			ExplainPropertyText("Hash Overflow",
								"more groups than the hash capacity, sorted instead", es);
		if (st->chunks > 1)
			ExplainPropertyInteger("Chunks", NULL, st->chunks, es);
		{
			int host_sums = 0;

			/* numeric sums the device could not take as scaled integers */
			for (int a = 0; a < st->naggs; a++)
				host_sums += st->aggs[a].host_sum ? 1 : 0;
			if (host_sums > 0)
				ExplainPropertyInteger("Numeric Sums on Host", NULL, host_sums, es);
		}
		if (es->timing)
		{
			ExplainPropertyFloat("Read Time", "ms", st->read_ms, 3, es);
			ExplainPropertyFloat("Copy Time", "ms", st->stats.copy_ms, 3, es);
			ExplainPropertyFloat("Kernel Time", "ms", st->stats.kernel_ms, 3, es);
		}
		ExplainPropertyInteger("Device Memory", "kB", (int64) (st->stats.device_bytes / 1024), es);
		ExplainPropertyInteger("Host Memory", "kB", (int64) (st->host_memory / 1024), es);
	}
	GpuopsNodeExplainInputs(st, es);
}

const CustomExecMethods gpu_agg_exec_methods = {
	GPUAGG_NAME,
	GuardedBegin<BeginGpuAggImpl>,
	GuardedExec<GpuopsExecScan<GpuAggNext>>,
	GuardedEnd<EndGpuAggImpl>,
	GuardedReScan<ReScanGpuAggImpl>,
	NULL, /* MarkPosCustomScan */
	NULL, /* RestrPosCustomScan */
	NULL, /* EstimateDSMCustomScan */
	NULL, /* InitializeDSMCustomScan */
	NULL, /* ReInitializeDSMCustomScan */
	NULL, /* InitializeWorkerCustomScan */
	NULL, /* ShutdownCustomScan */
	GuardedExplain<ExplainGpuAggImpl>,
};

const CustomScanMethods gpu_agg_scan_methods = {
	GPUAGG_NAME,
	GuardedCreateState<CreateGpuAggStateImpl>,
};

void
GpuAggRegister(void)
{
	RegisterCustomScanMethods(&gpu_agg_scan_methods);
}
