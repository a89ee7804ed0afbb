/*
 * join_exec.h
 *    What every gpuops join shares in the executor: its node base
 *    (GpuopsJoinNode, over GpuopsNode), building the scan tuple of a pair
 *    from the two row stores, checking a qual on it, walking windows of
 *    pairs, and naming the join type in EXPLAIN.
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
#include "node.h"

/*
 * Fills the slot's columns [at, at + store->ncols) with row `row` of the
 * store, or with NULLs when row < 0 (the NULL-extended side of an outer
 * join).  Only columns marked in needed[] (indexed by scan column) are
 * read: a count(*) above a join reads none, and each inner column read is
 * a random access into the inner store.
 */
extern void GpuopsJoinFillSide(TupleTableSlot *slot, int at, const GpuopsRowStore *store, int64 row,
							   const bool *needed);

/*
 * A window of join pairs with the needed columns of one side gathered into
 * pair order.  Emitting pairs in key order from the stores reads every
 * column of every pair at random (a cache and TLB miss each, on one
 * thread); gathering a window's columns first, on several threads
 * (gpuops_host_gather), leaves emission sequential reads, as GpuSort's
 * reordering does.  Variable-length values are gathered as pointers.
 */
typedef struct GpuopsJoinGathered
{
	const GpuopsRowStore *store;
	int at;			 /* the store's first column in the scan tuple */
	char **values;	 /* per store column: pair-order values, NULL if not needed */
	uint64 capacity; /* pairs the arrays hold */
	uint64 first;	 /* the window's first pair gathered */
	uint64 npairs;	 /* pairs gathered from `first` (0: none) */
	MemoryContext cxt;
} GpuopsJoinGathered;

/*
 * A window's pairs are gathered GPUOPS_JOIN_GATHER_PAIRS (4M) at a time (the
 * arrays' memory stays that small however large the window), and only
 * where at least GPUOPS_JOIN_GATHER_MIN pairs remain: below that the
 * threads cost more than they save, and the fill reads the store.
 */
#define GPUOPS_JOIN_GATHER_MIN 65536
#define GPUOPS_JOIN_GATHER_PAIRS (1 << 22)

/*
 * Gathers the needed columns of rows[first, first + n) (store rows in pair
 * order; n at most GPUOPS_JOIN_GATHER_PAIRS).
 */
extern void GpuopsJoinGather(GpuopsJoinGathered *g, const GpuopsRowStore *store, int at,
							 const uint32 *rows, uint64 first, uint64 n, const bool *needed,
							 MemoryContext cxt);

/*
 * As GpuopsJoinFillSide for pair `pair` of the window, whose store row is
 * `row` (for its NULL bits): from the gathered columns when the pair was
 * gathered, else from the store.
 */
extern void GpuopsJoinFillGathered(TupleTableSlot *slot, const GpuopsJoinGathered *g, uint64 pair,
								   int64 row, const bool *needed);

/*
 * The scan tuple's columns that the node's target list, quals or custom
 * expressions read (INDEX_VAR references); the others are left NULL.
 */
extern bool *GpuopsJoinNeededColumns(CustomScanState *node);

/* Does the qual hold on the slot as scan tuple?  No qual: yes. */
extern bool GpuopsJoinHolds(ExprState *qual, ExprContext *econtext, TupleTableSlot *slot);

/*
 * What every join node's state starts with (its base: GpuHashJoinState,
 * GpuMergeJoinState and GpuNestLoopState derive from it): the node base
 * (node.h) with two inputs, the outer child and the inner one; the scan
 * columns a joined row fills; the clauses PostgreSQL evaluates on the scan
 * tuple (custom_exprs' first two lists); and an equi-join's device pair
 * filter (join_filter.h).  The scan tuple is the outer child's columns,
 * then the inner child's.
 */
struct GpuopsJoinNode : GpuopsNode
{
	int outer_ncols;				 /* where the inner columns start in the scan tuple */
	bool *needed;					 /* scan columns a joined row must fill */
	ExprState *join_qual;			 /* the join clauses */
	ExprState *filter_qual;			 /* outer joins: the filters on the joined row */
	struct GpuopsJoinFilter *filter; /* clauses tested on the device per pair, or NULL */

	/* the outer and the inner child: the base's inputs 0 and 1 */
	GpuopsNodeInput *outer() { return &input[0]; }
	GpuopsNodeInput *inner() { return &input[1]; }
};

/*
 * BeginCustomScan of a join: both children (GpuopsNodeBegin), the needed
 * columns, both quals and, from filter_plan (NIL: none), the device pair
 * filter, whose Params are custom_exprs' third list; the GPU's prewarm is
 * begun when `prewarm` (a node that decides later does so itself).
 */
extern void GpuopsJoinNodeBegin(GpuopsJoinNode *n, EState *estate, int eflags, bool prewarm,
								List *filter_plan);

/* EndCustomScan of a join, after the node's own: the pair filter, then GpuopsNodeEnd. */
extern void GpuopsJoinNodeEnd(GpuopsJoinNode *n);

/*
 * ReScanCustomScan's prologue for a join: the node's changed Params passed
 * to both children, and the pair filter begun again with new ones.
 */
extern void GpuopsJoinNodeRescan(GpuopsJoinNode *n);

/* "Inner", "Left", ... for EXPLAIN's Join Type */
extern const char *GpuopsJoinTypeName(JoinType jointype);

/*
 * The next pair of probe row p in a join's windows of pairs (st->pairs,
 * st->cursor: pairs come grouped by probe row, in probe-row order), asking
 * NextWindow for the next window when this one runs out: the pair's index
 * in its window in *pair, its build-side entry in *build.  False when p
 * has no more pairs.  GpuHashJoin, GpuMergeJoin and GpuNestLoop read their
 * pairs through it and map *build to their own rows.
 */
template <typename State, void (*NextWindow)(State *)>
static inline bool
GpuopsNextPairOf(State *st, uint32 p, uint64 *pair, uint32 *build)
{
	for (;;)
	{
		if (st->cursor < st->pairs.npairs)
		{
			if (st->pairs.probe_rows[st->cursor] != p)
				return false;
			*pair = st->cursor;
			*build = st->pairs.build_rows[st->cursor++];
			return true;
		}
		if (!st->pairs.more)
			return false;
		NextWindow(st);
	}
}

#endif
