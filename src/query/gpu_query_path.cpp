/*
 * gpu_query_path.cpp
 *    GpuQuery planning: the CustomPath for a one-table block (gpu_query.h),
 *    offered from create_upper_paths_hook at UPPERREL_GROUP_AGG before
 *    GpuAgg's paths, and competing on cost with PostgreSQL's plans already
 *    in the grouped rel (serial and parallel: Finalize over Gather over
 *    Partial) and GpuAgg's.  What the device takes is decided in
 *    gpu_query_inputs.cpp.
 *
 * Cost.  The table's pages are read as a sequential scan reads them (the
 * same disk term), plus gpuops.query_page_cost per page for the walk
 * (visibility, pins); each value read is turned into a word for half an
 * operator's cost (cpu_operator_cost); both are divided among the reader
 * threads (the deforming) or, with workers, among the processes (the walk
 * too).  The words are copied to the device (gpuops.transfer_cost per MB),
 * where filtering and grouping cost next to nothing; then each group is
 * finished and emitted.  PostgreSQL's parallel plans divide only their
 * CPU part among processes too, so on a large table the reading decides.
 *
 * The escape plan (gpu_query.h) is PostgreSQL's serial aggregation over
 * the table's cheapest path, made here as a fresh path in no pathlist (so
 * add_path never frees it), and not costed: it runs only when the device
 * cannot decide a row.
 */
extern "C" {
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/prep.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"
}

#include "boundary.h"
#include "device.h"
#include "gpu_query.h"
#include "gpu_stage.h"
#include "guc.h"
#include "pg_compat.h"
#include "plan_why.h"
#include "qual_order.h"

static Plan *PlanGpuQueryPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							  List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods gpu_query_path_methods = {
	GPUQUERY_NAME, PlanGpuQueryPath, NULL, /* ReparameterizeCustomPathByChild */
};

/* PostgreSQL's serial aggregation of the block, or NULL when it can make none here. */
static Path *
EscapePath(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
		   GroupPathExtraData *extra, double groups)
{
	/* (the columns PostgreSQL groups by: the input's target carries only theirs) */
	List *group_clause = GpuopsGroupClause(root);
	Path *input = input_rel->cheapest_total_path;
	AggClauseCosts costs;
	List *having = (List *) extra->havingQual;

	if (input == NULL || PATH_REQ_OUTER(input))
		return NULL;
	memset(&costs, 0, sizeof(costs));
	get_agg_clause_costs(root, AGGSPLIT_SIMPLE, &costs);
	if (group_clause == NIL)
		return (Path *) create_agg_path(root, output_rel, input, output_rel->reltarget, AGG_PLAIN,
										AGGSPLIT_SIMPLE, NIL, having, &costs, 1);
	if (extra->flags & GROUPING_CAN_USE_HASH)
		return (Path *) create_agg_path(root, output_rel, input, output_rel->reltarget, AGG_HASHED,
										AGGSPLIT_SIMPLE, group_clause, having, &costs, groups);
	if (extra->flags & GROUPING_CAN_USE_SORT)
	{
		input = (Path *) create_sort_path(root, output_rel, input, root->group_pathkeys, -1.0);
		return (Path *) create_agg_path(root, output_rel, input, output_rel->reltarget, AGG_SORTED,
										AGGSPLIT_SIMPLE, group_clause, having, &costs, groups);
	}
	return NULL;
}

/* The table's pages for each worker GpuQuery asks for (64K pages: 512 MB). */
#define QUERY_PAGES_PER_WORKER 65536.0

/*
 * Workers to read the table with (query_parallel.h), when the block may
 * run in parallel mode (the leader evaluates every expression; the
 * workers only read pages): as many as a Parallel Seq Scan of it would
 * get, or one per QUERY_PAGES_PER_WORKER pages where that is more, up to
 * max_parallel_workers_per_gather.  A Parallel Seq Scan's workers grow
 * with the logarithm of the table's size, because PostgreSQL's executor
 * gains less from each one; GpuQuery's only walk the pages (~1 us a page
 * each), and the walk is what bounds a large table's read (doc/gpuquery.md,
 * step 13), so a larger table has them all.  A table's own parallel_workers
 * setting decides alone, as it does for PostgreSQL.  GpuTopN's walk
 * (gpu_topn_path.cpp) takes as many.
 */
int
GpuQueryWorkers(PlannerInfo *root, RelOptInfo *rel)
{
	int workers;

	if (!root->glob->parallelModeOK || !rel->consider_parallel ||
		max_parallel_workers_per_gather <= 0)
		return 0;
	workers = compute_parallel_worker(rel, rel->pages, -1, max_parallel_workers_per_gather);
	if (rel->rel_parallel_workers == -1)
		workers = Max(workers,
					  (int) Min((double) max_parallel_workers_per_gather,
								rel->pages / QUERY_PAGES_PER_WORKER));
	return workers;
}

static CustomPath *
NewGpuQueryPath(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
				GroupPathExtraData *extra, GpuQueryBuild *b)
{
	GpuQueryPlan *plan = b->plan;
	RelOptInfo *fact = b->fact;
	double pages = fact->pages;
	double tuples = Max(fact->tuples, 0.0);
	double groups;
	double seq_page_cost_spc;
	double read, deform, copy, device, dims = 0;
	ListCell *lc;
	QualCost having_cost;
	Path *escape;
	PlanFields fields;
	CustomPath *cpath;

	if (plan->nkeys == 0)
		groups = 1;
	else if (output_rel->pathlist != NIL)
		groups = ((Path *) linitial(output_rel->pathlist))->rows;
	else
		groups = estimate_num_groups(root, b->key_exprs, input_rel->rows, NULL, NULL);
	plan->groups = groups;
	escape = EscapePath(root, input_rel, output_rel, extra, groups);
	if (escape == NULL)
	{
		GpuopsDecline(GPUQUERY_NAME, "no serial plan to escape to");
		return NULL;
	}

	get_tablespace_page_costs(fact->reltablespace, NULL, &seq_page_cost_spc);
	plan->nworkers = GpuQueryWorkers(root, fact);
	/* a dimension read from its pages: as many as its own scan would get, at most the table's */
	for (int d = 0; d < plan->ndims; d++)
		plan->dims[d].read_workers = OidIsValid(plan->dims[d].read_relid)
			? Min(GpuQueryWorkers(root, (RelOptInfo *) list_nth(b->dim_rels, d)), plan->nworkers)
			: 0;
	/*
	 * each dimension: its own plan, then each row staged (its key and
	 * payload words); or its pages read in the leader as the fact table's
	 * are read alone, its quals a program on each row (a host step ~1/4
	 * operator), the rows they pass copied
	 */
	foreach (lc, b->dim_paths)
	{
		Path *dim = (Path *) lfirst(lc);
		const GpuQueryDimPlan *dp = &plan->dims[foreach_current_index(lc)];
		RelOptInfo *rel = (RelOptInfo *) list_nth(b->dim_rels, foreach_current_index(lc));
		double spc_page_cost;

		if (OidIsValid(dp->read_relid))
		{
			get_tablespace_page_costs(rel->reltablespace, NULL, &spc_page_cost);
			/* with workers, each process walks, deforms and filters its share */
			dims += rel->pages * spc_page_cost +
				(rel->pages * gpuops_query_page_cost +
				 rel->tuples *
					 (dp->read_ncols * cpu_operator_cost * 0.5 /
						  (dp->read_workers > 0 ? 1 : Max(Min(gpuops_reader_threads, 16), 1)) +
					  (dp->read_qual != NIL ? linitial_int(dp->read_qual) : 0) * cpu_operator_cost *
						  0.25)) /
					(dp->read_workers + 1) +
				(dp->read_workers > 0 ? parallel_setup_cost : 0) +
				/*
				 * the leader keeps the rows: by column with memcpy where
				 * no qual drops any (~1 ns a word), else row by row
				 */
				dim->rows * (1 + dp->npayload) * cpu_operator_cost *
					(dp->read_qual != NIL ? 0.5 : 0.125);
		}
		else
			dims += dim->total_cost +
				dim->rows * (cpu_tuple_cost + (1 + dp->npayload) * cpu_operator_cost);
	}
	/*
	 * A value turned into a word costs half an operator: measured on the
	 * H100, ~9 ns a value in each reading process, where PostgreSQL's
	 * executor takes 40-80 ns a tuple (cpu_tuple_cost, four operators).
	 */
	deform = tuples * plan->ncols * cpu_operator_cost * 0.5;
	if (plan->nworkers > 0)
		/* each process walks and deforms its share; the disk term is whole, as for PostgreSQL's */
		read = pages * seq_page_cost_spc + parallel_setup_cost +
			(pages * gpuops_query_page_cost + deform) / (plan->nworkers + 1);
	else
		read = pages * (seq_page_cost_spc + gpuops_query_page_cost) +
			deform / Max(Min(gpuops_reader_threads, 16), 1);
	copy = tuples * b->row_bytes / (1024.0 * 1024.0) * gpuops_transfer_cost;
	/*
	 * The device's kernels: on the H200 ~1 ns a row, bound by reading the
	 * columns more than by the program (TPC-H SF 10: 58 ms for Q6's 60M
	 * rows and 27 steps, 59 ms for Q12's 38 steps), where an operator is
	 * 10-20 ns: a twentieth of an operator a row, a thousandth a step.
	 */
	device = tuples * (0.05 + 0.001 * b->program_steps) * cpu_operator_cost;
	cost_qual_eval(&having_cost, (List *) extra->havingQual, root);

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = output_rel;
	cpath->path.pathtarget = output_rel->reltarget;
	cpath->path.param_info = NULL;
	/* one device session (workers it starts itself only read): never in a worker */
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.parallel_workers = 0;
	cpath->path.pathkeys = NIL;
	cpath->path.rows = groups;
	cpath->path.startup_cost = gpuops_startup_cost + dims + read + copy + device;
	cpath->path.total_cost = cpath->path.startup_cost +
		groups * (cpu_tuple_cost + plan->naggs * cpu_operator_cost + having_cost.per_tuple) +
		having_cost.startup;
	/*
	 * No projection: the escape plan's rows are returned as they are, so
	 * the node's target list must stay the grouped rel's (a Result above
	 * projects another one).
	 */
	cpath->flags = 0;
	/* the escape plan, then the dimensions' */
	cpath->custom_paths = lcons(escape, list_copy(b->dim_paths));
	GpuQueryPlanFields(fields, plan);
	/* for EXPLAIN: the quals, the join quals, the lookups (plan: njoin_quals, ndims) */
	cpath->custom_private = list_make5(
		fields.list(), b->scan_exprs,
		list_concat(list_concat(list_copy(b->quals), b->join_quals), b->lookups), b->qual_vars,
		list_make3(makeInteger((int) fact->relid), copyObject(extra->havingQual),
				   makeInteger(plan->nworkers)));
	cpath->methods = &gpu_query_path_methods;
	return cpath;
}

static void
GpuQueryAddPathsImpl(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
					 GroupPathExtraData *extra)
{
	GpuQueryBuild b;
	CustomPath *cpath;

	memset(&b, 0, sizeof(b));
	if (!GpuQueryCollect(root, input_rel, output_rel, extra, &b))
		return;
	cpath = NewGpuQueryPath(root, input_rel, output_rel, extra, &b);
	if (cpath != NULL)
		GpuopsAddPath(output_rel, &cpath->path);
}

void
GpuQueryAddPaths(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra)
{
	if (extra == NULL ||
		!GpuopsPlanningAllowedFor(GPUQUERY_NAME, gpuops_enable_query, "gpuops.enable_query"))
		return;
	GpuQueryAddPathsImpl(root, input_rel, output_rel, (GroupPathExtraData *) extra);
}

static Plan *
PlanGpuQueryPathImpl(PlannerInfo *root, RelOptInfo *, CustomPath *best_path, List *tlist, List *,
					 List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List *priv = best_path->custom_private;
	List *scan_exprs = (List *) lsecond(priv);
	List *quals = (List *) lthird(priv);
	List *qual_vars = (List *) lfourth(priv);
	List *rest = (List *) list_nth(priv, 4);
	List *scan_tlist = GpuopsExprTlist(scan_exprs);
	ListCell *lc;

	/* the quals' Vars, for EXPLAIN's Device Filter (custom_exprs refer to the scan tuple) */
	foreach (lc, qual_vars)
	{
		if (list_member(scan_exprs, lfirst(lc)))
			continue;
		scan_exprs = lappend(list_copy(scan_exprs), lfirst(lc));
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) copyObject(lfirst(lc)),
											 list_length(scan_tlist) + 1, NULL, true));
	}
	/* the node starts its own workers (query_parallel.h): parallel mode, as for a Gather */
	if (intVal(lthird(rest)) > 0)
		root->glob->parallelModeNeeded = true;
	cscan->scan.plan.targetlist = tlist;
	/* HAVING, in the order PostgreSQL's Agg evaluates it, over the scan tuple */
	cscan->scan.plan.qual = (List *) copyObject(GpuopsOrderQuals(root, (List *) lsecond(rest)));
	cscan->scan.scanrelid = (Index) intVal(linitial(rest));
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = (List *) copyObject(quals);
	cscan->custom_private = (List *) copyObject(linitial(priv));
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = NULL;
	cscan->methods = &gpu_query_scan_methods;
	return &cscan->scan.plan;
}

static Plan *
PlanGpuQueryPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
				 List *clauses, List *custom_plans)
{
	return GpuopsGuard("PlanCustomPath", PlanGpuQueryPathImpl, root, rel, best_path, tlist, clauses,
					   custom_plans);
}
