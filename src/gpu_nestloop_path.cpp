/*
 * gpu_nestloop_path.cpp
 *    GpuNestLoop planning: a CustomPath for inner, left, semi and anti joins
 *    with no usable equality (band joins, inequality joins, any predicate
 *    the device evaluator has), competing on cost with PostgreSQL's nested
 *    loop.
 *
 * Called from set_join_pathlist_hook for each pair of input rels, in both
 * orders.  Joins with a hashable or mergeable equality are left to the
 * hash and merge joins.  Each join clause that compiles (device_expr.h)
 * goes into the device program; clauses that do not are checked by
 * PostgreSQL on the pairs the program passes, and at least one must
 * compile, or every pair would be a candidate.
 */
extern "C" {
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
}

#include "boundary.h"
#include "device.h"
#include "device_expr.h"
#include "gpu_nestloop.h"
#include "guc.h"
#include "join_plan.h"

/*
 * A device program step per pair costs about a thousandth of what
 * PostgreSQL's executor charges per operator (cpu_operator_cost): an H100
 * tests some 10^10 pairs a second where the executor tests 10^7.
 */
#define GPUNL_STEP_COST_RATIO 0.001

static Plan *PlanGpuNestLoopPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
								 List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods gpu_nestloop_path_methods = {
	GPUNESTLOOP_NAME,
	PlanGpuNestLoopPath,
};

/* An equality between the two sides that a hash or merge join can use. */
static bool
IsEquiJoinClause(RestrictInfo *rinfo, RelOptInfo *outerrel, RelOptInfo *innerrel)
{
	if (!OidIsValid(rinfo->hashjoinoperator) && rinfo->mergeopfamilies == NIL)
		return false;
	return (bms_is_subset(rinfo->left_relids, outerrel->relids) &&
			bms_is_subset(rinfo->right_relids, innerrel->relids)) ||
		(bms_is_subset(rinfo->left_relids, innerrel->relids) &&
		 bms_is_subset(rinfo->right_relids, outerrel->relids));
}

static CustomPath *
MakeNestLoopPath(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				 RelOptInfo *innerrel, Path *outer, Path *inner, JoinType jointype,
				 JoinPathExtraData *extra, bool partial)
{
	List	   *clauses = NIL;	/* decide whether a pair matches */
	List	   *filters = NIL;	/* outer joins: applied to the joined rows */
	List	   *device = NIL;	/* clauses the program holds */
	bool		recheck_all = false;
	DeviceExprInputs in;
	GpuopsExprProgram *prog = (GpuopsExprProgram *) palloc(sizeof(GpuopsExprProgram));
	ListCell   *lc;
	CustomPath *cpath;
	QualCost	qual_cost;
	double		orows,
				irows,
				rows,
				pairs,
				mb;

	memset(&in, 0, sizeof(in));
	in.outer_exprs = outer->pathtarget->exprs;
	in.inner_exprs = inner->pathtarget->exprs;
	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo->pseudoconstant)
			return NULL;		/* gating quals: PostgreSQL's plans handle them */
		if (IsEquiJoinClause(rinfo, outerrel, innerrel))
			return NULL;		/* the hash and merge joins' case */
		/* as createplan.c: pushed-down clauses of outer joins filter joined rows */
		if (IS_OUTER_JOIN(jointype) && RINFO_IS_PUSHED_DOWN(rinfo, joinrel->relids))
		{
			filters = lappend(filters, rinfo->clause);
			continue;
		}
		clauses = lappend(clauses, rinfo->clause);
		if (DeviceExprCompile(list_make1(rinfo->clause), &in, prog))
			device = lappend(device, rinfo->clause);
		else
			recheck_all = true;
	}
	if (device == NIL || !DeviceExprCompile(device, &in, prog))
		return NULL;

	/*
	 * Cost: the inner side is read and loaded before the first row; every
	 * outer row is staged; every pair runs the program on the device; each
	 * passing pair pays a tuple and, where clauses stay on the CPU, their
	 * check.
	 */
	orows = Max(outer->rows, 1.0);	/* per process, for a partial path */
	irows = Max(inner->rows, 1.0);
	pairs = orows * irows;
	rows = partial ? clamp_row_est(joinrel->rows / GpuopsParallelDivisor(outer)) : joinrel->rows;
	mb = (orows * in.nouter + irows * in.ninner) * 9.0 / (1024.0 * 1024.0);
	cost_qual_eval(&qual_cost, recheck_all ? list_concat_copy(clauses, filters) : filters, root);

	cpath = GpuopsNewJoinPath(joinrel, outer, inner, partial, &gpu_nestloop_path_methods);
	cpath->path.pathkeys = NIL;
	cpath->path.rows = rows;
	cpath->path.startup_cost = inner->total_cost + gpuops_startup_cost +
		irows * gpuops_tuple_cost;
	cpath->path.total_cost = cpath->path.startup_cost + outer->total_cost +
		orows * gpuops_tuple_cost + mb * gpuops_transfer_cost +
		pairs * prog->nsteps * cpu_operator_cost * GPUNL_STEP_COST_RATIO +
		rows * (cpu_tuple_cost + qual_cost.per_tuple) + qual_cost.startup;
	if (partial)
	{
		cpath->path.startup_cost += gpuops_parallel_startup_cost;
		cpath->path.total_cost += gpuops_parallel_startup_cost;
	}
	cpath->custom_private =
		list_make3(list_make4(list_make2_int((int) jointype, (int) recheck_all),
							  GpuopsIntList(in.outer_cols, in.nouter),
							  GpuopsIntList(in.inner_cols, in.ninner),
							  in.param_slots),
				   DeviceExprProgramToList(prog),
				   list_make4(clauses, filters, in.params, device));
	return cpath;
}

void
GpuNestLoopAddPaths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	Path	   *outer = outerrel->cheapest_total_path;
	Path	   *inner = innerrel->cheapest_total_path;
	CustomPath *cpath;

	if (!gpuops_enable_nestloop || !GpuopsPlanningAllowed())
		return;
	/* RIGHT and FULL would need every inner row's match state across outer batches */
	if (jointype != JOIN_INNER && jointype != JOIN_LEFT && jointype != JOIN_SEMI &&
		jointype != JOIN_ANTI)
		return;
	if (outer == NULL || inner == NULL || PATH_REQ_OUTER(outer) || PATH_REQ_OUTER(inner))
		return;
	if (Max(outer->rows, inner->rows) < gpuops_min_rows)
		return;
	cpath = MakeNestLoopPath(root, joinrel, outerrel, innerrel, outer, inner, jointype, extra,
							 false);
	if (cpath == NULL)
		return;
	add_path(joinrel, &cpath->path);

	/*
	 * In parallel: each process loads the whole inner side and tests its
	 * share of a partial outer path against it, under Gather.
	 */
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL)
	{
		Path	   *partial = (Path *) linitial(outerrel->partial_pathlist);

		inner = get_cheapest_parallel_safe_total_inner(innerrel->pathlist);
		if (inner == NULL || PATH_REQ_OUTER(partial))
			return;
		cpath = MakeNestLoopPath(root, joinrel, outerrel, innerrel, partial, inner, jointype,
								 extra, true);
		if (cpath != NULL && cpath->path.parallel_safe)
			add_partial_path(joinrel, &cpath->path);
	}
}

static Plan *
PlanGpuNestLoopPathImpl(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = GpuopsNewJoinScan(rel, best_path, tlist, custom_plans,
										  &gpu_nestloop_scan_methods);

	cscan->custom_exprs = (List *) copyObject(lthird(best_path->custom_private));
	cscan->custom_private = list_make2(copyObject(linitial(best_path->custom_private)),
									   copyObject(lsecond(best_path->custom_private)));
	return &cscan->scan.plan;
}

static Plan *
PlanGpuNestLoopPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					List *tlist, List *clauses, List *custom_plans)
{
	return GpuopsGuard("PlanCustomPath", PlanGpuNestLoopPathImpl, root, rel, best_path,
					   tlist, clauses, custom_plans);
}
