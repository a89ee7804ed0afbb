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

#include "commands/explain.h"
#include "nodes/extensible.h"
}

#include "boundary.h"

template <Node *(*Impl) (CustomScan *)>
static Node *
GuardedCreateState(CustomScan *cscan)
{
	return GpuopsGuard("CreateCustomScanState", Impl, cscan);
}

template <void (*Impl) (CustomScanState *, EState *, int)>
static void
GuardedBegin(CustomScanState *node, EState *estate, int eflags)
{
	GpuopsGuard("BeginCustomScan", Impl, node, estate, eflags);
}

template <TupleTableSlot *(*Impl) (CustomScanState *)>
static TupleTableSlot *
GuardedExec(CustomScanState *node)
{
	return GpuopsGuard("ExecCustomScan", Impl, node);
}

template <void (*Impl) (CustomScanState *)>
static void
GuardedEnd(CustomScanState *node)
{
	GpuopsGuard("EndCustomScan", Impl, node);
}

template <void (*Impl) (CustomScanState *)>
static void
GuardedReScan(CustomScanState *node)
{
	GpuopsGuard("ReScanCustomScan", Impl, node);
}

template <void (*Impl) (CustomScanState *, List *, ExplainState *)>
static void
GuardedExplain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuopsGuard("ExplainCustomScan", Impl, node, ancestors, es);
}

#endif
