/*
 * guarded_scan.h
 *    The CustomScan callbacks every gpuops node hands PostgreSQL, each
 *    running its node's implementation inside GpuopsGuard (boundary.h), so
 *    that a node's method tables name its *Impl functions and no node
 *    repeats the six wrappers.
 */
#ifndef GPUOPS_GUARDED_SCAN_H
#define GPUOPS_GUARDED_SCAN_H

extern "C" {
#include "postgres.h"

#include "pg_compat.h"
#include "executor/tuptable.h"
#include "nodes/extensible.h"
#include "utils/memutils.h"
}

#include "boundary.h"

/*
 * A node's executor state (State begins with a CustomScanState css):
 * zeroed, tagged, with its methods and the plan's flags.
 */
template <typename State>
static State *
NewCustomScanState(CustomScan *cscan, const CustomExecMethods *methods)
{
	State *st = (State *) palloc0(sizeof(State));

	NodeSetTag(st, T_CustomScanState);
	st->css.methods = methods;
	st->css.flags = cscan->flags;
#if PG_VERSION_NUM >= 160000
	st->css.slotOps = &TTSOpsVirtual; /* PostgreSQL 15 always uses a virtual slot */
#endif
	return st;
}

/* ExecScan's recheck: the nodes emit only rows they made themselves */
static inline bool
GpuopsScanRecheck(ScanState *, TupleTableSlot *)
{
	return true;
}

template <Node *(*Impl)(CustomScan *)>
static Node *
GuardedCreateState(CustomScan *cscan)
{
	return GpuopsGuard("CreateCustomScanState", Impl, cscan);
}

template <void (*Impl)(CustomScanState *, EState *, int)>
static void
GuardedBegin(CustomScanState *node, EState *estate, int eflags)
{
	GpuopsGuard("BeginCustomScan", Impl, node, estate, eflags);
}

template <TupleTableSlot *(*Impl)(CustomScanState *)>
static TupleTableSlot *
GuardedExec(CustomScanState *node)
{
	return GpuopsGuard("ExecCustomScan", Impl, node);
}

template <void (*Impl)(CustomScanState *)>
static void
GuardedEnd(CustomScanState *node)
{
	GpuopsGuard("EndCustomScan", Impl, node);
}

template <void (*Impl)(CustomScanState *)>
static void
GuardedReScan(CustomScanState *node)
{
	GpuopsGuard("ReScanCustomScan", Impl, node);
}

template <void (*Impl)(CustomScanState *)>
static void
GuardedShutdown(CustomScanState *node)
{
	GpuopsGuard("ShutdownCustomScan", Impl, node);
}

template <Size (*Impl)(CustomScanState *, ParallelContext *)>
static Size
GuardedEstimateDSM(CustomScanState *node, ParallelContext *pcxt)
{
	return GpuopsGuard("EstimateDSMCustomScan", Impl, node, pcxt);
}

template <void (*Impl)(CustomScanState *, ParallelContext *, void *)>
static void
GuardedInitializeDSM(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuopsGuard("InitializeDSMCustomScan", Impl, node, pcxt, coordinate);
}

template <void (*Impl)(CustomScanState *, shm_toc *, void *)>
static void
GuardedInitializeWorker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuopsGuard("InitializeWorkerCustomScan", Impl, node, toc, coordinate);
}

template <void (*Impl)(CustomScanState *, List *, ExplainState *)>
static void
GuardedExplain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuopsGuard("ExplainCustomScan", Impl, node, ancestors, es);
}

#endif
