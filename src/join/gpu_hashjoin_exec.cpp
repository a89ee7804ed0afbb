/*
 * gpu_hashjoin_exec.cpp
 *    GpuHashJoin execution.
 *
 * The inner child's rows are pulled into a row store (they stay on the
 * host) and their key columns, widened to 64-bit words, are handed to the
 * device, which builds a directory of key hashes.  Then the outer child is
 * read one 64K-row batch at a time: its keys are probed and the device
 * returns candidate (outer row, inner row) pairs, exactly as many as match
 * (counted, then written, in windows that fit the device budget).  Each
 * pair becomes a scan tuple (the outer columns, then the inner ones) that
 * ExecScan filters with every join clause and projects.  An inner side
 * larger than one build may hold is joined partition by partition
 * (gpu_hashjoin_grace.cpp), and a worker of a parallel plan may probe
 * through the leader's build (gpu_hashjoin_shared.cpp):
 * gpu_hashjoin_state.h describes the modes.  This file is the node: its
 * build decision, the walk over pairs that makes rows, and the executor's
 * callbacks; gpu_hashjoin_device.cpp talks to the backend.
 *
 * Device failures: with gpuops.cpu_fallback the current build is redone
 * from the stored inner rows by the CPU backend and the batch probed again,
 * skipping the pairs already walked.  Device memory is released by a
 * memory-context callback on the query context, also on error and cancel.
 */
extern "C" {
#include "postgres.h"

#include "access/parallel.h"
#include "catalog/pg_type_d.h"
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
#include "guarded_scan.h"
#include "device.h"
#include "device_session.h"
#include "gpu_hashjoin.h"
#include "gpu_hashjoin_state.h"
#include "guc.h"
#include "join_exec.h"
#include "join_plan.h"
#include "join_filter.h"

extern const CustomExecMethods gpu_hashjoin_exec_methods;

static void FinishBuild(GpuHashJoinState *st, instr_time t0);

/*
 * Reads the inner side and builds its directory, or, when its rows exceed
 * what one build holds under the device budget, partitions it; a worker of
 * a shared build instead probes through the leader (gpu_hashjoin_shared.cpp).
 */
static void
Build(GpuHashJoinState *st)
{
	GpuopsStatus rc;
	uint64 capacity;
	uint64 rows;
	instr_time t0;

	INSTR_TIME_SET_CURRENT(t0);
	if (INSTR_TIME_IS_ZERO(st->started))
		st->started = t0;
	GpuHashJoinClaimBuild(st); /* leader: workers may wait for this build */
	if (GpuHashJoinJoinSharedCounts(st))
	{
		/* a worker that needs only the leader's match counts: no inner rows */
		st->mode = &gpu_hashjoin_shared_mode;
		st->builds++;
		FinishBuild(st, t0);
		return;
	}
	GpuHashJoinReadInner(st);
	if (GpuHashJoinJoinShared(st))
	{
		/* a worker probing through the leader's directory */
		st->mode = &gpu_hashjoin_shared_mode;
		st->builds++;
		FinishBuild(st, t0);
		return;
	}
	GpuHashJoinBeginPrimary(st);
	capacity = st->dev->backend->join_capacity(st->dev->handle);
	st->probe_limit = st->dev->backend->join_probe_rows(st->dev->handle);
	rows = capacity > 0 ? GpuHashJoinBuildableRows(st) : 0;
	if (capacity > 0 && rows > capacity)
	{
		/* partitioned: pairs are numbered per partition; PostgreSQL checks them */
		GpuopsJoinFilterEnd(st->filter);
		st->filter = NULL;
		GpuHashJoinGraceStart(st, rows); /* the mode becomes partitioned */
	}
	else
	{
		st->mode = &gpu_hashjoin_stream_mode;
		GpuopsJoinFilterLoad(st->filter, 1, &st->inner()->store, false, 0, 0);
		rc = GpuHashJoinBuildAll(st);
		if (rc != GPUOPS_OK)
			GpuHashJoinFallBack(st, rc);
		st->builds++;
	}
	GpuHashJoinShareBuild(st);
	FinishBuild(st, t0);
}

static void
FinishBuild(GpuHashJoinState *st, instr_time t0)
{
	instr_time t1;

	st->built = true;
	if (st->fill_inner)
		st->inner_matched = (bool *) MemoryContextAllocHuge(st->inner()->store.cxt,
															Max(st->inner()->store.nrows, 1));
	GpuHashJoinResetInnerMatches(st);
	st->host_memory = GpuopsRowStoreMemory(&st->inner()->store);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	st->build_ms += INSTR_TIME_GET_MILLISEC(t1);
}

/*
 * The next candidate pair of probe row p, its inner row in *brow and the
 * device filter's verdict on it; false when p has no more.  Crosses into
 * the next window when p's pairs span two.
 */
static bool
NextPairOf(GpuHashJoinState *st, uint32 p, uint64 *brow, GpuopsExprResult *verdict)
{
	uint64 pair;
	uint32 b;

	if (!GpuopsNextPairOf<GpuHashJoinState, GpuHashJoinNextWindow>(st, p, &pair, &b))
		return false;
	*verdict = GpuopsJoinFilterVerdict(st->filter, pair);
	*brow = st->build_map ? st->build_map[b] : b;
	return true;
}

/* The scan tuple for probe row prow and inner row brow (-1: NULLs). */
static TupleTableSlot *
JoinedRow(GpuHashJoinState *st, TupleTableSlot *slot, int64 prow, int64 brow)
{
	int64 orow = prow < 0 ? -1
		: st->probe_map
		? (int64) st->probe_map[prow]
		: (int64) st->probe_base + prow; /* streaming: the batch is the store's first */

	ExecClearTuple(slot);
	GpuopsJoinFillSide(slot, 0, &st->outer()->store, orow, st->needed);
	GpuopsJoinFillSide(slot, st->outer_ncols, &st->inner()->store, brow, st->needed);
	return ExecStoreVirtualTuple(slot);
}

/*
 * RIGHT and FULL joins, once the outer side is done: the inner rows no pair
 * matched, with NULLs for the outer columns; NULL slot when none is left.
 */
static TupleTableSlot *
UnmatchedInner(GpuHashJoinState *st, TupleTableSlot *slot, ExprContext *econtext)
{
	while (st->inner_pos < st->inner()->store.nrows)
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
	return NULL;
}

/*
 * Walks the batch's probe rows in order, each with its candidate pairs (the
 * pairs come grouped by probe row): a pair matches when the join clauses
 * hold.  INNER and LEFT return every match; SEMI returns a probe row on its
 * first match; LEFT, FULL and ANTI return a probe row that had none with
 * NULLs for the inner columns; RIGHT and FULL return, at the end, the inner
 * rows no pair matched with NULLs for the outer columns.  Outer joins then
 * apply their filters.  In partitioned mode a probe row may meet several
 * chunks of its partition: outer_flags says whether an earlier one matched
 * it, and only the last chunk's batch decides that it matched none.
 */
static TupleTableSlot *
GpuHashJoinNext(ScanState *ss)
{
	GpuHashJoinState *st = (GpuHashJoinState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	ExprContext *econtext = ss->ps.ps_ExprContext;
	bool decides_once = st->jointype == JOIN_SEMI || st->jointype == JOIN_ANTI;

	if (!st->built)
		Build(st);
	for (;;)
	{
		uint32 p;
		GpuopsExprResult v;
		uint64 b;
		bool before;
		bool first;
		bool unmatched;

		while (st->probe_pos >= st->probe_rows)
		{
			if (!st->mode->next_batch(st))
			{
				GpuHashJoinReportShared(st);
				if (st->fill_inner && UnmatchedInner(st, slot, econtext))
					return slot;
				return ExecClearTuple(slot);
			}
			CHECK_FOR_INTERRUPTS();
		}
		p = st->probe_pos;
		before = st->outer_flags ? st->outer_flags[p] : false;
		while (NextPairOf(st, p, &b, &v))
		{
			if (before && decides_once)
				continue; /* an earlier chunk decided this row */
			if (v != GPUOPS_EXPR_FALSE)
				JoinedRow(st, slot, p, (int64) b);
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
			if (decides_once)
			{
				/* one match decides: pass over the row's other candidates */
				while (NextPairOf(st, p, &b, &v))
					;
				break;
			}
			if (GpuopsJoinHolds(st->filter_qual, econtext, slot))
				return slot;
		}
		/* every candidate of p has been seen */
		first = st->matched && !before;
		unmatched = !st->matched && !before;
		if (st->outer_flags && st->matched)
			st->outer_flags[p] = true;
		st->probe_pos++;
		st->matched = false;
		if (st->jointype == JOIN_SEMI && first)
		{
			JoinedRow(st, slot, p, -1);
			if (GpuopsJoinHolds(st->filter_qual, econtext, slot))
				return slot;
		}
		else if (st->fill_outer && st->emit_unmatched && unmatched)
		{
			JoinedRow(st, slot, p, -1);
			if (GpuopsJoinHolds(st->filter_qual, econtext, slot))
				return slot;
		}
	}
}

static Node *
CreateGpuHashJoinStateImpl(CustomScan *cscan)
{
	GpuHashJoinState *st = NewCustomScanState<GpuHashJoinState>(cscan, &gpu_hashjoin_exec_methods);
	GpuopsEquiJoinPlan *plan = GpuopsReadEquiJoinPlan(cscan->custom_private, GPUHASHJOIN_NAME);

	st->mode = &gpu_hashjoin_stream_mode;
	st->jointype = plan->jointype;
	st->fill_outer = st->jointype == JOIN_LEFT || st->jointype == JOIN_FULL ||
		st->jointype == JOIN_ANTI;
	st->fill_inner = st->jointype == JOIN_RIGHT || st->jointype == JOIN_FULL;
	st->nkeys = plan->nkeys;
	for (int k = 0; k < st->nkeys; k++)
	{
		const GpuopsJoinKeyPlan *key = &plan->keys[k];

		st->outer_col[k] = key->outer_col;
		st->inner_col[k] = key->inner_col;
		st->outer_type[k] = key->outer_type;
		st->inner_type[k] = key->inner_type;
		st->collation[k] = key->collation;
		st->hashed[k] = OidIsValid(key->outer_hash);
		if (st->hashed[k])
		{
			fmgr_info(key->outer_hash, &st->outer_hash[k]);
			fmgr_info(key->inner_hash, &st->inner_hash[k]);
		}
	}
	st->filter_plan = plan->filter;
	pfree(plan);
	return (Node *) st;
}

static void
BeginGpuHashJoinImpl(CustomScanState *node, EState *estate, int eflags)
{
	GpuHashJoinState *st = (GpuHashJoinState *) node;

	/* a worker of a shared build probes through the leader: no CUDA of its own */
	bool prewarm = !(IsParallelWorker() && node->ss.ps.plan->parallel_aware &&
					 gpuops_enable_shared_build);

	GpuopsJoinNodeBegin(st, estate, eflags, prewarm, st->filter_plan);
	st->key_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuHashJoin keys",
										ALLOCSET_DEFAULT_SIZES);
	st->probe_key_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuHashJoin probe keys",
											  ALLOCSET_DEFAULT_SIZES);
	st->dev = GpuopsNodeDevice<GpuHashJoinDevice, GpuHashJoinRelease>(st, estate);
}

static void
EndGpuHashJoinImpl(CustomScanState *node)
{
	GpuHashJoinState *st = (GpuHashJoinState *) node;
	GpuopsJoinStats t;

	GpuHashJoinTotalStats(st, &t);
	GpuopsNodeStatDevice(st, t.build_rows + t.probe_rows, t.copy_ms, t.kernel_ms,
						 t.bytes_from_device);
	GpuopsJoinNodeEnd(st);
}

static void
ReScanGpuHashJoinImpl(CustomScanState *node)
{
	GpuHashJoinState *st = (GpuHashJoinState *) node;

	GpuopsJoinNodeRescan(st);
	GpuopsNodeRestartInput(st, 0);
	st->outer_done = false;
	st->mine.reported = 0; /* accounts add up over rescans */
	st->cursor = 0;
	st->pairs_before = 0;
	memset(&st->pairs, 0, sizeof(st->pairs));
	st->probe_pos = st->probe_rows = 0;
	st->probe_base = st->batch_rows = 0;
	st->probe_map = st->build_map = NULL;
	st->outer_flags = NULL;
	st->matched = false;
	GpuHashJoinResetInnerMatches(st);
	if (st->built && GpuopsNodeInputChanged(st, 1))
	{
		/* the inner side changes with the parameters: build again */
		GpuHashJoinBegin(st, NULL);
		st->mode->end(st);
		st->mode = &gpu_hashjoin_stream_mode;
		GpuopsNodeRestartInput(st, 1);
		st->inner_read = false;
		st->inner_matched = NULL; /* it was in the store's context */
		st->built = false;
	}
	else
		st->mode->rescan(st); /* partitioned: chunks are built again as they come */
}

static Size
EstimateDSMGpuHashJoinImpl(CustomScanState *node, ParallelContext *pcxt)
{
	return GpuHashJoinEstimateDSM((GpuHashJoinState *) node, pcxt);
}

static void
InitializeDSMGpuHashJoinImpl(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuHashJoinInitializeDSM((GpuHashJoinState *) node, pcxt, coordinate);
}

static void
ReInitializeDSMGpuHashJoinImpl(CustomScanState *node, ParallelContext *, void *coordinate)
{
	GpuHashJoinReInitializeDSM((GpuHashJoinState *) node, coordinate);
}

static void
InitializeWorkerGpuHashJoinImpl(CustomScanState *node, shm_toc *, void *coordinate)
{
	GpuHashJoinInitializeWorker((GpuHashJoinState *) node, coordinate);
}

static void
ExplainGpuHashJoinImpl(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuHashJoinState *st = (GpuHashJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List *context;
	List *conds = NIL;
	int inner_base = list_length(((Plan *) linitial(cscan->custom_plans))->targetlist);

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	for (int k = 0; k < st->nkeys; k++)
	{
		TargetEntry *o = (TargetEntry *) list_nth(cscan->custom_scan_tlist, st->outer_col[k]);
		TargetEntry *i = (TargetEntry *) list_nth(cscan->custom_scan_tlist,
												  inner_base + st->inner_col[k]);
		bool prefix = GpuopsExplainUsePrefix(es);

		conds = lappend(conds,
						psprintf("(%s = %s)",
								 deparse_expression((Node *) o->expr, context, prefix, false),
								 deparse_expression((Node *) i->expr, context, prefix, false)));
	}
	ExplainPropertyText("Join Type", GpuopsJoinTypeName(st->jointype), es);
	ExplainPropertyList("Hash Keys", conds, es);
	if (linitial(cscan->custom_exprs) != NIL)
		ExplainPropertyText(
			"Join Filter",
			deparse_expression((Node *) make_ands_explicit((List *) linitial(cscan->custom_exprs)),
							   context, true, false),
			es);
	if (lfourth(cscan->custom_exprs) != NIL && st->filter != NULL)
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
	ExplainPropertyText("Build Side", "inner", es);
	GpuHashJoinExplainShared(st, es);
	if (es->analyze)
		ExplainPropertyInteger("Rows Removed by Join Filter", NULL, (int64) st->filtered, es);
	if (es->analyze && st->built)
	{
		GpuopsJoinStats t;

		GpuHashJoinTotalStats(st, &t);
		GpuopsNodeExplainBackend(st, es);
		if (st->grace)
			ExplainPropertyInteger("Partitions", NULL, st->partitions, es);
		ExplainPropertyInteger("Builds", NULL, st->builds, es);
		ExplainPropertyInteger("Build Rows", NULL, (int64) t.build_rows, es);
		ExplainPropertyInteger("Distinct Hashes", NULL, (int64) t.directory, es);
		ExplainPropertyInteger("Probe Rows", NULL, (int64) t.probe_rows, es);
		ExplainPropertyInteger("Probe Batches", NULL, t.probe_batches, es);
		ExplainPropertyInteger("Candidate Pairs", NULL, (int64) t.pairs, es);
		if (t.windows > 0)
			ExplainPropertyInteger("Extra Pair Windows", NULL, t.windows, es);
		if (es->timing)
		{
			ExplainPropertyFloat("Build Time", "ms", st->build_ms, 3, es);
			ExplainPropertyFloat("Copy Time", "ms", t.copy_ms, 3, es);
			ExplainPropertyFloat("Kernel Time", "ms", t.kernel_ms, 3, es);
		}
		ExplainPropertyInteger("Device Memory", "kB", (int64) (t.device_bytes / 1024), es);
		ExplainPropertyInteger(
			"Host Memory", "kB",
			(int64) ((st->host_memory + GpuopsRowStoreMemory(&st->outer()->store)) / 1024), es);
	}
	GpuopsNodeExplainInputs(st, es);
}

const CustomExecMethods gpu_hashjoin_exec_methods = {
	GPUHASHJOIN_NAME,
	GuardedBegin<BeginGpuHashJoinImpl>,
	GuardedExec<GpuopsExecScan<GpuHashJoinNext>>,
	GuardedEnd<EndGpuHashJoinImpl>,
	GuardedReScan<ReScanGpuHashJoinImpl>,
	NULL, /* MarkPosCustomScan */
	NULL, /* RestrPosCustomScan */
	GuardedEstimateDSM<EstimateDSMGpuHashJoinImpl>,
	GuardedInitializeDSM<InitializeDSMGpuHashJoinImpl>,
	GuardedInitializeDSM<ReInitializeDSMGpuHashJoinImpl>,
	GuardedInitializeWorker<InitializeWorkerGpuHashJoinImpl>,
	NULL, /* ShutdownCustomScan */
	GuardedExplain<ExplainGpuHashJoinImpl>,
};

const CustomScanMethods gpu_hashjoin_scan_methods = {
	GPUHASHJOIN_NAME,
	GuardedCreateState<CreateGpuHashJoinStateImpl>,
};

void
GpuHashJoinRegister(void)
{
	RegisterCustomScanMethods(&gpu_hashjoin_scan_methods);
}
