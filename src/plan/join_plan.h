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

#include "gpuops_device.h"
#include "plan_fields.h"

/*
 * An equi-join key in the plan: its columns (indexes into the outer and
 * inner children's outputs) and their types; for GpuHashJoin also each
 * side's hash function (0: the keys go to the device as integer values)
 * and the operator's input collation.
 */
typedef struct GpuopsJoinKeyPlan
{
	int outer_col;
	int inner_col;
	Oid outer_type;
	Oid inner_type;
	Oid outer_hash;
	Oid inner_hash;
	Oid collation;
} GpuopsJoinKeyPlan;

/*
 * The plan data (custom_private) of an equi-join, GpuHashJoin or
 * GpuMergeJoin.
 */
typedef struct GpuopsEquiJoinPlan
{
	JoinType jointype;
	int nkeys;
	GpuopsJoinKeyPlan keys[GPUOPS_MAX_JOIN_KEYS];
	List *filter;	/* the pair filter's plan storage (join_filter.h) */
	int count_cols; /* a counting GpuMergeJoin's count(*) columns, else 0 */
} GpuopsEquiJoinPlan;

/* Its fields, in their order in custom_private (both directions). */
extern void GpuopsEquiJoinPlanFields(PlanFields &f, GpuopsEquiJoinPlan *plan, const char *node);

/* An equi-join plan read from custom_private, in palloc'd memory. */
extern GpuopsEquiJoinPlan *GpuopsReadEquiJoinPlan(List *custom_private, const char *node);

/* As costsize.c's get_parallel_divisor: the leader helps less with more workers. */
extern double GpuopsParallelDivisor(Path *path);

/*
 * Whether a path's rows will be read from heap pages directly
 * (heap_source.cpp): a plain sequential scan of a table, without quals.
 */
extern bool GpuopsDirectReadable(Path *path);

/*
 * What reading `rows` rows of `path` from heap pages saves against its
 * cost, 0 when it is not read so: each row skips the scan's per-tuple
 * charge (cpu_tuple_cost, in the path's cost) beyond one operator, since
 * no tuple passes through the executor, plus `per_row` the caller's node
 * saves on top.
 */
extern Cost GpuopsDirectReadSaving(Path *path, double rows, Cost per_row);

/* An integer list of v[0..n) (plan storage). */
extern List *GpuopsIntList(const int *v, int n);

/* Position of expr among exprs (a path target's, say), or -1. */
extern int GpuopsFindColumn(List *exprs, Node *expr);

/*
 * node with each Var turned into an OUTER_VAR reference to its column in
 * child_exprs (every Var must be one), for the executor to evaluate
 * against the child's row: a computed value PostgreSQL must check.
 */
extern Node *GpuopsOuterVarRefs(Node *node, List *child_exprs);

/*
 * A join's CustomPath over outer and inner with the fields every gpuops
 * join sets alike: its target, parallel safety and workers (partial: outer
 * is a partial path), the children, projection support and methods.  The
 * caller sets rows, costs, path keys and custom_private.
 */
extern CustomPath *GpuopsNewJoinPath(RelOptInfo *joinrel, Path *outer, Path *inner, bool partial,
									 const CustomPathMethods *methods);

/*
 * A join's CustomScan: its scan tuple the outer child's columns then the
 * inner child's (custom_scan_tlist), the node's target list, no plan qual
 * (the node evaluates its clauses itself), the children and methods.  The
 * caller sets custom_exprs and custom_private.
 */
extern CustomScan *GpuopsNewJoinScan(RelOptInfo *rel, CustomPath *best_path, List *tlist,
									 List *custom_plans, const CustomScanMethods *methods);

/*
 * The CustomScan of an equi-join path (GpuHashJoin, GpuMergeJoin), whose
 * paths' custom_private both lay out alike (GPUOPS_EQUIJOIN_PATH_FIELDS):
 * the plan data (GpuopsEquiJoinPlanFields' list), the join clauses, the
 * other quals, and the pair filter's parameters and device form.  The plan
 * data become custom_private; the expressions go in custom_exprs (clauses,
 * quals, parameters, device form), where setrefs points their Vars at the
 * scan tuple and the node evaluates them itself, so EXPLAIN shows them
 * with table names.
 */
#define GPUOPS_EQUIJOIN_PATH_FIELDS 4
extern CustomScan *GpuopsNewEquiJoinScan(RelOptInfo *rel, CustomPath *best_path, List *tlist,
										 List *custom_plans, const CustomScanMethods *methods);

/*
 * The last step of a join's CustomScan, once its target list, qual,
 * custom_scan_tlist and custom_exprs are set: from PostgreSQL 16 on, a Var
 * above an outer join carries the join in its varnullingrels, and setrefs
 * matches the node's expressions against custom_scan_tlist with equal
 * nullingrels; the scan tuple's columns (the children's outputs) then take
 * the nullingrels the join's output has for them (the path's target: the
 * target list is often set only later, by a projection above), and
 * custom_exprs (the join clauses, evaluated below the nulling) the scan
 * tuple's.  The executor
 * never reads nullingrels.  Does nothing before 16.
 */
extern void GpuopsMatchScanNullingRels(CustomScan *cscan, CustomPath *best_path);

#endif
