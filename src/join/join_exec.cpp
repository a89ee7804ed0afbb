/*
 * join_exec.cpp
 *    Executor helpers every gpuops join shares, and their node base
 *    (join_exec.h).
 */
extern "C" {
#include "postgres.h"

#include "executor/executor.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
}

#include "device.h"
#include "join_exec.h"
#include "join_filter.h"

void
GpuopsJoinFillSide(TupleTableSlot *slot, int at, const GpuopsRowStore *store, int64 row,
				   const bool *needed)
{
	for (int c = 0; c < store->ncols; c++)
	{
		if (row < 0 || !needed[at + c])
		{
			slot->tts_values[at + c] = (Datum) 0;
			slot->tts_isnull[at + c] = true;
		}
		else
			slot->tts_values[at + c] = GpuopsRowStoreDatum(store, (uint64) row, c,
														   &slot->tts_isnull[at + c]);
	}
}

void
GpuopsJoinGather(GpuopsJoinGathered *g, const GpuopsRowStore *store, int at, const uint32 *rows,
				 uint64 first, uint64 n, const bool *needed, MemoryContext cxt)
{
	GpuopsGatherColumn *gc;
	int ngc = 0;
	GpuopsStatus rc;

	Assert(n <= GPUOPS_JOIN_GATHER_PAIRS);
	g->store = store;
	g->at = at;
	g->first = first;
	g->npairs = 0;
	if (n == 0 || store->nrows == 0)
		return;
	if (g->values == NULL || g->cxt != cxt)
	{
		g->cxt = cxt;
		g->values = (char **) MemoryContextAllocZero(cxt, sizeof(char *) * Max(store->ncols, 1));
		g->capacity = 0;
	}
	if (n > g->capacity)
	{
		/* later windows are as large or smaller: allocate once */
		for (int c = 0; c < store->ncols; c++)
		{
			if (g->values[c])
				pfree(g->values[c]);
			g->values[c] = NULL;
			if (needed[at + c])
				g->values[c] = (char *) MemoryContextAllocHuge(cxt, n * store->cols[c].width);
		}
		g->capacity = n;
	}
	gc = (GpuopsGatherColumn *) palloc(sizeof(GpuopsGatherColumn) * Max(store->ncols, 1));
	for (int c = 0; c < store->ncols; c++)
	{
		if (!needed[at + c])
			continue;
		gc[ngc].batch_values = GpuopsRowStoreColumnBatches(store, c);
		gc[ngc].width = store->cols[c].width;
		gc[ngc].out = g->values[c];
		ngc++;
	}
	rc = ngc > 0 ? gpuops_host_gather(gc, ngc, rows + first, n, GPUOPS_BATCH_SHIFT) : GPUOPS_OK;
	for (int i = 0; i < ngc; i++)
		pfree((void *) gc[i].batch_values);
	pfree(gc);
	if (rc != GPUOPS_OK)
		GpuopsRaiseStatus("gathering joined columns", rc);
	g->npairs = n;
}

void
GpuopsJoinFillGathered(TupleTableSlot *slot, const GpuopsJoinGathered *g, uint64 pair, int64 row,
					   const bool *needed)
{
	const GpuopsRowStore *store = g->store;

	if (pair < g->first || pair >= g->first + g->npairs || row < 0)
	{
		GpuopsJoinFillSide(slot, g->at, store, row, needed);
		return;
	}
	pair -= g->first;
	for (int c = 0; c < store->ncols; c++)
	{
		int a = g->at + c;

		if (!needed[a] ||
			GpuopsBatchIsNull(store->batches[row >> GPUOPS_BATCH_SHIFT], c,
							  (uint32) (row & (GPUOPS_BATCH_ROWS - 1))))
		{
			slot->tts_values[a] = (Datum) 0;
			slot->tts_isnull[a] = true;
			continue;
		}
		slot->tts_values[a] = GpuopsColumnDatum(&store->cols[c],
												g->values[c] + pair * store->cols[c].width);
		slot->tts_isnull[a] = false;
	}
}

typedef struct NeededContext
{
	bool *needed;
	int natts;
} NeededContext;

static bool
MarkNeeded(Node *node, NeededContext *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) && ((Var *) node)->varno == INDEX_VAR)
	{
		AttrNumber att = ((Var *) node)->varattno;

		if (att > 0 && att <= cxt->natts)
			cxt->needed[att - 1] = true;
		else
			memset(cxt->needed, true, cxt->natts); /* a whole-row reference */
		return false;
	}
	return expression_tree_walker(node, (bool (*)())(void (*)(void)) MarkNeeded, cxt);
}

bool *
GpuopsJoinNeededColumns(CustomScanState *node)
{
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	NeededContext cxt;

	cxt.natts = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor->natts;
	cxt.needed = (bool *) palloc0(Max(cxt.natts, 1) * sizeof(bool));
	(void) MarkNeeded((Node *) cscan->scan.plan.targetlist, &cxt);
	(void) MarkNeeded((Node *) cscan->scan.plan.qual, &cxt);
	(void) MarkNeeded((Node *) cscan->custom_exprs, &cxt);
	return cxt.needed;
}

bool
GpuopsJoinHolds(ExprState *qual, ExprContext *econtext, TupleTableSlot *slot)
{
	if (qual == NULL)
		return true; /* nothing to check: the common equi-join */
	econtext->ecxt_scantuple = slot;
	ResetExprContext(econtext);
	return ExecQual(qual, econtext);
}

const char *
GpuopsJoinTypeName(JoinType jointype)
{
	switch (jointype)
	{
		case JOIN_LEFT:
			return "Left";
		case JOIN_RIGHT:
			return "Right";
		case JOIN_FULL:
			return "Full";
		case JOIN_SEMI:
			return "Semi";
		case JOIN_ANTI:
			return "Anti";
		default:
			return "Inner";
	}
}

void
GpuopsJoinNodeBegin(GpuopsJoinNode *n, EState *estate, int eflags, bool prewarm, List *filter_plan)
{
	CustomScanState *node = &n->css;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	GpuopsNodeBegin(n, estate, eflags, 2, NULL);
	if (prewarm)
		GpuopsNodePrewarm(n, eflags);
	n->outer_ncols = ExecGetResultType(n->outer()->ps)->natts;
	n->needed = GpuopsJoinNeededColumns(node);
	n->join_qual = ExecInitQual((List *) linitial(cscan->custom_exprs), &node->ss.ps);
	n->filter_qual = ExecInitQual((List *) lsecond(cscan->custom_exprs), &node->ss.ps);
	if (filter_plan != NIL)
		n->filter = GpuopsJoinFilterBegin(node, estate, filter_plan,
										  (List *) lthird(cscan->custom_exprs),
										  ExecGetResultType(n->outer()->ps),
										  ExecGetResultType(n->inner()->ps));
}

void
GpuopsJoinNodeEnd(GpuopsJoinNode *n)
{
	GpuopsJoinFilterEnd(n->filter);
	GpuopsNodeEnd(n);
}

void
GpuopsJoinNodeRescan(GpuopsJoinNode *n)
{
	GpuopsNodeRescanParams(n);
	GpuopsJoinFilterRescan(n->filter, n->css.ss.ps.chgParam != NULL);
}
