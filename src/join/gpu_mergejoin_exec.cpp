/*
 * gpu_mergejoin_exec.cpp
 *    GpuMergeJoin execution.
 *
 * Both children are read whole into row stores (the tuples stay on the
 * host); their key columns become merge words (gpu_mergejoin.h) and go to
 * the device, which sorts both sides and returns, window by window, the
 * (outer row, inner row) pairs with equal keys in the outer side's key
 * order.  The node walks the outer rows in that order, each with its pairs:
 * a pair becomes a scan tuple (outer columns, then inner ones) that the
 * remaining join clauses must pass; left, full and anti joins add the
 * outer rows without a match in their place, right and full joins the
 * inner rows no pair matched at the end.
 *
 * A side below a Gather of GpuStage was read by parallel workers into
 * shared memory: its chunks become the side's store (gpu_stage.h).  A
 * counting node (gpu_mergejoin.h) stops after the merge: the device
 * counts the key pairs, and the node returns that count as its one row.
 *
 * Device failures: with gpuops.cpu_fallback the CPU backend redoes the
 * join from the stored keys and the walk resumes after the pairs already
 * returned.  Both sides over the device budget run on the CPU backend from
 * the start (EXPLAIN says so).  Device memory is released by a
 * memory-context callback on the query context, also on error and cancel.
 *
 * This file is the node: the walk over the pairs that makes rows, and the
 * executor's callbacks; gpu_mergejoin_device.cpp reads the sides and talks
 * to the backend (gpu_mergejoin_state.h).
 */
extern "C" {
#include "postgres.h"

#include "access/xact.h"
#include "pg_compat.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
}

#include "batch.h"
#include "boundary.h"
#include "device.h"
#include "device_session.h"
#include "device_expr.h"
#include "gpu_mergejoin.h"
#include "gpu_mergejoin_state.h"
#include "guarded_scan.h"
#include "guc.h"
#include "join_exec.h"
#include "join_plan.h"
#include "join_filter.h"

extern const CustomExecMethods gpu_mergejoin_exec_methods;

/*
 * The next pair of outer row o: its inner row, its place in the window and
 * the device filter's verdict.
 */
static bool
NextPairOf(GpuMergeJoinState *st, uint32 o, uint64 *irow, uint64 *pair, GpuopsExprResult *verdict)
{
	uint32 b;

	if (!GpuopsNextPairOf<GpuMergeJoinState, GpuMergeJoinNextWindow>(st, o, pair, &b))
		return false;
	*verdict = GpuopsJoinFilterVerdict(st->filter, *pair);
	*irow = b;
	return true;
}

/* The scan tuple of pair `pair` of the window (outer row o, inner row irow). */
static TupleTableSlot *
JoinedPair(GpuMergeJoinState *st, TupleTableSlot *slot, uint64 pair, int64 o, int64 irow)
{
	GpuMergeJoinGatherFrom(st, pair);
	ExecClearTuple(slot);
	GpuopsJoinFillGathered(slot, &st->gathered[0], pair, o, st->needed);
	GpuopsJoinFillGathered(slot, &st->gathered[1], pair, irow, st->needed);
	return ExecStoreVirtualTuple(slot);
}

/* The scan tuple of outer row o and inner row irow (-1: NULLs on that side). */
static TupleTableSlot *
JoinedRow(GpuMergeJoinState *st, TupleTableSlot *slot, int64 o, int64 irow)
{
	ExecClearTuple(slot);
	GpuopsJoinFillSide(slot, 0, &st->outer()->store, o, st->needed);
	GpuopsJoinFillSide(slot, st->outer_ncols, &st->inner()->store, irow, st->needed);
	return ExecStoreVirtualTuple(slot);
}

/* Counting: the one row, every count(*) column the number of key pairs. */
static TupleTableSlot *
CountRow(GpuMergeJoinState *st, TupleTableSlot *slot)
{
	int natts = slot->tts_tupleDescriptor->natts;

	ExecClearTuple(slot);
	if (st->counted)
		return slot;
	st->counted = true;
	for (int c = 0; c < natts; c++)
	{
		bool count = c >= natts - st->count_cols;

		slot->tts_values[c] = count ? Int64GetDatum((int64) st->stats.pairs) : (Datum) 0;
		slot->tts_isnull[c] = !count;
	}
	return ExecStoreVirtualTuple(slot);
}

static TupleTableSlot *
GpuMergeJoinNext(ScanState *ss)
{
	GpuMergeJoinState *st = (GpuMergeJoinState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	ExprContext *econtext = ss->ps.ps_ExprContext;

	if (!st->built)
		GpuMergeJoinBuild(st);
	if (st->count_cols > 0)
		return CountRow(st, slot);
	while (st->opos < st->outer()->store.nrows)
	{
		uint32 o = st->order[st->opos];
		uint64 b;
		uint64 pair;
		GpuopsExprResult v;

		while (NextPairOf(st, o, &b, &pair, &v))
		{
			if (v != GPUOPS_EXPR_FALSE)
				JoinedPair(st, slot, pair, o, (int64) b);
			/* the device's TRUE stands when every clause was on the device */
			if (v == GPUOPS_EXPR_FALSE ||
				(!(v == GPUOPS_EXPR_TRUE && st->filter->all_compiled) &&
				 !GpuopsJoinHolds(st->join_qual, econtext, slot)))
			{
				if ((++st->filtered & 1023) == 0)
					CHECK_FOR_INTERRUPTS();
				continue;
			}
			st->matched = true;
			if (st->fill_inner)
				st->inner_matched[b] = true;
			if (st->decides_once)
			{
				while (NextPairOf(st, o, &b, &pair, &v))
					;
				break;
			}
			if (GpuopsJoinHolds(st->filter_qual, econtext, slot))
				return slot;
		}
		/* every pair of o has been seen */
		st->opos++;
		if ((st->opos & 65535) == 0)
			CHECK_FOR_INTERRUPTS();
		if (st->matched ? st->jointype == JOIN_SEMI : st->fill_outer)
		{
			st->matched = false;
			JoinedRow(st, slot, o, -1);
			if (GpuopsJoinHolds(st->filter_qual, econtext, slot))
				return slot;
			continue;
		}
		st->matched = false;
	}
	while (st->fill_inner && st->inner_pos < st->inner()->store.nrows)
	{
		uint64 b = st->inner_pos++;

		if ((b & 65535) == 0)
			CHECK_FOR_INTERRUPTS();
		if (st->inner_matched[b])
			continue;
		JoinedRow(st, slot, -1, (int64) b);
		if (GpuopsJoinHolds(st->filter_qual, econtext, slot))
			return slot;
	}
	return ExecClearTuple(slot);
}

static Node *
CreateGpuMergeJoinStateImpl(CustomScan *cscan)
{
	GpuMergeJoinState *st = NewCustomScanState<GpuMergeJoinState>(cscan,
																  &gpu_mergejoin_exec_methods);
	GpuopsEquiJoinPlan *plan = GpuopsReadEquiJoinPlan(cscan->custom_private, GPUMERGEJOIN_NAME);

	st->jointype = plan->jointype;
	st->fill_outer = st->jointype == JOIN_LEFT || st->jointype == JOIN_FULL ||
		st->jointype == JOIN_ANTI;
	st->fill_inner = st->jointype == JOIN_RIGHT || st->jointype == JOIN_FULL;
	st->decides_once = st->jointype == JOIN_SEMI || st->jointype == JOIN_ANTI;
	st->nkeys = plan->nkeys;
	st->count_cols = plan->count_cols;
	for (int k = 0; k < st->nkeys; k++)
	{
		st->outer_col[k] = plan->keys[k].outer_col;
		st->inner_col[k] = plan->keys[k].inner_col;
		st->outer_type[k] = plan->keys[k].outer_type;
		st->inner_type[k] = plan->keys[k].inner_type;
	}
	st->filter_plan = plan->filter;
	pfree(plan);
	return (Node *) st;
}

static void
BeginGpuMergeJoinImpl(CustomScanState *node, EState *estate, int eflags)
{
	GpuMergeJoinState *st = (GpuMergeJoinState *) node;

	/*
	 * The prewarm's share of the device: over two GpuStages whose workers
	 * only read rows, the device is this process's alone (device_shared).
	 */
	GpuopsJoinNodeBegin(st, estate, eflags, true, st->filter_plan);
	st->key_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuMergeJoin keys",
										ALLOCSET_DEFAULT_SIZES);
	GpuMergeJoinInitGathered(st);
	st->dev = GpuopsNodeDevice<GpuMergeJoinDevice>(st, estate);
}

static void
EndGpuMergeJoinImpl(CustomScanState *node)
{
	GpuMergeJoinState *st = (GpuMergeJoinState *) node;

	GpuopsNodeStatDevice(st, st->stats.outer_rows + st->stats.inner_rows, st->stats.copy_ms,
						 st->stats.kernel_ms, st->stats.bytes_from_device);
	GpuopsJoinNodeEnd(st);
}

static void
ReScanGpuMergeJoinImpl(CustomScanState *node)
{
	GpuMergeJoinState *st = (GpuMergeJoinState *) node;

	GpuopsJoinNodeRescan(st);
	st->counted = false;
	if (!st->built)
		return;
	st->dev->end();
	/* new input, or staged rows (GpuopsNodeInputChanged): read both sides again */
	if (GpuopsNodeInputChanged(st, 0) || GpuopsNodeInputChanged(st, 1))
	{
		GpuopsNodeRestartInput(st, 0);
		GpuopsNodeRestartInput(st, 1);
		MemoryContextReset(st->key_cxt);
		GpuMergeJoinInitGathered(st); /* its arrays were in key_cxt */
		st->inner_matched = NULL;	  /* it was in the store's context */
		st->built = false;
		return;
	}
	/* the same input: join the stored keys again for a fresh walk */
	GpuMergeJoinRejoin(st);
	if (st->inner_matched)
		memset(st->inner_matched, 0, Max(st->inner()->store.nrows, 1));
	st->inner_pos = 0;
	st->opos = 0;
	st->matched = false;
}

static void
ExplainGpuMergeJoinImpl(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuMergeJoinState *st = (GpuMergeJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	List *conds = NIL;
	int inner_base = list_length(((Plan *) linitial(cscan->custom_plans))->targetlist);
	bool prefix = GpuopsExplainUsePrefix(es);

	for (int k = 0; k < st->nkeys; k++)
	{
		TargetEntry *o = (TargetEntry *) list_nth(cscan->custom_scan_tlist, st->outer_col[k]);
		TargetEntry *i = (TargetEntry *) list_nth(cscan->custom_scan_tlist,
												  inner_base + st->inner_col[k]);

		conds = lappend(conds,
						psprintf("(%s = %s)",
								 deparse_expression((Node *) o->expr, context, prefix, false),
								 deparse_expression((Node *) i->expr, context, prefix, false)));
	}
	ExplainPropertyText("Join Type", GpuopsJoinTypeName(st->jointype), es);
	ExplainPropertyList("Merge Keys", conds, es);
	if (linitial(cscan->custom_exprs) != NIL)
		ExplainPropertyText(
			"Join Filter",
			deparse_expression((Node *) make_ands_explicit((List *) linitial(cscan->custom_exprs)),
							   context, true, false),
			es);
	if (lfourth(cscan->custom_exprs) != NIL)
		ExplainPropertyText(
			"Device Filter",
			deparse_expression((Node *) make_ands_explicit((List *) lfourth(cscan->custom_exprs)),
							   context, true, false),
			es);
	if (lsecond(cscan->custom_exprs) != NIL)
		ExplainPropertyText(
			"Filter",
			deparse_expression((Node *) make_ands_explicit((List *) lsecond(cscan->custom_exprs)),
							   context, true, false),
			es);
	if (st->count_cols > 0)
		ExplainPropertyText("Aggregate", "count(*) of the key pairs", es);
	else if (es->analyze)
		ExplainPropertyInteger("Rows Removed by Join Filter", NULL, (int64) st->filtered, es);
	if (es->analyze && st->built)
	{
		GpuopsNodeExplainBackend(st, es);
		ExplainPropertyInteger("Outer Rows", NULL, (int64) st->stats.outer_rows, es);
		ExplainPropertyInteger("Inner Rows", NULL, (int64) st->stats.inner_rows, es);
		ExplainPropertyInteger("Key Pairs", NULL, (int64) st->stats.pairs, es);
		if (st->stats.windows > 0)
			ExplainPropertyInteger("Extra Pair Windows", NULL, st->stats.windows, es);
		ExplainPropertyInteger("Sort Passes", NULL, st->stats.sort_passes, es);
		if (es->timing)
		{
			ExplainPropertyFloat("Outer Read Time", "ms", st->read_ms[0], 3, es);
			ExplainPropertyFloat("Inner Read Time", "ms", st->read_ms[1], 3, es);
			ExplainPropertyFloat("Key Staging Time", "ms", st->keys_ms, 3, es);
			ExplainPropertyFloat("Join Time", "ms", st->join_ms, 3, es);
			ExplainPropertyFloat("Copy Time", "ms", st->stats.copy_ms, 3, es);
			ExplainPropertyFloat("Kernel Time", "ms", st->stats.kernel_ms, 3, es);
		}
		ExplainPropertyInteger("Device Memory", "kB", (int64) (st->stats.device_bytes / 1024), es);
		ExplainPropertyInteger("Host Memory", "kB",
							   (int64) ((GpuopsRowStoreMemory(&st->outer()->store) +
										 GpuopsRowStoreMemory(&st->inner()->store)) /
										1024),
							   es);
	}
	GpuopsNodeExplainInputs(st, es);
}

const CustomExecMethods gpu_mergejoin_exec_methods = {
	GPUMERGEJOIN_NAME,
	GuardedBegin<BeginGpuMergeJoinImpl>,
	GuardedExec<GpuopsExecScan<GpuMergeJoinNext>>,
	GuardedEnd<EndGpuMergeJoinImpl>,
	GuardedReScan<ReScanGpuMergeJoinImpl>,
	NULL, /* MarkPosCustomScan */
	NULL, /* RestrPosCustomScan */
	NULL, /* EstimateDSMCustomScan */
	NULL, /* InitializeDSMCustomScan */
	NULL, /* ReInitializeDSMCustomScan */
	NULL, /* InitializeWorkerCustomScan */
	NULL, /* ShutdownCustomScan */
	GuardedExplain<ExplainGpuMergeJoinImpl>,
};

const CustomScanMethods gpu_mergejoin_scan_methods = {
	GPUMERGEJOIN_NAME,
	GuardedCreateState<CreateGpuMergeJoinStateImpl>,
};

void
GpuMergeJoinRegister(void)
{
	RegisterCustomScanMethods(&gpu_mergejoin_scan_methods);
}
