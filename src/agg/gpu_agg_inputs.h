/*
 * gpu_agg_inputs.h
 *    What GpuAgg's planner gathers about a grouping before it costs a path:
 *    shared by gpu_agg_inputs.cpp, which decides what the device can take
 *    and how the child feeds it, and gpu_agg_path.cpp, which makes the
 *    paths.
 */
#ifndef GPUOPS_GPU_AGG_INPUTS_H
#define GPUOPS_GPU_AGG_INPUTS_H

extern "C" {
#include "postgres.h"

#include "nodes/pathnodes.h"
}

#include "device_expr.h"
#include "gpu_agg.h"

/* What a GpuAgg path reads and computes, gathered aggregate by aggregate. */
typedef struct GpuAggBuild
{
	GpuAggPlan *plan;	  /* keys and aggregates so far */
	List *child_exprs;	  /* the child's output (gpu_agg.h) */
	bool partial;		  /* partial states, per parallel worker */
	bool have_percentile; /* text inputs of ordered aggregates come as ranks */
	int order_arg_col;	  /* the ordered aggregates' shared input */
	int order_filter_col;
	int order_desc;			  /* their direction, once a percentile sets it */
	bool hashable;			  /* every aggregate's state suits the hash strategy */
	DeviceExprInputs prog_in; /* computed inputs: their columns */
	List *programs;			  /* per aggregate its program (a list), or NIL */
	List *prog_exprs;		  /* and its argument, or NULL */
} GpuAggBuild;

/*
 * Fills b (zeroed by the caller) for an aggregation producing `target`
 * (and `having`) over the query's GROUP BY: its group keys, the other
 * columns taken from a group's first row, its aggregates and their inputs
 * as child columns or device programs; the scan tuple's expressions (keys,
 * other columns, aggregates) in *scan_exprs.  False when the device cannot
 * run it.  partial: partial states, per parallel worker.
 */
extern bool GpuAggCollectInputs(PlannerInfo *root, PathTarget *target, Node *having,
								GroupPathExtraData *extra, bool partial, GpuAggBuild *b,
								List **scan_exprs);

/*
 * Shared with GpuQuery (src/query/), which groups and aggregates the same
 * query blocks without a child:
 *
 * GpuAggCollectAggrefs appends to *aggs each distinct Aggref of node (none
 * nests in another at one query level); returns false (a walker).
 *
 * GpuAggGroupKeyKind: a group key's kind and encoding (and the collation
 * it groups under), or false when the device cannot group it: only under
 * the type's own equality (another opclass may group differently); fixed
 * kinds as values, text and varchar under a deterministic collation as a
 * dictionary, numeric and bpchar (deterministic) as ranks.
 *
 * GpuAggUsesGroupingFunc: GROUPING() at this level, in the target, HAVING,
 * or a subquery's reference to it (a Param the planner computes here):
 * only an Agg node evaluates it (gpu_agg_path.cpp).
 */
extern bool GpuAggCollectAggrefs(Node *node, List **aggs);
extern bool GpuAggGroupKeyKind(SortGroupClause *sgc, Expr *expr, GpuopsKeyKind *kind,
							   GpuAggKeyEncoding *enc, Oid *collation);
extern bool GpuAggUsesGroupingFunc(PlannerInfo *root, GroupPathExtraData *extra);

#endif /* GPUOPS_GPU_AGG_INPUTS_H */
