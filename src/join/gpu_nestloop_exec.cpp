/*
 * gpu_nestloop_exec.cpp
 *    GpuNestLoop execution.
 *
 * The inner child's rows are pulled into a row store (they stay on the
 * host) and the columns the device program reads are loaded on the device,
 * in blocks of at most what the budget holds.  The outer child is read one
 * 64K-row batch at a time; each batch (in probes of at most the budget's
 * rows) is tested against each inner block, and the device returns the
 * passing (outer row, inner row) pairs in nested-loop order.  A pair
 * becomes a scan tuple (outer columns, then inner ones); PostgreSQL's own
 * evaluator re-checks it only where the program could not decide it (the
 * RECHECK bit: PostgreSQL then raises its own error, or finds the row's
 * value) or where some clause stayed on the CPU.  LEFT and ANTI joins
 * return an outer row no block matched after its last block, SEMI joins
 * an outer row once, at its first match.
 *
 * Device failures: with gpuops.cpu_fallback the CPU backend loads the
 * current inner block and probes again, skipping the pairs already walked.
 * Device memory is released by a memory-context callback on the query
 * context, also on error and cancel.
 */
extern "C" {
#include "postgres.h"

#include "pg_compat.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
}

#include "batch.h"
#include "boundary.h"
#include "device.h"
#include "device_session.h"
#include "device_expr.h"
#include "gpu_nestloop.h"
#include "guarded_scan.h"
#include "guc.h"
#include "join_exec.h"

extern const CustomExecMethods gpu_nestloop_exec_methods;

typedef DeviceSession<GpuopsNestLoopBackend, GpuopsNestLoop, &GpuopsNestLoopBackend::nl_end>
	GpuNestLoopDevice;

/* GpuopsJoinNodeBegin reads the join clauses and filters from the first two lists */
static_assert(GPUNL_EXPR_CLAUSES == 0 && GPUNL_EXPR_FILTERS == 1, "custom_exprs order");

typedef struct GpuNestLoopState : GpuopsJoinNode
{
	JoinType jointype; /* INNER, LEFT, SEMI or ANTI */
	bool fill_outer;   /* LEFT, ANTI: unmatched outer rows are returned */
	bool decides_once; /* SEMI, ANTI: the first match decides */
	bool recheck_all;  /* some clause is not in the program */
	GpuopsNestLoopSpec spec;
	int ocols[GPUOPS_EXPR_MAX_COLS]; /* program columns: scan columns */
	Oid otypes[GPUOPS_EXPR_MAX_COLS];
	int icols[GPUOPS_EXPR_MAX_COLS];
	Oid itypes[GPUOPS_EXPR_MAX_COLS];
	List *param_states;
	List *param_slots;
	List *param_types;

	GpuNestLoopDevice *dev;
	MemoryContext inner_cxt; /* the loaded block's staged columns */
	MemoryContext probe_cxt; /* the probe's staged columns */
	bool read_inner;
	bool outer_done;
	uint64 block_rows; /* inner rows per block */
	uint32 nblocks;
	uint32 block;  /* the block being probed */
	uint32 loaded; /* the block on the device, or UINT32_MAX */
	uint32 probe_limit;

	/* the probe being walked: outer rows [probe_base, +probe_rows) against one block */
	uint32 batch_rows;
	uint32 probe_base;
	uint32 probe_rows;
	uint32 probe_pos;
	bool *outer_flags; /* per probe row: matched by an earlier block */
	GpuopsJoinPairs pairs;
	uint64 cursor;
	uint64 pairs_before;
	bool matched;
	uint64 filtered;

	/* EXPLAIN ANALYZE */
	GpuopsNestLoopStats stats;		/* the current backend's */
	GpuopsNestLoopStats done_stats; /* a failed backend's, before the fallback */
} GpuNestLoopState;

static void
SaveStats(GpuNestLoopState *st)
{
	if (st->dev->handle)
	{
		st->dev->backend->nl_stats(st->dev->handle, &st->stats);
		st->backend_name = st->dev->backend->name;
	}
}

/*
 * Begins the device work on `backend`, the program's Params bound to
 * their values for this scan (at the first row, not at executor start, so
 * a plain EXPLAIN never runs an initplan).
 */
static GpuopsStatus
BeginOn(GpuNestLoopState *st, const GpuopsNestLoopBackend *backend)
{
	GpuopsSettings settings = GpuopsNodeSettings<&GpuopsDevice::nestloop>(st,
																		  GpuopsCurrentSettings(),
																		  backend);

	st->dev->end();
	DeviceExprBindParams(&st->spec.program, st->param_states, st->param_slots, st->param_types,
						 st->css.ss.ps.ps_ExprContext);
	st->dev->backend = backend;
	st->loaded = UINT32_MAX;
	return backend->nl_begin(&settings, &st->spec, &st->dev->handle);
}

/* Loads inner block b on the device, unless it is there. */
static GpuopsStatus
LoadBlock(GpuNestLoopState *st, uint32 b)
{
	uint64 first = (uint64) b * st->block_rows;
	uint64 n = Min(st->block_rows, st->inner()->store.nrows - first);
	GpuopsExprColumns cols;
	GpuopsStatus rc;

	if (st->loaded == b)
		return GPUOPS_OK;
	MemoryContextReset(st->inner_cxt);
	DeviceExprStageRows(&st->inner()->store, first, n, st->icols, st->itypes, st->spec.inner_ncols,
						st->inner_cxt, &cols);
	rc = st->dev->backend->nl_inner(st->dev->handle, &cols);
	if (rc == GPUOPS_OK)
		st->loaded = b;
	return rc;
}

/* After a device failure: the CPU backend takes over (or the query fails). */
static void
FallBack(GpuNestLoopState *st, GpuopsStatus rc)
{
	GpuopsNodeFallBack<&GpuopsDevice::nestloop>(st, rc, [&](const GpuopsNestLoopBackend *cpu) {
		GpuopsStatus r;

		SaveStats(st);
		st->done_stats = st->stats;
		r = BeginOn(st, cpu);
		if (r == GPUOPS_OK)
			r = LoadBlock(st, st->block);
		return r;
	});
}

/* Reads the inner side, begins the device work and cuts the side into blocks. */
static void
ReadInner(GpuNestLoopState *st)
{
	uint64 capacity;

	GpuopsNodeReadInput(st, 1);
	GpuopsNodeRun<&GpuopsDevice::nestloop>(st, [&](const GpuopsNestLoopBackend *backend) {
		return BeginOn(st, backend);
	});
	capacity = st->dev->backend->nl_capacity(st->dev->handle);
	st->probe_limit = st->dev->backend->nl_probe_rows(st->dev->handle);
	st->block_rows = Max(capacity, 1);
	st->nblocks = (uint32) Max((st->inner()->store.nrows + st->block_rows - 1) / st->block_rows, 1);
	st->outer_flags = (bool *) MemoryContextAlloc(st->inner()->store.cxt, st->probe_limit);
	st->read_inner = true;
}

/* Probes outer rows [probe_base, +probe_rows) against the current block. */
static void
ProbeSkipping(GpuNestLoopState *st, uint64 skip)
{
	GpuopsExprColumns cols;
	GpuopsStatus rc;

	/* the outer batch is the store's first: its rows are the store's */
	MemoryContextReset(st->probe_cxt);
	DeviceExprStageRows(&st->outer()->store, st->probe_base, st->probe_rows, st->ocols, st->otypes,
						st->spec.outer_ncols, st->probe_cxt, &cols);
	rc = LoadBlock(st, st->block);
	if (rc == GPUOPS_OK)
		rc = st->dev->backend->nl_probe(st->dev->handle, &cols, &st->pairs);
	if (rc != GPUOPS_OK)
	{
		FallBack(st, rc);
		rc = st->dev->backend->nl_probe(st->dev->handle, &cols, &st->pairs);
		if (rc != GPUOPS_OK)
			GpuopsDeviceFailed(GPUNESTLOOP_NAME, rc, false);
	}
	st->pairs_before = 0;
	while (skip >= st->pairs.npairs && st->pairs.more && skip > 0)
	{
		skip -= st->pairs.npairs;
		st->pairs_before += st->pairs.npairs;
		rc = st->dev->backend->nl_next_pairs(st->dev->handle, &st->pairs);
		if (rc != GPUOPS_OK)
			GpuopsDeviceFailed(GPUNESTLOOP_NAME, rc, false);
	}
	st->cursor = skip;
	SaveStats(st);
}

static void
NextWindow(GpuNestLoopState *st)
{
	uint64 walked = st->pairs_before + st->pairs.npairs;
	GpuopsStatus rc = st->dev->backend->nl_next_pairs(st->dev->handle, &st->pairs);

	if (rc != GPUOPS_OK)
	{
		FallBack(st, rc);
		ProbeSkipping(st, walked);
		return;
	}
	st->pairs_before = walked;
	st->cursor = 0;
	SaveStats(st);
}

/*
 * The next probe: the next block for the same outer rows, else the next
 * outer rows (reading the next outer batch when this one is done); false
 * when the outer side is done.
 */
static bool
NextProbe(GpuNestLoopState *st)
{
	if (st->probe_rows > 0 && st->block + 1 < st->nblocks)
		st->block++;
	else
	{
		st->block = 0;
		st->probe_base += st->probe_rows;
		if (st->probe_base >= st->batch_rows)
		{
			GpuopsBatch *batch;

			if (st->outer_done)
				return false;
			GpuopsRowStoreReset(&st->outer()->store);
			batch = GpuopsRowStoreOpenBatch(&st->outer()->store);
			st->outer_done = !GpuopsNodeFill(st, 0, batch);
			st->batch_rows = batch->nrows;
			st->probe_base = 0;
		}
		st->probe_rows = Min(st->probe_limit, st->batch_rows - st->probe_base);
		memset(st->outer_flags, 0, st->probe_limit);
	}
	st->cursor = 0;
	st->pairs_before = 0;
	memset(&st->pairs, 0, sizeof(st->pairs));
	st->probe_pos = 0;
	st->matched = false;
	if (st->probe_rows > 0)
		ProbeSkipping(st, 0);
	return true;
}

/* The next pair of probe row p: its inner row and whether to re-check it. */
static bool
NextPairOf(GpuNestLoopState *st, uint32 p, uint64 *irow, bool *recheck)
{
	uint64 pair;
	uint32 b;

	if (!GpuopsNextPairOf<GpuNestLoopState, NextWindow>(st, p, &pair, &b))
		return false;
	*recheck = (b & GPUOPS_NL_RECHECK) != 0;
	*irow = (uint64) st->block * st->block_rows + (b & ~GPUOPS_NL_RECHECK);
	return true;
}

/* The scan tuple of probe row p and inner row irow (-1: NULLs). */
static TupleTableSlot *
JoinedRow(GpuNestLoopState *st, TupleTableSlot *slot, uint32 p, int64 irow)
{
	/* the outer batch is the store's first: its rows are the store's */
	ExecClearTuple(slot);
	GpuopsJoinFillSide(slot, 0, &st->outer()->store, (int64) st->probe_base + p, st->needed);
	GpuopsJoinFillSide(slot, st->outer_ncols, &st->inner()->store, irow, st->needed);
	return ExecStoreVirtualTuple(slot);
}

/*
 * Walks the probe's rows in order, each with its pairs (grouped by outer
 * row; inner rows ascending, or in the index column's order when indexed):
 * the nested loop's own order of outer rows.
 */
static TupleTableSlot *
GpuNestLoopNext(ScanState *ss)
{
	GpuNestLoopState *st = (GpuNestLoopState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	ExprContext *econtext = ss->ps.ps_ExprContext;

	if (!st->read_inner)
		ReadInner(st);
	for (;;)
	{
		uint32 p;
		uint64 b;
		bool recheck;
		bool before;
		bool last_block;

		while (st->probe_pos >= st->probe_rows)
		{
			if (!NextProbe(st))
				return ExecClearTuple(slot);
			CHECK_FOR_INTERRUPTS();
		}
		p = st->probe_pos;
		before = st->outer_flags[p];
		while (NextPairOf(st, p, &b, &recheck))
		{
			if (before && st->decides_once)
				continue; /* an earlier block decided this row */
			JoinedRow(st, slot, p, (int64) b);
			if ((recheck || st->recheck_all) && !GpuopsJoinHolds(st->join_qual, econtext, slot))
			{
				if ((++st->filtered & 1023) == 0)
					CHECK_FOR_INTERRUPTS();
				continue;
			}
			st->matched = true;
			if (st->decides_once)
			{
				while (NextPairOf(st, p, &b, &recheck))
					;
				break;
			}
			if (GpuopsJoinHolds(st->filter_qual, econtext, slot))
				return slot;
		}
		last_block = st->block + 1 == st->nblocks;
		st->probe_pos++;
		if (st->matched)
			st->outer_flags[p] = true;
		if (st->jointype == JOIN_SEMI && st->matched && !before)
		{
			st->matched = false;
			JoinedRow(st, slot, p, -1);
			if (GpuopsJoinHolds(st->filter_qual, econtext, slot))
				return slot;
			continue;
		}
		st->matched = false;
		if (st->fill_outer && last_block && !st->outer_flags[p])
		{
			JoinedRow(st, slot, p, -1);
			if (GpuopsJoinHolds(st->filter_qual, econtext, slot))
				return slot;
		}
	}
}

static Node *
CreateGpuNestLoopStateImpl(CustomScan *cscan)
{
	GpuNestLoopState *st = NewCustomScanState<GpuNestLoopState>(cscan, &gpu_nestloop_exec_methods);
	GpuNestLoopPlan *plan = (GpuNestLoopPlan *) palloc0(sizeof(GpuNestLoopPlan));
	PlanFields fields(cscan->custom_private, GPUNESTLOOP_NAME);

	GpuNestLoopPlanFields(fields, plan);
	st->jointype = plan->jointype;
	st->recheck_all = plan->recheck_all;
	st->fill_outer = st->jointype == JOIN_LEFT || st->jointype == JOIN_ANTI;
	st->decides_once = st->jointype == JOIN_SEMI || st->jointype == JOIN_ANTI;
	st->spec.outer_ncols = plan->nouter;
	st->spec.inner_ncols = plan->ninner;
	memcpy(st->ocols, plan->outer_cols, sizeof(int) * plan->nouter);
	memcpy(st->icols, plan->inner_cols, sizeof(int) * plan->ninner);
	st->param_slots = plan->param_slots;
	/*
	 * SEMI and ANTI joins decide on an outer row's first matching pair, but
	 * only a pair that passed every clause matches: the device may stop an
	 * outer row at its first TRUE pair only when its TRUE is final (every
	 * clause in the program).  With a clause left to PostgreSQL that pair
	 * can still fail, and the pairs after it must be tried.
	 */
	st->spec.first_only = st->decides_once && !st->recheck_all;
	st->spec.program = plan->program;
	st->spec.index = plan->index;
	pfree(plan);
	return (Node *) st;
}

static void
BeginGpuNestLoopImpl(CustomScanState *node, EState *estate, int eflags)
{
	GpuNestLoopState *st = (GpuNestLoopState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	TupleDesc odesc, idesc;
	ListCell *lc;

	GpuopsJoinNodeBegin(st, estate, eflags, true, NIL);
	odesc = ExecGetResultType((PlanState *) linitial(node->custom_ps));
	idesc = ExecGetResultType((PlanState *) lsecond(node->custom_ps));
	foreach (lc, (List *) list_nth(cscan->custom_exprs, GPUNL_EXPR_PARAMS))
	{
		st->param_states = lappend(st->param_states,
								   ExecInitExpr((Expr *) lfirst(lc), &node->ss.ps));
		st->param_types = lappend_oid(st->param_types, exprType((Node *) lfirst(lc)));
	}
	for (int c = 0; c < st->spec.outer_ncols; c++)
		st->otypes[c] = TupleDescAttr(odesc, st->ocols[c])->atttypid;
	for (int c = 0; c < st->spec.inner_ncols; c++)
		st->itypes[c] = TupleDescAttr(idesc, st->icols[c])->atttypid;
	st->inner_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuNestLoop inner columns",
										  ALLOCSET_DEFAULT_SIZES);
	st->probe_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuNestLoop outer columns",
										  ALLOCSET_DEFAULT_SIZES);
	st->dev = GpuopsNodeDevice<GpuNestLoopDevice>(st, estate);
}

static void
EndGpuNestLoopImpl(CustomScanState *node)
{
	GpuNestLoopState *st = (GpuNestLoopState *) node;

	/* a failed backend's time counts too, as in EXPLAIN ANALYZE */
	GpuopsNodeStatDevice(st, st->stats.outer_rows + st->stats.inner_rows,
						 st->stats.copy_ms + st->done_stats.copy_ms,
						 st->stats.kernel_ms + st->done_stats.kernel_ms,
						 st->stats.bytes_from_device + st->done_stats.bytes_from_device);
	GpuopsJoinNodeEnd(st);
}

static void
ReScanGpuNestLoopImpl(CustomScanState *node)
{
	GpuNestLoopState *st = (GpuNestLoopState *) node;

	GpuopsJoinNodeRescan(st);
	GpuopsNodeRestartInput(st, 0);
	st->outer_done = false;
	st->cursor = st->pairs_before = 0;
	memset(&st->pairs, 0, sizeof(st->pairs));
	st->probe_pos = st->probe_rows = st->probe_base = st->batch_rows = 0;
	st->block = 0;
	st->matched = false;
	if (st->read_inner)
	{
		st->dev->end();
		if (GpuopsNodeInputChanged(st, 1))
			GpuopsNodeRestartInput(st, 1);
		else
		{
			/* the stored inner rows stay; the program (its Params) is begun again */
			GpuopsStatus rc = BeginOn(
				st, st->fallback ? gpuops_cpu_device()->nestloop : GpuopsPrimaryDevice()->nestloop);

			if (rc != GPUOPS_OK)
				FallBack(st, rc);
			return;
		}
		st->read_inner = false;
	}
}

static void
ExplainGpuNestLoopImpl(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuNestLoopState *st = (GpuNestLoopState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	List *clauses = (List *) list_nth(cscan->custom_exprs, GPUNL_EXPR_CLAUSES);
	List *filters = (List *) list_nth(cscan->custom_exprs, GPUNL_EXPR_FILTERS);
	List *device = (List *) list_nth(cscan->custom_exprs, GPUNL_EXPR_DEVICE);
	List *ranges = (List *) list_nth(cscan->custom_exprs, GPUNL_EXPR_RANGE);

	ExplainPropertyText("Join Type", GpuopsJoinTypeName(st->jointype), es);
	if (ranges != NIL)
		ExplainPropertyText(
			"Index Cond",
			deparse_expression((Node *) make_ands_explicit(ranges), context, true, false), es);
	ExplainPropertyText(
		"Join Filter",
		deparse_expression((Node *) make_ands_explicit(clauses), context, true, false), es);
	ExplainPropertyText(
		"Device Filter",
		deparse_expression((Node *) make_ands_explicit(device), context, true, false), es);
	if (filters != NIL)
		ExplainPropertyText(
			"Filter",
			deparse_expression((Node *) make_ands_explicit(filters), context, true, false), es);
	if (es->analyze)
		ExplainPropertyInteger("Rows Removed by Join Filter", NULL, (int64) st->filtered, es);
	if (es->analyze && st->read_inner)
	{
		GpuopsNestLoopStats t = st->stats;

		/* a failed backend's work counts too */
		t.pairs_tested += st->done_stats.pairs_tested;
		t.copy_ms += st->done_stats.copy_ms;
		t.kernel_ms += st->done_stats.kernel_ms;
		GpuopsNodeExplainBackend(st, es);
		ExplainPropertyInteger("Inner Blocks", NULL, st->nblocks, es);
		ExplainPropertyInteger("Block Loads", NULL, t.blocks, es);
		ExplainPropertyInteger("Probes", NULL, t.probes, es);
		ExplainPropertyInteger("Pairs Tested", NULL, (int64) t.pairs_tested, es);
		ExplainPropertyInteger("Pairs Passed", NULL, (int64) t.pairs, es);
		ExplainPropertyInteger("Pairs Rechecked", NULL, (int64) t.rechecks, es);
		if (es->timing)
		{
			ExplainPropertyFloat("Copy Time", "ms", t.copy_ms, 3, es);
			ExplainPropertyFloat("Kernel Time", "ms", t.kernel_ms, 3, es);
		}
		ExplainPropertyInteger("Device Memory", "kB", (int64) (t.device_bytes / 1024), es);
		ExplainPropertyInteger("Host Memory", "kB",
							   (int64) ((GpuopsRowStoreMemory(&st->inner()->store) +
										 GpuopsRowStoreMemory(&st->outer()->store)) /
										1024),
							   es);
	}
	GpuopsNodeExplainInputs(st, es);
}

const CustomExecMethods gpu_nestloop_exec_methods = {
	GPUNESTLOOP_NAME,
	GuardedBegin<BeginGpuNestLoopImpl>,
	GuardedExec<GpuopsExecScan<GpuNestLoopNext>>,
	GuardedEnd<EndGpuNestLoopImpl>,
	GuardedReScan<ReScanGpuNestLoopImpl>,
	NULL, /* MarkPosCustomScan */
	NULL, /* RestrPosCustomScan */
	NULL, /* EstimateDSMCustomScan */
	NULL, /* InitializeDSMCustomScan */
	NULL, /* ReInitializeDSMCustomScan */
	NULL, /* InitializeWorkerCustomScan */
	NULL, /* ShutdownCustomScan */
	GuardedExplain<ExplainGpuNestLoopImpl>,
};

const CustomScanMethods gpu_nestloop_scan_methods = {
	GPUNESTLOOP_NAME,
	GuardedCreateState<CreateGpuNestLoopStateImpl>,
};

void
GpuNestLoopRegister(void)
{
	RegisterCustomScanMethods(&gpu_nestloop_scan_methods);
}
