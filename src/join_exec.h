/*
 * join_exec.h
 *    Executor helpers every gpuops join shares: building the scan tuple of
 *    a pair from the two row stores, checking a qual on it, and naming the
 *    join type in EXPLAIN.
 */
#ifndef GPUOPS_JOIN_EXEC_H
#define GPUOPS_JOIN_EXEC_H

extern "C" {
#include "postgres.h"

#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "nodes/nodes.h"
}

#include "batch.h"

/*
 * Fills the slot's columns [at, at + store->ncols) with row `row` of the
 * store, or with NULLs when row < 0 (the NULL-extended side of an outer
 * join).
 */
extern void GpuopsJoinFillSide(TupleTableSlot *slot, int at, const GpuopsRowStore *store,
							   int64 row);

/* Does the qual hold on the slot as scan tuple?  No qual: yes. */
extern bool GpuopsJoinHolds(ExprState *qual, ExprContext *econtext, TupleTableSlot *slot);

/* "Inner", "Left", ... for EXPLAIN's Join Type */
extern const char *GpuopsJoinTypeName(JoinType jointype);

#endif
