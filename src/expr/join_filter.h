/*
 * join_filter.h
 *    The device pair filter of the hash and merge joins: the join clauses
 *    that compile into a device program (device_expr.h) are tested on each
 *    window of candidate pairs on the device, so PostgreSQL builds and
 *    checks only the pairs that pass (or that the program could not decide).
 *
 * Plan storage (in the join's custom_private): a list of the program's
 * outer columns, inner columns, Param slots and whether every clause
 * compiled, and the program; the Params themselves go in custom_exprs.
 */
#ifndef GPUOPS_JOIN_FILTER_H
#define GPUOPS_JOIN_FILTER_H

extern "C" {
#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
}

#include "batch.h"
#include "gpuops_device.h"

/*
 * Planner: compiles the clauses that have a device form.  Returns the plan
 * storage (NIL when none compiles), appends the Params the program reads
 * to *params, and sets *device_clauses to the clauses it holds (EXPLAIN).
 */
extern List *GpuopsJoinFilterPlan(List *clauses, PathTarget *outer, PathTarget *inner,
								  List **params, List **device_clauses);

typedef struct GpuopsJoinFilter
{
	GpuopsPairFilterSpec spec;
	bool all_compiled; /* a TRUE pair needs no check by PostgreSQL */
	int ocols[GPUOPS_EXPR_MAX_COLS];
	Oid otypes[GPUOPS_EXPR_MAX_COLS];
	int icols[GPUOPS_EXPR_MAX_COLS];
	Oid itypes[GPUOPS_EXPR_MAX_COLS];
	List *param_states;
	List *param_slots;
	List *param_types;
	ExprContext *econtext;
	const GpuopsPairFilterBackend *backend;
	GpuopsPairFilter *pf;
	MemoryContextCallback cb;
	MemoryContext cxt;				/* staged columns */
	const GpuopsRowStore *whole[2]; /* sides loaded whole: reloaded on a new begin */
	uint8 *results;					/* per pair of the current window */
	uint64 capacity;
	bool off; /* after a device failure: PostgreSQL checks every pair */
	uint64 passed;
	uint64 dropped;
} GpuopsJoinFilter;

/* Executor start: the filter, or NULL when the plan has none. */
extern GpuopsJoinFilter *GpuopsJoinFilterBegin(CustomScanState *node, EState *estate, List *storage,
											   List *params, TupleDesc outer, TupleDesc inner);

/*
 * Loads one side's columns: rows [first, first + n) of a store
 * (first_batch_only: a range of the batch the store holds), or every row
 * of the store.
 */
extern void GpuopsJoinFilterLoad(GpuopsJoinFilter *f, int side, const GpuopsRowStore *store,
								 bool first_batch_only, uint32 first, uint32 n);

/* Tests the pairs of a window; then GpuopsJoinFilterVerdict(f, k) for pair k. */
extern void GpuopsJoinFilterApply(GpuopsJoinFilter *f, const GpuopsJoinPairs *pairs);

static inline GpuopsExprResult
GpuopsJoinFilterVerdict(const GpuopsJoinFilter *f, uint64 k)
{
	return (f == NULL || f->off) ? GPUOPS_EXPR_RECHECK : (GpuopsExprResult) f->results[k];
}

/* At a rescan: with new Param values the program is begun again at its next use. */
extern void GpuopsJoinFilterRescan(GpuopsJoinFilter *f, bool new_params);

extern void GpuopsJoinFilterEnd(GpuopsJoinFilter *f);

#endif
