/*
 * gpu_agg_path.cpp
 *    GpuAgg planning: a CustomPath for GROUP BY (and aggregates without
 *    GROUP BY) competing on cost with PostgreSQL's hash and sort aggregation,
 *    offered from create_upper_paths_hook at UPPERREL_GROUP_AGG.
 *
 * Taken when every group key is a fixed-width type the device compares
 * exactly (integers, floats, date/time types, bool, uuid, interval) or text
 * under a deterministic collation (byte equality), and every aggregate is
 * one gpu_agg_final.cpp knows, without ORDER BY or DISTINCT inside it
 * (but count(DISTINCT x) and the percentiles, which the device computes
 * from each group's rows in x's order).
 * GROUPING SETS, ROLLUP and CUBE keep PostgreSQL's plans.  The aggregates'
 * arguments and FILTER conditions are expressions the child computes (see
 * gpu_agg.h for the columns).
 *
 * This file costs and makes the paths (serial, parallel with a partial
 * GpuAgg per worker, staged over GpuStage) and the plan; what the device
 * takes, and how the child feeds it, is decided in gpu_agg_inputs.cpp.
 */
extern "C" {
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "utils/selfuncs.h"
}

#include "boundary.h"
#include "device.h"
#include "gpu_agg.h"
#include "gpu_agg_inputs.h"
#include "gpu_stage.h"
#include "guc.h"
#include "plan_why.h"
#include "qual_order.h"
#include "join_plan.h"

static Plan *PlanGpuAggPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
							List *clauses, List *custom_plans);

static const CustomPathMethods gpu_agg_path_methods = {
	GPUAGG_NAME, PlanGpuAggPath, NULL, /* ReparameterizeCustomPathByChild: not partitionwise */
};

/*
 * The path of an aggregation gathered in b: its cost, strategy and plan
 * data.  scan_exprs: the scan tuple's expressions.
 */
static CustomPath *
NewGpuAggPath(PlannerInfo *root, Path *input, RelOptInfo *rel, PathTarget *target, Node *having,
			  GroupPathExtraData *extra, GpuAggBuild *b, List *scan_exprs)
{
	GpuAggPlan *plan = b->plan;
	int nkeys = plan->nkeys;
	PlanFields fields;
	CustomPath *cpath;
	QualCost having_cost;
	double in_rows, groups, mb;

	/*
	 * Cost.  Start-up: the whole input is read and staged (each child column
	 * a copy into a columnar batch, cheaper than one operator call: half of
	 * cpu_operator_cost), copied, grouped on the device.  Then each group is
	 * finalized and emitted.  The device work itself is milliseconds.
	 */
	/* input->rows: per worker for a partial path */
	in_rows = Max(input->rows, 1.0);
	if (nkeys == 0)
		groups = 1;
	else if (!b->partial && rel->pathlist != NIL)
		groups = ((Path *) linitial(rel->pathlist))->rows;
	else
		groups = estimate_num_groups(root, list_copy_head(b->child_exprs, nkeys), in_rows, NULL,
									 NULL);
	mb = in_rows * 8.0 * Max(list_length(b->child_exprs), 1) / (1024.0 * 1024.0);

	/*
	 * Strategy (gpuops_device.h): hash when few groups are expected, with a
	 * table for four times as many (estimates err), which the executor
	 * leaves for the sort if the groups outnumber it.
	 */
	if (nkeys > 0 && b->hashable && groups <= gpuops_agg_hash_max_groups)
		plan->hash_capacity = (int) Max(Min(4.0 * groups, 4.0 * gpuops_agg_hash_max_groups),
										4096.0);
	cost_qual_eval(&having_cost, (List *) having, root);

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = target;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = rel->consider_parallel && input->parallel_safe &&
		extra->target_parallel_safe;
	cpath->path.parallel_workers = b->partial ? input->parallel_workers : 0;
	cpath->path.pathkeys = NIL;
	cpath->path.rows = groups;
	cpath->path.startup_cost = input->total_cost + gpuops_startup_cost +
		in_rows * list_length(b->child_exprs) * cpu_operator_cost * 0.5 + mb * gpuops_transfer_cost;
	/*
	 * Computed inputs: their columns are turned into 64-bit words, a pass
	 * per column in this process (also over rows that workers staged), and
	 * copied as such.  Measured at 16M rows, three columns: the staged plan
	 * that left out this charge took 480 ms where PostgreSQL's parallel
	 * aggregation took 269-309 ms.
	 */
	cpath->path.startup_cost += in_rows * b->prog_in.nouter *
		(cpu_operator_cost * 0.5 + 8.0 * gpuops_transfer_cost / (1024.0 * 1024.0));
	cpath->path.total_cost = cpath->path.startup_cost +
		groups * (cpu_tuple_cost + plan->naggs * cpu_operator_cost + having_cost.per_tuple) +
		having_cost.startup;
	if (b->partial)
	{
		/* each worker starts the GPU (gpuops.parallel_startup_cost) */
		cpath->path.startup_cost += gpuops_parallel_startup_cost;
		cpath->path.total_cost += gpuops_parallel_startup_cost;
	}
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_paths = list_make1(input);
	plan->partial = b->partial;
	plan->prog_ncols = b->prog_in.nouter;
	memcpy(plan->prog_cols, b->prog_in.outer_cols, sizeof(plan->prog_cols));
	memcpy(plan->prog_types, b->prog_in.outer_types, sizeof(plan->prog_types));
	plan->programs = b->programs;
	plan->prog_exprs = b->prog_exprs;
	GpuAggPlanFields(fields, plan);
	cpath->custom_private = list_make4(fields.list(), b->child_exprs, scan_exprs,
									   copyObject(having));
	cpath->methods = &gpu_agg_path_methods;
	return cpath;
}
/*
 * A GpuAgg path over `input` producing `target` in `rel`: the grouped rel
 * (final results, HAVING applied) or, partial, the partially grouped rel
 * (partial states, per parallel worker).  NULL when the device cannot run
 * the aggregation.
 */
static CustomPath *
MakeGpuAggPath(PlannerInfo *root, Path *input, RelOptInfo *rel, PathTarget *target, Node *having,
			   GroupPathExtraData *extra, bool partial)
{
	GpuAggBuild b;
	List *scan_exprs;

	if (input == NULL || PATH_REQ_OUTER(input))
		return NULL;
	memset(&b, 0, sizeof(b));
	if (!GpuAggCollectInputs(root, target, having, extra, partial, &b, &scan_exprs))
		return NULL;
	return NewGpuAggPath(root, input, rel, target, having, extra, &b, scan_exprs);
}

/* PostgreSQL's partially grouped rel for output_rel, when it made one. */
static RelOptInfo *
PartialGroupRel(PlannerInfo *root, RelOptInfo *output_rel)
{
	ListCell *lc;

	foreach (lc, root->upper_rels[UPPERREL_PARTIAL_GROUP_AGG])
	{
		RelOptInfo *rel = (RelOptInfo *) lfirst(lc);

		if (bms_equal(rel->relids, output_rel->relids))
			return rel;
	}
	return NULL;
}

/*
 * Parallel GpuAgg: a partial GpuAgg in each worker over its share of the
 * input, Gather, and PostgreSQL's Finalize Aggregate (hashed, or sorted, or
 * plain without GROUP BY), as PostgreSQL builds its own parallel
 * aggregation.  The hook runs once, at the grouped rel (PostgreSQL 15 has no
 * hook at the partial one), so the whole chain is built here.  Only where
 * PostgreSQL itself could aggregate in parallel: it made the partially
 * grouped rel, with the partial target and the final costs.
 */
static void
AddParallelGpuAggPath(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
					  GroupPathExtraData *extra, double groups)
{
	Query *parse = root->parse;
	RelOptInfo *prel = PartialGroupRel(root, output_rel);
	Path *input;
	CustomPath *partial;
	Path *path;
	double total;

	if (prel == NULL || !output_rel->consider_parallel || !extra->partial_costs_set ||
		input_rel->partial_pathlist == NIL)
		return;
	input = (Path *) linitial(input_rel->partial_pathlist);
	partial = MakeGpuAggPath(root, input, prel, prel->reltarget, NULL, extra, true);
	if (partial == NULL || !partial->path.parallel_safe)
		return;
	total = partial->path.rows * Max(input->parallel_workers, 1);
	path = (Path *) create_gather_path(root, prel, &partial->path, prel->reltarget, NULL, &total);
	if (parse->groupClause == NIL)
		path = (Path *) create_agg_path(root, output_rel, path, output_rel->reltarget, AGG_PLAIN,
										AGGSPLIT_FINAL_DESERIAL, NIL, (List *) extra->havingQual,
										&extra->agg_final_costs, groups);
	else if (extra->flags & GROUPING_CAN_USE_HASH)
		path = (Path *) create_agg_path(root, output_rel, path, output_rel->reltarget, AGG_HASHED,
										AGGSPLIT_FINAL_DESERIAL, parse->groupClause,
										(List *) extra->havingQual, &extra->agg_final_costs,
										groups);
	else if (extra->flags & GROUPING_CAN_USE_SORT)
	{
		path = (Path *) create_sort_path(root, output_rel, path, root->group_pathkeys, -1.0);
		path = (Path *) create_agg_path(root, output_rel, path, output_rel->reltarget, AGG_SORTED,
										AGGSPLIT_FINAL_DESERIAL, parse->groupClause,
										(List *) extra->havingQual, &extra->agg_final_costs,
										groups);
	}
	else
		return;
	GpuopsAddPath(output_rel, path);
}

/*
 * GpuAgg over rows that parallel workers (and the leader) read into shared
 * memory (gpu_stage.h): the serial GpuAgg's aggregation, one device context
 * in the leader, with its input read, its columns computed and staged in
 * parallel.  Costed as the serial path with the reading replaced by the
 * Gather's (staging divided among the processes).
 */
static CustomPath *
StagedGpuAggPath(PlannerInfo *root, RelOptInfo *input_rel, CustomPath *serial)
{
	Path *serial_input = (Path *) linitial(serial->custom_paths);
	List *child_exprs = (List *) lsecond(serial->custom_private);
	Path *gather;
	CustomPath *cpath;
	double serial_read;

	if (!gpuops_enable_parallel_staging || input_rel->partial_pathlist == NIL)
		return NULL;
	gather = GpuStageGatherPath(root, input_rel, (Path *) linitial(input_rel->partial_pathlist),
								child_exprs);
	if (gather == NULL)
		return NULL;
	cpath = makeNode(CustomPath);
	memcpy(cpath, serial, sizeof(CustomPath));
	cpath->path.parallel_safe = false; /* it has a Gather below */
	cpath->custom_paths = list_make1(gather);
	serial_read = serial_input->total_cost +
		Max(serial_input->rows, 1.0) * list_length(child_exprs) * cpu_operator_cost * 0.5;
	cpath->path.startup_cost = serial->path.startup_cost - serial_read + gather->total_cost;
	cpath->path.total_cost = cpath->path.startup_cost +
		(serial->path.total_cost - serial->path.startup_cost);
	return cpath;
}

static bool
ContainsGroupingFunc(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, GroupingFunc))
		return true;
	return expression_tree_walker(node, (bool (*)())(void (*)(void)) ContainsGroupingFunc, context);
}

/*
 * GROUPING() at this level, in the target, HAVING, or a subquery's
 * reference to it (a Param the planner computes here): only an Agg node
 * evaluates it.
 */
bool
GpuAggUsesGroupingFunc(PlannerInfo *root, GroupPathExtraData *extra)
{
	ListCell *lc;

	if (ContainsGroupingFunc((Node *) extra->targetList, NULL) ||
		ContainsGroupingFunc(extra->havingQual, NULL))
		return true;
	foreach (lc, root->plan_params)
		if (ContainsGroupingFunc((Node *) lfirst_node(PlannerParamItem, lc)->item, NULL))
			return true;
	return false;
}

static void
GpuAggAddPathsImpl(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
				   GroupPathExtraData *extra)
{
	Query *parse = root->parse;
	CustomPath *cpath;
	CustomPath *staged;
	double groups;

	/*
	 * minmax_aggs: the planner may replace min/max by index probes (Params)
	 * in every plan's expressions, ours included; keep its plans then.
	 */
	if (parse->groupingSets != NIL || root->minmax_aggs != NIL || parse->hasTargetSRFs ||
		GpuAggUsesGroupingFunc(root, extra))
	{
		GpuopsDecline(GPUAGG_NAME,
					  "GROUPING SETS, GROUPING(), min/max answered from an index, "
					  "or a set-returning function in the target");
		return;
	}
	if (input_rel->rows < gpuops_min_rows)
	{
		GpuopsDecline(GPUAGG_NAME, "%.0f input rows, under gpuops.min_rows (%d)", input_rel->rows,
					  gpuops_min_rows);
		return;
	}
	cpath = MakeGpuAggPath(root, input_rel->cheapest_total_path, output_rel, output_rel->reltarget,
						   extra->havingQual, extra, false);
	if (cpath == NULL)
		return;
	groups = cpath->path.rows;
	staged = StagedGpuAggPath(root, input_rel, cpath);
	/* add_path frees a path it rejects: use cpath before */
	GpuopsAddPath(output_rel, &cpath->path);
	if (staged != NULL)
		GpuopsAddPath(output_rel, &staged->path);
	AddParallelGpuAggPath(root, input_rel, output_rel, extra, groups);
}

void
GpuAggAddPaths(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra)
{
	if (extra == NULL ||
		!GpuopsPlanningAllowedFor(GPUAGG_NAME, gpuops_enable_agg, "gpuops.enable_agg"))
		return;
	GpuAggAddPathsImpl(root, input_rel, output_rel, (GroupPathExtraData *) extra);
}

/*
 * The plan's data: as the path's, each computed input's argument's Vars
 * turned into references to the child's output, for PostgreSQL to evaluate a row
 * the device stopped at (gpu_agg_exec.cpp).
 */
static List *
PlanPrograms(List *path_fields, List *child_exprs)
{
	GpuAggPlan *plan = (GpuAggPlan *) palloc0(sizeof(GpuAggPlan));
	PlanFields reader(path_fields, GPUAGG_NAME);
	PlanFields writer;
	List *exprs = NIL;
	ListCell *lc;

	GpuAggPlanFields(reader, plan);
	foreach (lc, plan->prog_exprs)
		exprs = lappend(exprs,
						lfirst(lc)
							? GpuopsOuterVarRefs((Node *) copyObject(lfirst(lc)), child_exprs)
							: NULL);
	plan->prog_exprs = exprs;
	GpuAggPlanFields(writer, plan);
	pfree(plan);
	return (List *) copyObject(writer.list());
}

static Plan *
PlanGpuAggPathImpl(PlannerInfo *root, RelOptInfo *, CustomPath *best_path, List *tlist, List *,
				   List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List *priv = best_path->custom_private;
	Plan *child = (Plan *) linitial(custom_plans);
	Path *input = (Path *) linitial(best_path->custom_paths);

	/* the child computes exactly the columns the node reads (a Result if it cannot project) */
	child = change_plan_targetlist(child, GpuopsExprTlist((List *) lsecond(priv)),
								   input->parallel_safe);
	cscan->scan.plan.targetlist = tlist;
	/*
	 * HAVING, in the order PostgreSQL's Agg evaluates it: setrefs points
	 * its aggregates at the scan tuple's columns
	 */
	cscan->scan.plan.qual = (List *) copyObject(GpuopsOrderQuals(root, (List *) lfourth(priv)));
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = list_make1(child);
	cscan->custom_exprs = NIL;
	cscan->custom_private = PlanPrograms((List *) linitial(priv), (List *) lsecond(priv));
	cscan->custom_scan_tlist = GpuopsExprTlist((List *) lthird(priv));
	cscan->custom_relids = NULL;
	cscan->methods = &gpu_agg_scan_methods;
	return &cscan->scan.plan;
}

static Plan *
PlanGpuAggPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
			   List *clauses, List *custom_plans)
{
	return GpuopsGuard("PlanCustomPath", PlanGpuAggPathImpl, root, rel, best_path, tlist, clauses,
					   custom_plans);
}
