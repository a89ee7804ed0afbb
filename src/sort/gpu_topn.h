/*
 * gpu_topn.h
 *    GpuTopN: ORDER BY ... LIMIT n over one heap table, read from its pages
 *    (doc/operators.md, "Top-N by row position").  What its planner
 *    (gpu_topn_path.cpp) and executor (gpu_topn_exec.cpp) share.
 *
 * Why a node of its own: GpuSort's top-N takes its rows from the executor
 * (a scan under a Gather Merge), so it costs what reading every row
 * through the executor costs, and PostgreSQL's parallel bounded sort is
 * bound by the same reading.  GpuTopN reads only the sort keys and each
 * row's TID from the table's pages, with parallel workers walking them
 * (query_parallel.h, as GpuQuery does), keeps the n first by their keys
 * on the device (gpuops_topn.h), and then fetches just those n rows by
 * TID, in order, under the same snapshot.  No other row is formed.
 *
 * The plan is a CustomScan on the table (scanrelid: PostgreSQL opens and
 * locks it, its scan tuple is the table's row, projected by ExecScan);
 * custom_exprs hold the sort keys' Vars (EXPLAIN), custom_private the
 * GpuTopNPlan (GpuTopNPlanFields).  With nworkers > 0 the node starts its
 * workers itself and the plan asks for parallel mode, as GpuQuery's.
 *
 * Taken: no WHERE clause (a qual on the table keeps PostgreSQL's plan),
 * keys that are columns of integer-like types, float4 or float8, in their
 * default btree order (ASC or DESC, NULLS FIRST or LAST), a constant
 * LIMIT (+ OFFSET) of at most GPUTOPN_MAX_BOUND rows.
 */
#ifndef GPUOPS_GPU_TOPN_H
#define GPUOPS_GPU_TOPN_H

extern "C" {
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
}

#include "gpuops_device.h"
#include "plan_fields.h"

#define GPUTOPN_NAME "GpuTopN"

/* The largest bound: the candidates (4 x bound) must be counted in 32 bits. */
#define GPUTOPN_MAX_BOUND (64 * 1024 * 1024)

typedef struct GpuTopNPlan
{
	int nkeys;
	int attnums[GPUOPS_TOPN_MAX_KEYS]; /* each key's column */
	int forms[GPUOPS_TOPN_MAX_KEYS];   /* and how the reader reads it (QueryColumnForm) */
	int descending[GPUOPS_TOPN_MAX_KEYS];
	int nulls_first[GPUOPS_TOPN_MAX_KEYS];
	int bound;	  /* LIMIT + OFFSET */
	int nworkers; /* parallel workers walking the pages (query_parallel.h), or 0 */
} GpuTopNPlan;

/* The plan's fields, in their order in custom_private (gpu_topn_exec.cpp). */
extern void GpuTopNPlanFields(PlanFields &f, GpuTopNPlan *plan);

/*
 * At UPPERREL_ORDERED: a GpuTopN path for the ordered rel when the block
 * reads one plain heap table without quals and has a constant bound.
 */
extern void GpuTopNAddOrderedPaths(PlannerInfo *root, RelOptInfo *input_rel,
								   RelOptInfo *ordered_rel);

extern const CustomScanMethods gpu_topn_scan_methods;
extern void GpuTopNRegister(void);

#endif /* GPUOPS_GPU_TOPN_H */
