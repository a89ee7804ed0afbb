/*
 * gpu_stage_path.cpp
 *    GpuStage planning (gpu_stage.h): the Gather over a GpuStage that an
 *    operator above collects, its cost, and its plan.  Split from
 *    gpu_stage.cpp, which runs it: planning and execution share only the
 *    CustomScan (gpu_stage_scan_methods).
 */
extern "C" {
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/tlist.h"
}

#include "boundary.h"
#include "gpu_stage.h"
#include "guc.h"

/* a worker's cost of staging a row, as a share of gpuops.tuple_cost */
static const double GPUSTAGE_TUPLE_SHARE = 0.25;

List *
GpuopsExprTlist(List *exprs)
{
	List *tlist = NIL;
	ListCell *lc;

	foreach (lc, exprs)
		tlist = lappend(tlist,
						makeTargetEntry((Expr *) copyObject(lfirst(lc)), list_length(tlist) + 1,
										NULL, false));
	return tlist;
}

static Plan *
PlanGpuStagePathImpl(PlannerInfo *, RelOptInfo *, CustomPath *best_path, List *tlist, List *,
					 List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List *exprs = (List *) linitial(best_path->custom_private);

	/* the child's scan applies rel's restrictions (clauses) itself */
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = list_make1(
		change_plan_targetlist((Plan *) linitial(custom_plans), GpuopsExprTlist(exprs), true));
	cscan->custom_exprs = NIL;
	cscan->custom_private = NIL;
	cscan->custom_scan_tlist = GpuopsExprTlist(exprs);
	cscan->methods = &gpu_stage_scan_methods;
	return &cscan->scan.plan;
}

static Plan *
PlanGpuStagePath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
				 List *clauses, List *custom_plans)
{
	return GpuopsGuard("PlanCustomPath", PlanGpuStagePathImpl, root, rel, best_path, tlist, clauses,
					   custom_plans);
}

static const CustomPathMethods gpu_stage_path_methods = {
	GPUSTAGE_NAME, PlanGpuStagePath, NULL, /* ReparameterizeCustomPathByChild: not partitionwise */
};

Path *
GpuStageGatherPath(PlannerInfo *root, RelOptInfo *input_rel, Path *input, List *exprs)
{
	PathTarget *target = create_empty_pathtarget();
	Path *proj;
	CustomPath *cpath;
	ListCell *lc;
	double one = 1.0;

	if (input == NULL || !input->parallel_safe || input->parallel_workers <= 0 ||
		PATH_REQ_OUTER(input) || exprs == NIL || !is_parallel_safe(root, (Node *) exprs))
		return NULL;
	foreach (lc, exprs)
		add_column_to_pathtarget(target, (Expr *) lfirst(lc), 0);
	set_pathtarget_cost_width(root, target);
	proj = (Path *) create_projection_path(root, input_rel, input, target);

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = input_rel;
	cpath->path.pathtarget = target;
	cpath->path.param_info = NULL;
	/* parallel-aware: its shared state is set up with the parallel query's */
	cpath->path.parallel_aware = true;
	cpath->path.parallel_safe = true;
	cpath->path.parallel_workers = input->parallel_workers;
	cpath->path.pathkeys = NIL;
	cpath->path.rows = proj->rows;
	/*
	 * Each process copies its share of the rows into batches, then into
	 * chunks of shared memory it faults in.  Measured at 50M rows in 9
	 * processes, staging one int4 column cost more than PostgreSQL's partial
	 * aggregation of count, sum and avg (3 transition calls, charged 3
	 * cpu_operator_cost a row) on top of the same scan (1045 ms against
	 * 751 ms): most of it is per row, not per column.  A quarter of
	 * gpuops.tuple_cost (a serial operator's staging of a row) a row, and
	 * half a cpu_operator_cost a column, so that a staged plan loses where
	 * a parallel partial aggregation is cheaper.
	 */
	cpath->path.startup_cost = proj->total_cost +
		proj->rows *
			(GPUSTAGE_TUPLE_SHARE * gpuops_tuple_cost +
			 list_length(exprs) * cpu_operator_cost * 0.5);
	cpath->path.total_cost = cpath->path.startup_cost;
	cpath->flags = 0;
	cpath->custom_paths = list_make1(proj);
	cpath->custom_private = list_make1(exprs);
	cpath->methods = &gpu_stage_path_methods;
	/* Gather carries no tuple */
	return (Path *) create_gather_path(root, input_rel, &cpath->path, target, NULL, &one);
}
