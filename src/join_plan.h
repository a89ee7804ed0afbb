/*
 * join_plan.h
 *    Planning helpers every gpuops join shares.
 */
#ifndef GPUOPS_JOIN_PLAN_H
#define GPUOPS_JOIN_PLAN_H

extern "C" {
#include "postgres.h"

#include "nodes/pathnodes.h"
#include "nodes/extensible.h"
#include "nodes/plannodes.h"
}

/* As costsize.c's get_parallel_divisor: the leader helps less with more workers. */
extern double GpuopsParallelDivisor(Path *path);

/* An integer list of v[0..n) (plan storage). */
extern List *GpuopsIntList(const int *v, int n);

/* Position of expr among exprs (a path target's, say), or -1. */
extern int	GpuopsFindColumn(List *exprs, Node *expr);

/*
 * A join's CustomPath over outer and inner with the fields every gpuops
 * join sets alike: its target, parallel safety and workers (partial: outer
 * is a partial path), the children, projection support and methods.  The
 * caller sets rows, costs, path keys and custom_private.
 */
extern CustomPath *GpuopsNewJoinPath(RelOptInfo *joinrel, Path *outer, Path *inner,
									 bool partial, const CustomPathMethods *methods);

/*
 * A join's CustomScan: its scan tuple the outer child's columns then the
 * inner child's (custom_scan_tlist), the node's target list, no plan qual
 * (the node evaluates its clauses itself), the children and methods.  The
 * caller sets custom_exprs and custom_private.
 */
extern CustomScan *GpuopsNewJoinScan(RelOptInfo *rel, CustomPath *best_path, List *tlist,
									 List *custom_plans, const CustomScanMethods *methods);

#endif
