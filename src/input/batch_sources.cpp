/*
 * batch_sources.cpp
 *    A node's batches from its child plan through the executor (batch.h);
 *    heap_source.cpp reads a plain sequential scan's heap pages directly
 *    instead, and chooses between the two (GpuopsChildPlanSource).
 */
extern "C" {
#include "postgres.h"

#include "executor/executor.h"
}

#include "batch.h"

/* The child-plan source. */
typedef struct ChildPlanSource
{
	GpuopsBatchSource base;
	PlanState *child;
	bool done;
} ChildPlanSource;

static bool
ChildPlanFill(GpuopsBatchSource *src, GpuopsRowStore *store, GpuopsBatch *batch)
{
	ChildPlanSource *cps = (ChildPlanSource *) src;

	while (!cps->done && batch->nrows < GPUOPS_BATCH_ROWS)
	{
		TupleTableSlot *slot = ExecProcNode(cps->child);

		if (TupIsNull(slot))
		{
			cps->done = true;
			break;
		}
		if (src->cut != NULL && src->cut->active)
		{
			bool isnull;
			Datum d = slot_getattr(slot, src->cut->col + 1, &isnull);

			if (GpuopsRowCutDrops(src->cut, d, isnull))
				continue;
		}
		GpuopsBatchAppendSlot(store, batch, slot);
	}
	return !cps->done;
}

static void
ChildPlanRescan(GpuopsBatchSource *src)
{
	ChildPlanSource *cps = (ChildPlanSource *) src;

	cps->done = false;
	if (cps->child->chgParam == NULL)
		ExecReScan(cps->child);
	/* else ExecProcNode rescans it, with the new parameter values */
}

GpuopsBatchSource *
GpuopsExecSource(PlanState *child)
{
	ChildPlanSource *cps = (ChildPlanSource *) palloc0(sizeof(ChildPlanSource));

	cps->base.fill = ChildPlanFill;
	cps->base.rescan = ChildPlanRescan;
	cps->child = child;
	return &cps->base;
}
