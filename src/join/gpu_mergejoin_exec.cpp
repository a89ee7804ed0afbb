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
 */
extern "C" {
#include "postgres.h"

#include "access/xact.h"
#include "commands/explain.h"
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
#include "guarded_scan.h"
#include "guc.h"
#include "join_exec.h"
#include "join_plan.h"
#include "join_filter.h"

extern const CustomExecMethods gpu_mergejoin_exec_methods;

typedef DeviceSession<GpuopsMergeJoinBackend, GpuopsMergeJoin, &GpuopsMergeJoinBackend::mj_end>
			GpuMergeJoinDevice;

typedef struct GpuMergeJoinState : GpuopsJoinNode
{
	JoinType	jointype;
	bool		fill_outer;		/* LEFT, FULL, ANTI */
	bool		fill_inner;		/* RIGHT, FULL */
	bool		decides_once;	/* SEMI, ANTI */
	int			nkeys;
	int			outer_col[GPUOPS_MAX_JOIN_KEYS];
	int			inner_col[GPUOPS_MAX_JOIN_KEYS];
	Oid			outer_type[GPUOPS_MAX_JOIN_KEYS];
	Oid			inner_type[GPUOPS_MAX_JOIN_KEYS];

	int			count_cols;		/* counting: the scan tuple's last columns are count(*) */
	bool		counted;		/* counting: the row has been returned */
	GpuMergeJoinDevice *dev;
	MemoryContext key_cxt;		/* both sides' merge words */
	GpuopsJoinKeys keys[2];
	bool		built;

	const uint32 *order;		/* outer rows in key order */
	uint64		opos;			/* the outer row being walked, in that order */
	GpuopsJoinPairs pairs;
	GpuopsJoinGathered gathered[2];	/* the window's needed columns in pair order */
	uint64		cursor;
	uint64		pairs_before;
	bool		matched;
	bool	   *inner_matched;
	uint64		inner_pos;
	List	   *filter_plan;	/* the pair filter's plan storage (join_filter.h) */
	uint64		filtered;

	/* EXPLAIN ANALYZE: where the time before the first row went (ms) */
	double		read_ms[2];		/* reading a side (or collecting its staged chunks) */
	double		keys_ms;		/* making both sides' merge words */
	double		join_ms;		/* the device join, waiting for the device included */
	GpuopsMergeJoinStats stats;
} GpuMergeJoinState;

static GpuopsMergeWordKind
MergeWordKind(Oid type)
{
	switch (type)
	{
		case INT2OID:
			return GPUOPS_MW_INT16;
		case INT4OID:
		case DATEOID:
			return GPUOPS_MW_INT32;
		case BOOLOID:
			return GPUOPS_MW_BOOL;
		case FLOAT4OID:
			return GPUOPS_MW_FLOAT4;
		case FLOAT8OID:
			return GPUOPS_MW_FLOAT8;
		default:				/* int8, time, timestamp, timestamptz */
			return GPUOPS_MW_INT64;
	}
}

/*
 * A side's key columns as merge words and null bitmaps, all rows in row
 * order: the words on several threads straight from the store's batches
 * (gpuops_host_merge_words), the NULL bits copied from the batches' bitmaps
 * (a batch holds a multiple of 8 rows).
 */
static void
StageKeys(GpuMergeJoinState *st, GpuopsRowStore *store, bool outer, GpuopsJoinKeys *keys)
{
	const Oid  *types = outer ? st->outer_type : st->inner_type;
	const int  *cols = outer ? st->outer_col : st->inner_col;
	uint64		n = store->nrows;
	memset(keys, 0, sizeof(*keys));
	keys->nkeys = st->nkeys;
	keys->nrows = n;
	for (int k = 0; k < st->nkeys; k++)
	{
		uint64	   *w = (uint64 *) MemoryContextAllocHuge(st->key_cxt, Max(n, 1) * sizeof(uint64));
		uint8	   *bitmap = NULL;
		const char **bv = GpuopsRowStoreColumnBatches(store, cols[k]);
		GpuopsStatus rc;

		rc = gpuops_host_merge_words(bv, n, GPUOPS_BATCH_SHIFT, MergeWordKind(types[k]), w);
		pfree(bv);
		if (rc != GPUOPS_OK)
			GpuopsRaiseStatus("making merge keys", rc);
		for (int b = 0; b < store->nbatches; b++)
		{
			const GpuopsBatch *batch = store->batches[b];

			if (batch->nulls[cols[k]] == NULL)
				continue;
			if (bitmap == NULL)
				bitmap = (uint8 *) MemoryContextAllocZero(st->key_cxt, (n + 7) / 8 + 1);
			memcpy(bitmap + ((Size) b << GPUOPS_BATCH_SHIFT) / 8, batch->nulls[cols[k]],
				   (batch->nrows + 7) / 8);
		}
		/* NULLs tie in every backend's sort */
		for (uint64 i = 0; bitmap && i < n; i += 8)
		{
			if (bitmap[i >> 3] == 0)
				continue;
			for (uint64 j = i; j < Min(n, i + 8); j++)
				if (bitmap[j >> 3] & (1 << (j & 7)))
					w[j] = 0;
		}
		keys->words[k] = w;
		keys->nulls[k] = bitmap;
		CHECK_FOR_INTERRUPTS();
	}
}

/* No gathered arrays (at the start, or after key_cxt, which held them, was reset). */
static void
InitGathered(GpuMergeJoinState *st)
{
	memset(st->gathered, 0, sizeof(st->gathered));
	st->gathered[0].store = &st->outer()->store;
	st->gathered[1].store = &st->inner()->store;
	st->gathered[1].at = st->outer_ncols;
}

/* A new window: nothing of it gathered yet. */
static void
ForgetGathered(GpuMergeJoinState *st)
{
	st->gathered[0].npairs = st->gathered[1].npairs = 0;
	st->gathered[0].first = st->gathered[1].first = 0;
}

/*
 * Before returning pair `pair` of the window: past the pairs gathered, the
 * next part of the window's needed columns, both sides, in pair order.
 */
static void
GatherFrom(GpuMergeJoinState *st, uint64 pair)
{
	uint64		n;

	if (pair < st->gathered[0].first + st->gathered[0].npairs ||
		st->pairs.npairs - pair < GPUOPS_JOIN_GATHER_MIN)
		return;
	n = Min(st->pairs.npairs - pair, (uint64) GPUOPS_JOIN_GATHER_PAIRS);
	GpuopsJoinGather(&st->gathered[0], &st->outer()->store, 0, st->pairs.probe_rows, pair, n,
					 st->needed, st->key_cxt);
	GpuopsJoinGather(&st->gathered[1], &st->inner()->store, st->outer_ncols, st->pairs.build_rows,
					 pair, n, st->needed, st->key_cxt);
}

static void
SaveStats(GpuMergeJoinState *st)
{
	if (st->dev->handle)
	{
		st->dev->backend->mj_stats(st->dev->handle, &st->stats);
		st->backend_name = st->dev->backend->name;
	}
}

/*
 * Runs the join on `backend` from the staged keys: both sides, the merge,
 * the first window; then passes over `skip` pairs already walked.
 */
static GpuopsStatus
RunJoin(GpuMergeJoinState *st, const GpuopsMergeJoinBackend *backend, uint64 skip)
{
	GpuopsSettings settings = GpuopsSettingsFor(st->device_shared);
	GpuopsStatus rc;

	settings = GpuopsNodeSettings<&GpuopsDevice::mergejoin>(st, settings, backend);
	st->dev->end();
	st->dev->backend = backend;
	rc = backend->mj_begin(&settings, st->nkeys, &st->dev->handle);
	if (rc == GPUOPS_OK && backend != gpuops_cpu_device()->mergejoin)
	{
		uint64		capacity = backend->mj_capacity(st->dev->handle);

		/* over the device budget: the CPU backend, which has none */
		if (capacity > 0 && st->keys[0].nrows + st->keys[1].nrows > capacity)
		{
			st->dev->end();
			if (st->fallback == NULL)
				st->fallback = pstrdup("both sides exceed the device budget");
			return RunJoin(st, gpuops_cpu_device()->mergejoin, skip);
		}
	}
	if (rc == GPUOPS_OK)
		rc = backend->mj_side(st->dev->handle, 0, &st->keys[0]);
	if (rc == GPUOPS_OK)
		rc = backend->mj_side(st->dev->handle, 1, &st->keys[1]);
	if (st->count_cols > 0)
	{
		/* counting: the merge and the count, no pair (the count is in the stats) */
		if (rc == GPUOPS_OK)
			rc = backend->mj_join(st->dev->handle, NULL);
		if (rc == GPUOPS_OK)
			SaveStats(st);
		return rc;
	}
	if (rc == GPUOPS_OK)
		rc = backend->mj_join(st->dev->handle, &st->pairs);
	if (rc == GPUOPS_OK)
		rc = backend->mj_outer_order(st->dev->handle, &st->order);
	st->pairs_before = 0;
	while (rc == GPUOPS_OK && skip >= st->pairs.npairs && st->pairs.more && skip > 0)
	{
		skip -= st->pairs.npairs;
		st->pairs_before += st->pairs.npairs;
		rc = backend->mj_next_pairs(st->dev->handle, &st->pairs);
	}
	st->cursor = skip;
	if (rc == GPUOPS_OK)
	{
		GpuopsJoinFilterApply(st->filter, &st->pairs);
		ForgetGathered(st);
		SaveStats(st);
	}
	return rc;
}

/* After a device failure: the CPU backend redoes the join (or the query fails). */
static void
FallBack(GpuMergeJoinState *st, GpuopsStatus rc, uint64 skip)
{
	GpuopsNodeFallBack<&GpuopsDevice::mergejoin>(st, rc, [&](const GpuopsMergeJoinBackend *cpu) {
		return RunJoin(st, cpu, skip);
	});
}

/* Milliseconds since *t, which becomes now. */
static double
Lap(instr_time *t)
{
	instr_time	now;
	double		ms;

	INSTR_TIME_SET_CURRENT(now);
	ms = INSTR_TIME_GET_MILLISEC(now) - INSTR_TIME_GET_MILLISEC(*t);
	*t = now;
	return ms;
}

/* Reads both sides, stages their keys and runs the join. */
static void
Build(GpuMergeJoinState *st)
{
	instr_time	t;

	INSTR_TIME_SET_CURRENT(t);

	for (int side = 0; side < 2; side++)
	{
		GpuopsRowStore *store = st->store(side);

		/* a staged side: the Gather has the workers read it */
		GpuopsNodeReadInput(st, side);
		st->read_ms[side] += Lap(&t);
		StageKeys(st, store, side == 0, &st->keys[side]);
		GpuopsJoinFilterLoad(st->filter, side, store, false, 0, 0);
		st->keys_ms += Lap(&t);
	}
	GpuopsNodeRun<&GpuopsDevice::mergejoin>(st, [&](const GpuopsMergeJoinBackend *backend) {
		return RunJoin(st, backend, 0);
	});
	st->join_ms += Lap(&t);
	if (st->fill_inner)
		st->inner_matched = (bool *) MemoryContextAllocZero(st->inner()->store.cxt,
															Max(st->inner()->store.nrows, 1));
	st->inner_pos = 0;
	st->opos = 0;
	st->matched = false;
	st->built = true;
}

static void
NextWindow(GpuMergeJoinState *st)
{
	uint64		walked = st->pairs_before + st->pairs.npairs;
	GpuopsStatus rc = st->dev->backend->mj_next_pairs(st->dev->handle, &st->pairs);

	if (rc != GPUOPS_OK)
	{
		FallBack(st, rc, walked);
		return;
	}
	st->pairs_before = walked;
	st->cursor = 0;
	GpuopsJoinFilterApply(st->filter, &st->pairs);
	ForgetGathered(st);
	SaveStats(st);
}

/*
 * The next pair of outer row o: its inner row, its place in the window and
 * the device filter's verdict.
 */
static bool
NextPairOf(GpuMergeJoinState *st, uint32 o, uint64 *irow, uint64 *pair,
		   GpuopsExprResult *verdict)
{
	uint32		b;

	if (!GpuopsNextPairOf<GpuMergeJoinState, NextWindow>(st, o, pair, &b))
		return false;
	*verdict = GpuopsJoinFilterVerdict(st->filter, *pair);
	*irow = b;
	return true;
}

/* The scan tuple of pair `pair` of the window (outer row o, inner row irow). */
static TupleTableSlot *
JoinedPair(GpuMergeJoinState *st, TupleTableSlot *slot, uint64 pair, int64 o, int64 irow)
{
	GatherFrom(st, pair);
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
	int			natts = slot->tts_tupleDescriptor->natts;

	ExecClearTuple(slot);
	if (st->counted)
		return slot;
	st->counted = true;
	for (int c = 0; c < natts; c++)
	{
		bool		count = c >= natts - st->count_cols;

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
		Build(st);
	if (st->count_cols > 0)
		return CountRow(st, slot);
	while (st->opos < st->outer()->store.nrows)
	{
		uint32		o = st->order[st->opos];
		uint64		b;
		uint64		pair;
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
		uint64		b = st->inner_pos++;

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
	GpuMergeJoinState *st = NewCustomScanState<GpuMergeJoinState>(cscan, &gpu_mergejoin_exec_methods);
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
	InitGathered(st);
	st->dev = GpuopsNodeDevice<GpuMergeJoinDevice>(st, estate);
}

static void
EndGpuMergeJoinImpl(CustomScanState *node)
{
	GpuopsJoinNodeEnd((GpuMergeJoinState *) node);
}

static void
ReScanGpuMergeJoinImpl(CustomScanState *node)
{
	GpuMergeJoinState *st = (GpuMergeJoinState *) node;
	GpuopsStatus rc;

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
		InitGathered(st);		/* its arrays were in key_cxt */
		st->inner_matched = NULL;	/* it was in the store's context */
		st->built = false;
		return;
	}
	/* the same input: join the stored keys again for a fresh walk */
	rc = RunJoin(st, st->fallback ? gpuops_cpu_device()->mergejoin
				 : GpuopsPrimaryDevice()->mergejoin, 0);
	if (rc != GPUOPS_OK)
		FallBack(st, rc, 0);
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
	List	   *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	List	   *conds = NIL;
	int			inner_base = list_length(((Plan *) linitial(cscan->custom_plans))->targetlist);
	bool		prefix = list_length(es->rtable) > 1 || es->verbose;

	for (int k = 0; k < st->nkeys; k++)
	{
		TargetEntry *o = (TargetEntry *) list_nth(cscan->custom_scan_tlist, st->outer_col[k]);
		TargetEntry *i = (TargetEntry *) list_nth(cscan->custom_scan_tlist,
												  inner_base + st->inner_col[k]);

		conds = lappend(conds, psprintf("(%s = %s)",
										deparse_expression((Node *) o->expr, context, prefix, false),
										deparse_expression((Node *) i->expr, context, prefix, false)));
	}
	ExplainPropertyText("Join Type", GpuopsJoinTypeName(st->jointype), es);
	ExplainPropertyList("Merge Keys", conds, es);
	if (linitial(cscan->custom_exprs) != NIL)
		ExplainPropertyText("Join Filter",
							deparse_expression((Node *) make_ands_explicit((List *) linitial(cscan->custom_exprs)),
											   context, true, false), es);
	if (lfourth(cscan->custom_exprs) != NIL)
		ExplainPropertyText("Device Filter",
							deparse_expression((Node *) make_ands_explicit((List *) lfourth(cscan->custom_exprs)),
											   context, true, false), es);
	if (lsecond(cscan->custom_exprs) != NIL)
		ExplainPropertyText("Filter",
							deparse_expression((Node *) make_ands_explicit((List *) lsecond(cscan->custom_exprs)),
											   context, true, false), es);
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
										 GpuopsRowStoreMemory(&st->inner()->store)) / 1024), es);
	}
	GpuopsNodeExplainInputs(st, es);
}

const CustomExecMethods gpu_mergejoin_exec_methods = {
	GPUMERGEJOIN_NAME,
	GuardedBegin<BeginGpuMergeJoinImpl>,
	GuardedExec<GpuopsExecScan<GpuMergeJoinNext>>,
	GuardedEnd<EndGpuMergeJoinImpl>,
	GuardedReScan<ReScanGpuMergeJoinImpl>,
	NULL,						/* MarkPosCustomScan */
	NULL,						/* RestrPosCustomScan */
	NULL,						/* EstimateDSMCustomScan */
	NULL,						/* InitializeDSMCustomScan */
	NULL,						/* ReInitializeDSMCustomScan */
	NULL,						/* InitializeWorkerCustomScan */
	NULL,						/* ShutdownCustomScan */
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
