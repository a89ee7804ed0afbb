/*
 * gpu_mergejoin_path.cpp
 *    GpuMergeJoin planning: a CustomPath for merge-joinable equi-joins
 *    (inner, left, right, full, semi, anti) whose keys are integers, floats,
 *    bool, date, time or timestamps, competing on cost with PostgreSQL's
 *    merge, hash and nested-loop joins.
 *
 * The keys are the join's merge clauses (PostgreSQL's own list, made where
 * it considers merge joins: enable_mergejoin on, or a full join).  Both
 * sides are sorted on the device by the outer path keys PostgreSQL would
 * pick for a merge join (select_outer_pathkeys_for_merge), so inner, left,
 * semi and anti joins return their rows in that order and the path says
 * so: a sort above it, or a merge join over it, can use the order.  Other
 * join clauses ride along and are checked by PostgreSQL on each pair of
 * equal keys.
 */
extern "C" {
#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_type_d.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
}

#include <math.h>

#include "boundary.h"
#include "device.h"
#include "device_expr.h"
#include "expr_eval.hpp"
#include "gpu_mergejoin.h"
#include "guc.h"
#include "join_filter.h"
#include "join_plan.h"

static Plan *PlanGpuMergeJoinPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
								  List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods gpu_mergejoin_path_methods = {
	GPUMERGEJOIN_NAME,
	PlanGpuMergeJoinPath,
};

/* 1: integers (across widths), 2: floats (across widths), else the type itself; 0: none */
static int
WordDomain(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return 1;
		case FLOAT4OID:
		case FLOAT8OID:
			return 2;
		case BOOLOID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return (int) type;
		default:
			return 0;
	}
}

bool
GpuMergeJoinKeyTypes(Oid outer_type, Oid inner_type)
{
	return WordDomain(outer_type) != 0 && WordDomain(outer_type) == WordDomain(inner_type);
}

uint64
GpuMergeJoinWord(uint64 word, Oid type)
{
	const uint64 sign = UINT64CONST(0x8000000000000000);

	if (type == FLOAT4OID || type == FLOAT8OID)
	{
		double		d = gpuops::expr_as_double(word);

		/* every NaN one value above +Infinity, -0 as 0: float8eq's equality */
		if (isnan(d))
			return ~UINT64CONST(0);
		if (d == 0)
			d = 0;
		word = gpuops::expr_from_double(d);
		return (word & sign) ? ~word : word | sign;
	}
	return word ^ sign;			/* a signed integer's order as unsigned */
}

/*
 * The path joining `outer` and `inner` on the merge clauses (in sort
 * order), or NULL when a key is not a column of these paths.  `partial`:
 * outer is a partial path, and the join runs in each process of a
 * parallel plan, each sorting its share of the outer side and the whole
 * inner side; its output is then in key order per process, which Gather
 * Merge keeps.
 */
static CustomPath *
MakeMergePath(PlannerInfo *root, RelOptInfo *joinrel, Path *outer, Path *inner,
			  JoinType jointype, List *mergeclauses, List *clauses, List *filters,
			  List *pathkeys, bool partial)
{
	List	   *keys = NIL;
	List	   *params = NIL;
	List	   *device = NIL;
	List	   *filter;
	int			nkeys = 0;
	ListCell   *lc;
	CustomPath *cpath;
	QualCost	qual_cost;
	double		orows,
				irows,
				rows,
				mb;

	foreach(lc, mergeclauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		OpExpr	   *op = (OpExpr *) rinfo->clause;
		Expr	   *oexpr = (Expr *) (rinfo->outer_is_left ? linitial(op->args) : lsecond(op->args));
		Expr	   *iexpr = (Expr *) (rinfo->outer_is_left ? lsecond(op->args) : linitial(op->args));
		int			ocol = GpuopsFindColumn(outer->pathtarget->exprs, (Node *) oexpr);
		int			icol = GpuopsFindColumn(inner->pathtarget->exprs, (Node *) iexpr);

		if (ocol < 0 || icol < 0)
			return NULL;
		keys = lappend_int(keys, ocol);
		keys = lappend_int(keys, icol);
		keys = lappend_int(keys, (int) exprType((Node *) oexpr));
		keys = lappend_int(keys, (int) exprType((Node *) iexpr));
		nkeys++;
	}

	/* the clauses the device can test on each pair of equal keys */
	filter = GpuopsJoinFilterPlan(clauses, outer->pathtarget, inner->pathtarget, &params, &device);

	/*
	 * Cost: both sides are read, staged and sorted before the first row;
	 * each joined row pays a tuple and the remaining clauses.
	 */
	orows = Max(outer->rows, 1.0);	/* per process, for a partial path */
	irows = Max(inner->rows, 1.0);
	rows = partial ? clamp_row_est(joinrel->rows / GpuopsParallelDivisor(outer)) : joinrel->rows;
	mb = (orows + irows) * nkeys * sizeof(uint64) / (1024.0 * 1024.0);
	cost_qual_eval(&qual_cost, list_concat_copy(clauses, filters), root);

	cpath = GpuopsNewJoinPath(joinrel, outer, inner, partial, &gpu_mergejoin_path_methods);
	cpath->path.pathkeys = pathkeys;
	cpath->path.rows = rows;
	cpath->path.startup_cost = outer->total_cost + inner->total_cost + gpuops_startup_cost +
		(orows + irows) * gpuops_tuple_cost + mb * gpuops_transfer_cost;
	if (partial)
		cpath->path.startup_cost += gpuops_parallel_startup_cost;
	cpath->path.total_cost = cpath->path.startup_cost +
		rows * (cpu_tuple_cost + qual_cost.per_tuple) + qual_cost.startup;
	cpath->custom_private = list_make5(lcons_int((int) jointype, lcons_int(nkeys, keys)),
									   clauses, filters, filter, list_make2(params, device));
	return cpath;
}

void
GpuMergeJoinAddPaths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					 RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	Path	   *outer = outerrel->cheapest_total_path;
	Path	   *inner = innerrel->cheapest_total_path;
	List	   *mergeclauses = NIL;
	List	   *outerkeys;
	List	   *clauses = NIL;
	List	   *filters = NIL;
	List	   *pathkeys = NIL;
	bool		ordered = true;
	ListCell   *lc;
	CustomPath *cpath;

	if (!gpuops_enable_mergejoin || !GpuopsPlanningAllowed())
		return;
	if (jointype != JOIN_INNER && jointype != JOIN_LEFT && jointype != JOIN_RIGHT &&
		jointype != JOIN_FULL && jointype != JOIN_SEMI && jointype != JOIN_ANTI)
		return;
	if (outer == NULL || inner == NULL || PATH_REQ_OUTER(outer) || PATH_REQ_OUTER(inner))
		return;
	if (Max(outer->rows, inner->rows) < gpuops_min_rows || extra->mergeclause_list == NIL)
		return;

	/* the merge clauses whose two sides are columns of word-mergeable types */
	foreach(lc, extra->mergeclause_list)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		OpExpr	   *op = (OpExpr *) rinfo->clause;
		Expr	   *oexpr,
				   *iexpr;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2 ||
			list_length(mergeclauses) == GPUOPS_MAX_JOIN_KEYS)
			continue;
		oexpr = (Expr *) (rinfo->outer_is_left ? linitial(op->args) : lsecond(op->args));
		iexpr = (Expr *) (rinfo->outer_is_left ? lsecond(op->args) : linitial(op->args));
		if (GpuopsFindColumn(outer->pathtarget->exprs, (Node *) oexpr) < 0 ||
			GpuopsFindColumn(inner->pathtarget->exprs, (Node *) iexpr) < 0 ||
			!GpuMergeJoinKeyTypes(exprType((Node *) oexpr), exprType((Node *) iexpr)))
			continue;
		mergeclauses = lappend(mergeclauses, rinfo);
	}
	if (mergeclauses == NIL)
		return;

	/* the sort order: PostgreSQL's choice of outer path keys for these clauses */
	outerkeys = select_outer_pathkeys_for_merge(root, mergeclauses, joinrel);
	mergeclauses = find_mergeclauses_for_outer_pathkeys(root, outerkeys, mergeclauses);
	if (mergeclauses == NIL)
		return;
	foreach(lc, outerkeys)
	{
		PathKey    *pk = (PathKey *) lfirst(lc);

		/* the device sorts ascending, NULLs last */
		if (pk->pk_strategy != BTLessStrategyNumber || pk->pk_nulls_first)
			ordered = false;
	}

	/* the other clauses: as createplan.c, outer joins' pushed-down ones filter */
	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo->pseudoconstant)
			return;
		if (IS_OUTER_JOIN(jointype) && RINFO_IS_PUSHED_DOWN(rinfo, joinrel->relids))
			filters = lappend(filters, rinfo->clause);
		else if (!list_member_ptr(mergeclauses, rinfo))
			clauses = lappend(clauses, rinfo->clause);
	}

	/*
	 * Output order: the sorted outer side, for joins that return outer rows
	 * in that order; right and full joins add unmatched inner rows at the
	 * end.
	 */
	if (ordered && (jointype == JOIN_INNER || jointype == JOIN_LEFT ||
					jointype == JOIN_SEMI || jointype == JOIN_ANTI))
		pathkeys = build_join_pathkeys(root, joinrel, jointype, outerkeys);

	cpath = MakeMergePath(root, joinrel, outer, inner, jointype, mergeclauses, clauses, filters,
						  pathkeys, false);
	if (cpath != NULL)
		add_path(joinrel, &cpath->path);

	/*
	 * In parallel: each process sorts its share of a partial outer path and
	 * the whole inner side, as PostgreSQL's parallel merge join does.  Not
	 * for right and full joins: every process would return the inner rows
	 * it did not match.
	 */
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL &&
		jointype != JOIN_RIGHT && jointype != JOIN_FULL)
	{
		Path	   *partial = (Path *) linitial(outerrel->partial_pathlist);

		inner = get_cheapest_parallel_safe_total_inner(innerrel->pathlist);
		if (inner == NULL || PATH_REQ_OUTER(partial))
			return;
		cpath = MakeMergePath(root, joinrel, partial, inner, jointype, mergeclauses, clauses,
							  filters, pathkeys, true);
		if (cpath != NULL && cpath->path.parallel_safe)
			add_partial_path(joinrel, &cpath->path);
	}
}

static Plan *
PlanGpuMergeJoinPathImpl(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						 List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = GpuopsNewEquiJoinScan(rel, best_path, tlist, custom_plans,
											  &gpu_mergejoin_scan_methods);

	return &cscan->scan.plan;
}

static Plan *
PlanGpuMergeJoinPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					 List *tlist, List *clauses, List *custom_plans)
{
	return GpuopsGuard("PlanCustomPath", PlanGpuMergeJoinPathImpl, root, rel, best_path,
					   tlist, clauses, custom_plans);
}
