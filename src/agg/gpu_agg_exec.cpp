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
 */
extern "C" {
#include "postgres.h"


#include "commands/explain.h"
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

/*
 * An aggregate's null bitmap for rows [lo, lo + n) of a batch (lo a multiple
 * of 8): its argument is NULL, or its FILTER (or count(x)'s "x IS NOT NULL")
 * is not true.  NULL when no row is.
 */
static const uint8 *
AggregateMask(const GpuAggDesc *d, GpuopsBatch *batch, uint32 lo, uint32 n)
{
	int			conds[2] = {d->filter_col, d->notnull_col};
	const uint8 *argnulls = d->arg_col >= 0 ? batch->nulls[d->arg_col] : NULL;
	uint8	   *mask;
	Size		nbytes = (n + 7) / 8;

	if (d->filter_col < 0 && d->notnull_col < 0)
		return argnulls ? argnulls + lo / 8 : NULL;
	mask = (uint8 *) palloc0(Max(nbytes, 1));
	if (argnulls)
		memcpy(mask, argnulls + lo / 8, nbytes);
	for (int c = 0; c < 2; c++)
	{
		const bool *vals;

		if (conds[c] < 0)
			continue;
		vals = (const bool *) batch->values[conds[c]];
		for (uint32 i = 0; i < n; i++)
			if (GpuopsBatchIsNull(batch, conds[c], lo + i) || !vals[lo + i])
				mask[i >> 3] |= (uint8) (1 << (i & 7));
	}
	return mask;
}

static const char *
RowsAt(const char *p, uint32 rows, uint32 width)
{
	return p ? p + (Size) rows * width : NULL;
}

static void
AddStats(GpuAggState *st, const GpuopsAggStats *s)
{
	st->stats.rows += s->rows;
	st->stats.groups += s->groups;
	st->stats.key_words = s->key_words;
	st->stats.sort_bits = Max(st->stats.sort_bits, s->sort_bits);
	st->stats.copy_ms += s->copy_ms;
	st->stats.kernel_ms += s->kernel_ms;
	st->stats.device_bytes = Max(st->stats.device_bytes, s->device_bytes);
	st->stats.hash_capacity = Max(st->stats.hash_capacity, s->hash_capacity);
	st->hashed_chunks += s->hashed;
	st->overflow_chunks += s->hash_overflow;
}

/*
 * A row whose computed input the device stopped at: PostgreSQL evaluates
 * the arguments there, in the aggregates' order (FILTER first, as its
 * Agg does), and raises the error the device saw.  The device stops only
 * where PostgreSQL raises one (DeviceExprCompileInput), so returning is a
 * bug, reported as such.
 */
static void
RaiseInputError(GpuAggState *st, uint64 row)
{
	TupleTableSlot *slot = st->recheck_slot;
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;

	GpuopsRowStoreFetchRow(st->store(), row, slot);
	econtext->ecxt_outertuple = slot;
	for (int a = 0; a < st->naggs; a++)
	{
		const GpuAggDesc *d = &st->aggs[a];
		bool		isnull;

		if (st->program_exprs[a] == NULL)
			continue;
		if (d->filter_col >= 0 &&
			(slot->tts_isnull[d->filter_col] || !DatumGetBool(slot->tts_values[d->filter_col])))
			continue;
		(void) ExecEvalExpr(st->program_exprs[a], econtext, &isnull);
	}
	elog(ERROR, "GpuAgg: the device could not compute an aggregate input that PostgreSQL computes");
}

/*
 * Aggregates rows [from, to) on `backend` (from a multiple of 8); the
 * groups, with rows numbered from `from`, stay in st->dev.
 */
static GpuopsStatus
AggregateRange(GpuAggState *st, const GpuopsAggBackend *backend, const GpuopsSettings *settings,
			   const GpuopsAggSpec *spec, uint64 from, uint64 to, uint64 *ngroups)
{
	GpuopsStatus rc;
	GpuopsAggStats s;

	st->dev->end();
	st->dev->backend = backend;
	rc = backend->agg_begin(settings, spec, to - from, &st->dev->handle);
	for (uint64 row = from; rc == GPUOPS_OK && row < to;)
	{
		int			b = (int) (row >> GPUOPS_BATCH_SHIFT);
		GpuopsBatch *batch = st->store()->batches[b];
		uint32		lo = (uint32) (row & (GPUOPS_BATCH_ROWS - 1));
		uint32		n = (uint32) Min((uint64) (batch->nrows - lo), to - row);
		GpuopsAggBatch ab;
		MemoryContext old = MemoryContextSwitchTo(st->scratch_cxt);

		memset(&ab, 0, sizeof(ab));
		ab.nrows = n;
		for (int k = 0; k < st->nkeys; k++)
		{
			ab.keys[k] = RowsAt(GpuAggKeyColumn(st, k, b), lo, gpuops_key_raw_width(st->key_kind[k]));
			ab.key_nulls[k] = batch->nulls[k] ? batch->nulls[k] + lo / 8 : NULL;
		}
		for (int a = 0; a < st->naggs; a++)
		{
			const GpuAggDesc *d = &st->aggs[a];

			if (d->arg_col >= 0)
				ab.values[a] = RowsAt(GpuAggValueColumn(st, a, b), lo,
									  gpuops_key_raw_width(d->value_kind));
			ab.value_nulls[a] = AggregateMask(d, batch, lo, n);
		}
		if (st->prog_ncols > 0)
			DeviceExprStageRows(st->store(), row, n, st->prog_cols, st->prog_types, st->prog_ncols,
								st->scratch_cxt, &ab.inputs);
		MemoryContextSwitchTo(old);
		rc = backend->agg_add(st->dev->handle, &ab);
		MemoryContextReset(st->scratch_cxt);
		row += n;
		CHECK_FOR_INTERRUPTS();
	}
	if (rc == GPUOPS_OK)
		rc = backend->agg_finish(st->dev->handle, ngroups);
	if (rc == GPUOPS_OK)
	{
		backend->agg_stats(st->dev->handle, &s);
		if (s.recheck_row != GPUOPS_AGG_NO_RECHECK)
			RaiseInputError(st, from + s.recheck_row);
		AddStats(st, &s);
		st->chunks++;
	}
	return rc;
}

/*
 * Runs the whole aggregation on `backend`: in one piece, or in chunks of
 * what the device budget holds, merged on the host.
 */
static GpuopsStatus
Aggregate(GpuAggState *st, const GpuopsAggBackend *backend)
{
	GpuopsSettings settings =
		GpuopsNodeSettings<&GpuopsDevice::agg>(st, GpuopsSettingsFor(st->device_shared), backend);
	GpuopsAggSpec spec;
	GpuopsStatus rc;
	uint64		n = st->store()->nrows;
	uint64		capacity;
	uint64		ngroups;

	st->dev->end();
	memset(&st->stats, 0, sizeof(st->stats));
	st->chunks = 0;
	st->hashed_chunks = 0;
	st->overflow_chunks = 0;
	st->merge = NULL;
	memset(&spec, 0, sizeof(spec));
	spec.nkeys = st->nkeys;
	for (int k = 0; k < st->nkeys; k++)
		spec.keys[k] = st->key_kind[k];
	spec.naggs = st->naggs;
	spec.order_agg = -1;
	spec.hash_capacity = st->hash_capacity;
	spec.program_ncols = st->prog_ncols;
	for (int a = 0; a < st->naggs; a++)
	{
		spec.kinds[a] = st->aggs[a].kind;
		spec.value_kinds[a] = st->aggs[a].value_kind;
		spec.programs[a] = st->programs[a];
		spec.fractions[a] = st->aggs[a].fraction;
		if (gpuops_agg_ordered(st->aggs[a].kind))
		{
			/* the planner gave every ordered aggregate the same input and direction */
			if (spec.order_agg < 0)
				spec.order_agg = a;
			spec.order_desc |= st->aggs[a].desc ? 1 : 0;
		}
	}
	st->backend_name = backend->name;
	rc = backend->agg_capacity(&settings, &spec, &capacity);
	if (rc != GPUOPS_OK)
		return rc;
	if (n > capacity && spec.order_agg >= 0)
	{
		/*
		 * Distinct counts and percentiles do not combine across chunks: an
		 * input over the device budget is aggregated whole, on the CPU.
		 */
		if (st->fallback == NULL)
			st->fallback = pstrdup("distinct or ordered aggregates over the device budget, "
								   "aggregated whole on the CPU");
		if (backend != gpuops_cpu_device()->agg)
		{
			backend = gpuops_cpu_device()->agg;
			st->backend_name = backend->name;
			settings.fault = GPUOPS_FAULT_NONE;
		}
		settings.device_memory_limit = 0;
		capacity = n;
	}
	if (n <= capacity)
	{
		rc = AggregateRange(st, backend, &settings, &spec, 0, n, &st->ngroups);
		if (rc == GPUOPS_OK)
			rc = backend->agg_groups(st->dev->handle, &st->group_rows, &st->results);
		return rc;
	}
	MemoryContextReset(st->merge_cxt);
	st->merge = GpuAggMergeCreate(st, st->merge_cxt);
	for (uint64 from = 0; from < n; from += capacity)
	{
		const uint64 *rows;
		const GpuopsAggResult *results;

		rc = AggregateRange(st, backend, &settings, &spec, from, Min(from + capacity, n), &ngroups);
		if (rc == GPUOPS_OK)
			rc = backend->agg_groups(st->dev->handle, &rows, &results);
		if (rc != GPUOPS_OK)
			return rc;
		GpuAggMergeChunk(st, from, ngroups, rows, results);
		st->dev->end();
	}
	st->ngroups = GpuAggMergeGroups(st, &st->group_rows, &st->results);
	return GPUOPS_OK;
}

/* Reads the whole input and aggregates it, on the CPU after a device failure. */
static void
ReadAndAggregate(GpuAggState *st)
{
	instr_time	t0,
				t1;

	INSTR_TIME_SET_CURRENT(t0);
	/* below a Gather of GpuStage: the workers' rows, in shared memory */
	GpuopsNodeReadInput(st, 0);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	st->read_ms += INSTR_TIME_GET_MILLISEC(t1);
	st->host_memory = GpuopsRowStoreMemory(st->store());
	GpuAggEncode(st);
	GpuAggNumericPrepare(st);

	GpuopsNodeRun<&GpuopsDevice::agg>(st, [&](const GpuopsAggBackend *backend) {
		return Aggregate(st, backend);
	});
	GpuAggNumericHost(st);
	st->aggregated = true;
	st->next_group = 0;
	st->empty_row_done = false;
}

/* Fills the scan tuple of group g (or, g < 0, the one row of an empty input). */
static TupleTableSlot *
GroupRow(GpuAggState *st, int64 g, TupleTableSlot *slot)
{
	static const GpuopsAggResult empty = {};
	int			ncols = st->nkeys + st->nextra;
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
		Datum		value = (Datum) 0;
		Datum		value2 = (Datum) 0;
		bool		isnull;

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
		ReadAndAggregate(st);
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
	PlanFields	fields(cscan->custom_private, GPUAGG_NAME);
	int			a = 0;
	ListCell   *lc;

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
	foreach(lc, plan->programs)
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
	TupleDesc	desc;

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
			Expr	   *e = (Expr *) list_nth(st->prog_exprs, a);

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
	GpuopsNodeEnd((GpuAggState *) node);
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
	List	   *context;
	List	   *keys = NIL;
	List	   *aggs = NIL;
	bool		prefix = list_length(es->rtable) > 1 || es->verbose;

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
			aggs = lappend(aggs,
						   deparse_expression((Node *) ((TargetEntry *) list_nth(cscan->custom_scan_tlist,
																				 st->nkeys + st->nextra + a))->expr,
											  context, prefix, false));
	if (aggs != NIL)
		ExplainPropertyList("Inputs Computed on Device", aggs, es);
	ExplainPropertyText("Strategy", st->nkeys == 0 ? "plain on device" :
						st->hash_capacity > 0 ? "hashed on device" : "sorted on device", es);
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
			ExplainPropertyText("Hash Overflow", "more groups than the hash capacity, sorted instead", es);
		if (st->chunks > 1)
			ExplainPropertyInteger("Chunks", NULL, st->chunks, es);
		{
			int			host_sums = 0;

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
	NULL,						/* MarkPosCustomScan */
	NULL,						/* RestrPosCustomScan */
	NULL,						/* EstimateDSMCustomScan */
	NULL,						/* InitializeDSMCustomScan */
	NULL,						/* ReInitializeDSMCustomScan */
	NULL,						/* InitializeWorkerCustomScan */
	NULL,						/* ShutdownCustomScan */
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
