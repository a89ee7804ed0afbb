/*
 * heap_source.cpp
 *    A batch source that reads a plain sequential scan's heap pages itself.
 *
 * Why: a gpuops operator reads its input one batch at a time, and through
 * the executor each row costs a Seq Scan step (a buffer pin and unpin per
 * tuple, a slot, a projection) before it is copied into the batch's
 * columns.  Where the child is a Seq Scan of a heap table with no quals
 * whose target list is plain columns, this source walks the scan's pages
 * instead, in the scan's own order (parallel block allocation, or the
 * synchronized start block), and copies the needed attributes of each
 * visible tuple straight into the batch.
 *
 * What stays PostgreSQL's: the scan descriptor (created as SeqNext would,
 * or by the parallel scan's DSM callbacks), the page's preparation by
 * heapgetpage's rules (heap_pages.h: pruning, the visibility of every
 * tuple under the scan's snapshot, serializable checks), the old-snapshot
 * test, rescans (ExecReScan of the child), and
 * the end of the scan (ExecEndNode).  The child's EXPLAIN ANALYZE row count
 * and the table's tuples-read statistic are kept too.
 *
 * Not read directly (the rows come through ExecProcNode as before): scans
 * without page-at-a-time mode (non-MVCC snapshots), EvalPlanQual rechecks,
 * other table access methods, and scans with quals or computed columns.
 */
extern "C" {
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "pg_compat.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
}

#include "batch.h"
#include "guc.h"
#include "heap_pages.h"

typedef struct HeapSource
{
	GpuopsBatchSource base;
	SeqScanState *scan;
	GpuopsBatchSource *exec; /* when the scan cannot be read directly */
	int ncols;
	AttrNumber *attnums; /* per output column, its attribute number */
	Datum *values;
	bool *isnull;
	bool checked; /* the scan descriptor was looked at */
	bool direct;  /* pages are read here */
	HeapPageWalk walk;
	bool done;
	int lineindex; /* the next visible tuple of the page in hand */
} HeapSource;

/* The attribute number of each target list entry, or false if one is not a plain column. */
static bool
PlainColumns(SeqScanState *node, AttrNumber *attnums)
{
	Scan *plan = (Scan *) node->ss.ps.plan;
	TupleDesc desc = RelationGetDescr(node->ss.ss_currentRelation);
	int c = 0;
	ListCell *lc;

	foreach (lc, plan->plan.targetlist)
	{
		TargetEntry *te = (TargetEntry *) lfirst(lc);
		Var *var = (Var *) te->expr;

		if (!IsA(var, Var) || (Index) var->varno != plan->scanrelid || var->varlevelsup != 0 ||
			var->varattno <= 0 || var->varattno > desc->natts ||
			TupleDescAttr(desc, var->varattno - 1)->attisdropped ||
			TupleDescAttr(desc, var->varattno - 1)->atttypid != var->vartype)
			return false;
		attnums[c++] = var->varattno;
	}
	return true;
}

/*
 * First fill: the scan descriptor (created here for a serial scan, exactly
 * as SeqNext creates it), and whether its pages can be read here.
 */
static void
CheckScan(HeapSource *hs)
{
	SeqScanState *node = hs->scan;
	EState *estate = node->ss.ps.state;
	TableScanDesc sd;

	hs->checked = true;
	if (estate->es_epq_active != NULL || !ScanDirectionIsForward(estate->es_direction))
		return;
	sd = node->ss.ss_currentScanDesc;
	if (sd == NULL)
	{
		sd = table_beginscan(node->ss.ss_currentRelation, estate->es_snapshot, 0, NULL);
		node->ss.ss_currentScanDesc = sd;
	}
	hs->direct = HeapPageWalkUsable(sd);
	if (hs->direct)
		HeapPageWalkInit(&hs->walk, sd);
}

/*
 * Copies the visible tuples of the page in hand into batch, as many as fit,
 * except those the cut drops; returns the tuples read.
 */
static uint32
ReadPage(HeapSource *hs, GpuopsRowStore *store, GpuopsBatch *batch)
{
	HeapScanDesc scan = (HeapScanDesc) hs->scan->ss.ss_currentScanDesc;
	TupleDesc desc = RelationGetDescr(scan->rs_base.rs_rd);
	Page page = BufferGetPage(scan->rs_cbuf);
	GpuopsRowCut *cut = hs->base.cut != NULL && hs->base.cut->active ? hs->base.cut : NULL;
	uint32 n = 0;
	HeapTupleData tuple;

	tuple.t_tableOid = RelationGetRelid(scan->rs_base.rs_rd);
	while (hs->lineindex < GpuopsHeapPageTuples(scan) && batch->nrows < GPUOPS_BATCH_ROWS)
	{
		OffsetNumber off = scan->rs_vistuples[hs->lineindex++];
		ItemId lp = PageGetItemId(page, off);

		Assert(ItemIdIsNormal(lp));
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
		tuple.t_len = ItemIdGetLength(lp);
		ItemPointerSet(&tuple.t_self, scan->rs_cblock, off);
		n++;
		if (cut != NULL)
		{
			bool isnull;
			Datum d = heap_getattr(&tuple, hs->attnums[cut->col], desc, &isnull);

			/* the only column a dropped row costs */
			if (GpuopsRowCutDrops(cut, d, isnull))
				continue;
		}
		for (int c = 0; c < hs->ncols; c++)
			hs->values[c] = heap_getattr(&tuple, hs->attnums[c], desc, &hs->isnull[c]);
		/* by-reference values point into the pinned page: the batch copies them */
		GpuopsBatchAppendValues(store, batch, hs->values, hs->isnull);
	}
	return n;
}

static bool
HeapFill(GpuopsBatchSource *src, GpuopsRowStore *store, GpuopsBatch *batch)
{
	HeapSource *hs = (HeapSource *) src;
	Instrumentation *instr = hs->scan->ss.ps.instrument;
	Relation rel = hs->scan->ss.ss_currentRelation;
	uint64 n = 0;

	if (hs->done)
		return false;
	if (!hs->checked)
		CheckScan(hs);
	if (!hs->direct)
	{
		hs->exec->cut = hs->base.cut;
		return hs->exec->fill(hs->exec, store, batch);
	}
	if (instr)
		InstrStartNode(instr);
	while (batch->nrows < GPUOPS_BATCH_ROWS)
	{
		if (!hs->walk.on_page || hs->lineindex >= GpuopsHeapPageTuples(hs->walk.scan))
		{
			if (!HeapPageWalkNext(&hs->walk))
			{
				hs->done = true;
				break;
			}
			hs->lineindex = 0;
			continue;
		}
		n += ReadPage(hs, store, batch);
	}
	hs->base.direct_rows += n;
	if (pgstat_should_count_relation(rel))
		GpuopsPgstatTuplesReturned(rel) += n;
	if (instr)
		InstrStopNode(instr, (double) n);
	return !hs->done;
}

static void
HeapRescan(GpuopsBatchSource *src)
{
	HeapSource *hs = (HeapSource *) src;

	hs->exec->rescan(hs->exec);
	if (!hs->direct)
		return;
	/* the child's rescan restarted its scan descriptor (a page in hand included) */
	if (hs->scan->ss.ps.chgParam != NULL)
		ExecReScan(&hs->scan->ss.ps);
	HeapPageWalkInit(&hs->walk, hs->scan->ss.ss_currentScanDesc);
	hs->done = false;
}

GpuopsBatchSource *
GpuopsHeapScanSource(PlanState *child)
{
	SeqScanState *node = (SeqScanState *) child;
	HeapSource *hs;
	int ncols;

	if (!gpuops_enable_direct_scan || !IsA(child, SeqScanState) || child->qual != NULL ||
		node->ss.ss_currentRelation == NULL ||
		node->ss.ss_currentRelation->rd_tableam != GetHeapamTableAmRoutine())
		return NULL;
	ncols = list_length(child->plan->targetlist);
	hs = (HeapSource *) palloc0(sizeof(HeapSource));
	hs->attnums = (AttrNumber *) palloc0(sizeof(AttrNumber) * Max(ncols, 1));
	if (!PlainColumns(node, hs->attnums))
	{
		pfree(hs->attnums);
		pfree(hs);
		return NULL;
	}
	hs->base.fill = HeapFill;
	hs->base.rescan = HeapRescan;
	hs->scan = node;
	hs->exec = GpuopsExecSource(child);
	hs->ncols = ncols;
	hs->values = (Datum *) palloc0(sizeof(Datum) * Max(ncols, 1));
	hs->isnull = (bool *) palloc0(sizeof(bool) * Max(ncols, 1));
	return &hs->base;
}

void
GpuopsExplainDirectRows(ExplainState *es, const GpuopsBatchSource *a, const GpuopsBatchSource *b)
{
	uint64 n = (a ? a->direct_rows : 0) + (b ? b->direct_rows : 0);

	if (es->analyze && es->verbose && n > 0)
		ExplainPropertyInteger("Heap Rows Read Directly", NULL, (int64) n, es);
}

/* The heap pages when the child is a plain sequential scan, else the executor. */
GpuopsBatchSource *
GpuopsChildPlanSource(PlanState *child)
{
	GpuopsBatchSource *heap = GpuopsHeapScanSource(child);

	if (heap != NULL)
		return heap;
	return GpuopsExecSource(child);
}
