/*
 * node.cpp
 *    The common part of every gpuops executor node (node.h): its inputs'
 *    begin, end, rescan and reading, and its fallback to the CPU backend.
 */
extern "C" {
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "pg_compat.h"
#include "executor/executor.h"
#include "miscadmin.h"
}

#include "batch.h"
#include "device.h"
#include "gpu_stage.h"
#include "node.h"

void
GpuopsNodeBegin(GpuopsNode *n, EState *estate, int eflags, int ninputs, TupleDesc store_desc)
{
	CustomScan *cscan = (CustomScan *) n->css.ss.ps.plan;
	/* the node reads each child once, forward: no rewind, backward or mark */
	int child_flags = eflags & ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	bool all_staged = true;
	bool staged_shared = false;

	Assert(ninputs >= 1 && ninputs <= GPUOPS_NODE_MAX_INPUTS);
	n->ninputs = ninputs;
	n->css.custom_ps = NIL;
	for (int i = 0; i < ninputs; i++)
	{
		GpuopsNodeInput *in = &n->input[i];

		in->ps = ExecInitNode((Plan *) list_nth(cscan->custom_plans, i), estate, child_flags);
		n->css.custom_ps = lappend(n->css.custom_ps, in->ps);
	}
	for (int i = 0; i < ninputs; i++)
	{
		GpuopsNodeInput *in = &n->input[i];

		TupleDesc desc = i == 0 && store_desc ? store_desc : ExecGetResultType(in->ps);

		GpuopsRowStoreInit(&in->store, desc, estate->es_query_cxt);
		in->source = GpuopsChildPlanSource(in->ps);
		in->stage = GpuStageBelow(in->ps);
		if (in->stage == NULL)
			all_staged = false;
		else
		{
			GpuStageSetGather(in->stage, castNode(GatherState, in->ps));
			staged_shared |= GpuStageDeviceShared(in->stage);
		}
	}
	/*
	 * Over GpuStages alone, whose workers only read rows, the device is this
	 * process's; otherwise workers elsewhere in a parallel query may use it.
	 */
	n->device_shared = all_staged ? staged_shared : IsInParallelMode();
}

void
GpuopsNodePrewarm(GpuopsNode *n, int eflags)
{
	GpuopsPrewarmDeviceFor(eflags, n->device_shared);
}

/*
 * gpuops.stat's bytes_to_device: the bytes input i's row store holds (the
 * column batches the device backend is handed), before it is emptied.  A
 * proxy: the backends count the bytes they copy back (bytes_from_device,
 * gpuops_device.h), not yet those they copy to the device.
 */
static void
StatStoreBytes(GpuopsNode *n, int i)
{
	if (n->input[i].store.cxt != NULL)
		n->stat.bytes_to_device += MemoryContextMemAllocated(n->input[i].store.cxt, true);
}

void
GpuopsNodeEnd(GpuopsNode *n)
{
	/*
	 * gpuops.stat: the instance's figures, once (not for EXPLAIN without
	 * ANALYZE, which runs nothing)
	 */
	if (!(n->css.ss.ps.state->es_top_eflags & EXEC_FLAG_EXPLAIN_ONLY))
	{
		for (int i = 0; i < n->ninputs; i++)
			StatStoreBytes(n, i);
		GpuopsOpStatsFlush(GpuopsOpKindOf(GpuopsNodeName(n)), &n->stat, n->fallback);
	}
	if (n->dev != NULL)
		n->dev_release(n->dev);
	for (int i = 0; i < n->ninputs; i++)
		ExecEndNode(n->input[i].ps);
	for (int i = 0; i < n->ninputs; i++)
		GpuopsRowStoreFree(&n->input[i].store);
}

void
GpuopsNodeRescanParams(GpuopsNode *n)
{
	n->stat.running = false; /* gpuops.stat: the next row asked for starts a run */
	if (n->css.ss.ps.chgParam == NULL)
		return;
	for (int i = 0; i < n->ninputs; i++)
		UpdateChangedParamSet(n->input[i].ps, n->css.ss.ps.chgParam);
}

void
GpuopsNodeRestartInput(GpuopsNode *n, int i)
{
	StatStoreBytes(n, i);
	GpuopsRowStoreReset(&n->input[i].store);
	n->input[i].source->rescan(n->input[i].source);
}

void
GpuopsNodeCollectStaged(GpuopsNode *n, int i)
{
	GpuopsNodeInput *in = &n->input[i];

	Assert(in->stage != NULL);
	if (!TupIsNull(ExecProcNode(in->ps)))
		elog(ERROR, "%s: a row came through the Gather of GpuStage", GpuopsNodeName(n));
	GpuStageCollect(in->stage, &in->store);
}

void
GpuopsNodeReadInput(GpuopsNode *n, int i)
{
	GpuopsNodeInput *in = &n->input[i];
	bool more = true;

	if (in->stage != NULL)
	{
		GpuopsNodeCollectStaged(n, i);
		return;
	}
	while (more)
	{
		GpuopsBatch *batch = GpuopsRowStoreOpenBatch(&in->store);

		/* fill returns with the batch full, or at the end of the input */
		more = GpuopsNodeFill(n, i, batch);
		CHECK_FOR_INTERRUPTS();
	}
}

void
GpuopsNodeFailed(GpuopsNode *n, GpuopsStatus rc)
{
	/* counted now: the error raised next (without cpu_fallback) skips the node's end */
	if (rc == GPUOPS_ERR_OUT_OF_MEMORY)
		GpuopsOpStatsCountOom(GpuopsOpKindOf(GpuopsNodeName(n)));
	GpuopsDeviceFailed(GpuopsNodeName(n), rc, true); /* raises unless falling back */
	if (n->fallback == NULL)
		n->fallback = MemoryContextStrdup(n->css.ss.ps.state->es_query_cxt, gpuops_last_error());
}

void
GpuopsNodeExplainBackend(GpuopsNode *n, ExplainState *es)
{
	ExplainPropertyText("Backend", n->backend_name ? n->backend_name : "none", es);
	if (n->fallback)
		ExplainPropertyText("Fallback", n->fallback, es);
}

void
GpuopsNodeExplainInputs(GpuopsNode *n, ExplainState *es)
{
	GpuopsExplainDirectRows(es, n->input[0].source, n->ninputs > 1 ? n->input[1].source : NULL);
}
