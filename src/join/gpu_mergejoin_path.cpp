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
 *
 * Two more shapes run the same node:
 * - staged: a side whose relation has a partial path is read by parallel
 *   workers into shared memory (Gather -> GpuStage, gpu_stage.h), so one
 *   backend no longer reads both sides row by row; the join itself runs in
 *   the leader, for every join type;
 * - counting: `SELECT count(*) ... FROM` an inner join on merge keys alone
 *   becomes one GpuMergeJoin at the grouping step that counts the key pairs
 *   on the device and returns the count, instead of passing every joined
 *   row to an aggregate (He et al. count their output the same way before
 *   writing it).  The join paths remember such joins (CountCandidate) for
 *   the grouping step's hook.
 */
extern "C" {
#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_aggregate_d.h"
#include "catalog/pg_type_d.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
}

#include "boundary.h"
#include "device.h"
#include "device_expr.h"
#include "gpu_mergejoin.h"
#include "gpu_stage.h"
#include "guc.h"
#include "plan_why.h"
#include "join_filter.h"
#include "join_plan.h"
#include "pg_compat.h"
#include "qual_order.h"

static Plan *PlanGpuMergeJoinPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
								  List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods gpu_mergejoin_path_methods = {
	GPUMERGEJOIN_NAME, PlanGpuMergeJoinPath,
	NULL, /* ReparameterizeCustomPathByChild: not partitionwise */
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

/*
 * A staged side's rows reach the leader in shared memory, already in the
 * row store's layout: it only takes the chunks and stages the key words,
 * about this share of reading the rows itself (as GpuSort's staged leader).
 */
#define GPUMJ_STAGED_LEADER_SHARE 0.25

static double
SideShare(bool staged)
{
	return staged ? GPUMJ_STAGED_LEADER_SHARE : 1.0;
}

/*
 * The path joining `outer` and `inner` on the merge clauses (in sort
 * order), or NULL when a key is not a column of these paths.  ostaged,
 * istaged: the rows of that side when it is a Gather of GpuStage (which
 * returns none), else 0.  `partial`:
 * outer is a partial path, and the join runs in each process of a
 * parallel plan, each sorting its share of the outer side and the whole
 * inner side; its output is then in key order per process, which Gather
 * Merge keeps.
 */
static CustomPath *
MakeMergePath(PlannerInfo *root, RelOptInfo *joinrel, Path *outer, Path *inner, JoinType jointype,
			  List *mergeclauses, List *clauses, List *filters, List *pathkeys, bool partial,
			  double ostaged, double istaged)
{
	GpuopsEquiJoinPlan *plan = (GpuopsEquiJoinPlan *) palloc0(sizeof(GpuopsEquiJoinPlan));
	PlanFields fields;
	List *params = NIL;
	List *device = NIL;
	List *filter;
	int nkeys = 0;
	ListCell *lc;
	CustomPath *cpath;
	QualCost qual_cost;
	double orows, irows, rows, mb;

	foreach (lc, mergeclauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		OpExpr *op = (OpExpr *) rinfo->clause;
		Expr *oexpr = (Expr *) (rinfo->outer_is_left ? linitial(op->args) : lsecond(op->args));
		Expr *iexpr = (Expr *) (rinfo->outer_is_left ? lsecond(op->args) : linitial(op->args));
		int ocol = GpuopsFindColumn(outer->pathtarget->exprs, (Node *) oexpr);
		int icol = GpuopsFindColumn(inner->pathtarget->exprs, (Node *) iexpr);

		if (ocol < 0 || icol < 0)
			return NULL;
		if (nkeys == GPUOPS_MAX_JOIN_KEYS)
			return NULL;
		plan->keys[nkeys].outer_col = ocol;
		plan->keys[nkeys].inner_col = icol;
		plan->keys[nkeys].outer_type = exprType((Node *) oexpr);
		plan->keys[nkeys].inner_type = exprType((Node *) iexpr);
		nkeys++;
	}

	/* the clauses the device can test on each pair of equal keys */
	filter = GpuopsJoinFilterPlan(clauses, outer->pathtarget, inner->pathtarget, &params, &device);
	plan->jointype = jointype;
	plan->nkeys = nkeys;
	plan->filter = filter;
	GpuopsEquiJoinPlanFields(fields, plan, GPUMERGEJOIN_NAME);
	pfree(plan);

	/*
	 * Cost: both sides are read, staged and sorted before the first row;
	 * each joined row pays a tuple and the remaining clauses.
	 */
	orows = Max(ostaged > 0 ? ostaged : outer->rows, 1.0); /* per process, for a partial path */
	irows = Max(istaged > 0 ? istaged : inner->rows, 1.0);
	rows = partial ? clamp_row_est(joinrel->rows / GpuopsParallelDivisor(outer)) : joinrel->rows;
	mb = (orows + irows) * nkeys * sizeof(uint64) / (1024.0 * 1024.0);
	cost_qual_eval(&qual_cost, list_concat_copy(clauses, filters), root);

	cpath = GpuopsNewJoinPath(joinrel, outer, inner, partial, &gpu_mergejoin_path_methods);
	cpath->path.pathkeys = pathkeys;
	cpath->path.rows = rows;
	cpath->path.startup_cost = outer->total_cost + inner->total_cost + gpuops_startup_cost +
		(orows * SideShare(ostaged > 0) + irows * SideShare(istaged > 0)) * gpuops_tuple_cost +
		mb * gpuops_transfer_cost;
	if (partial)
		cpath->path.startup_cost += gpuops_parallel_startup_cost;
	cpath->path.total_cost = cpath->path.startup_cost +
		rows * (cpu_tuple_cost + qual_cost.per_tuple) + qual_cost.startup;
	cpath->custom_private = list_make4(fields.list(), clauses, filters, list_make2(params, device));
	return cpath;
}

/*
 * A side read by parallel workers into shared memory: a Gather of GpuStage
 * over rel's cheapest partial path computing `serial`'s columns (*staged
 * true), or `serial` itself where that cannot be.
 */
static Path *
StagedSide(PlannerInfo *root, RelOptInfo *rel, Path *serial, bool *staged)
{
	Path *gather = NULL;

	if (gpuops_enable_parallel_staging && rel->partial_pathlist != NIL)
		gather = GpuStageGatherPath(root, rel, (Path *) linitial(rel->partial_pathlist),
									serial->pathtarget->exprs);
	*staged = gather != NULL;
	return gather ? gather : serial;
}

/* Estimated bytes of a path's rows in the row store (0 for NULL). */
static double
SideBytes(Path *path)
{
	/* a row's columns, its null bits and the batch's slack */
	return path ? Max(path->rows, 1.0) * (path->pathtarget->width + 16) : 0.0;
}

/*
 * Inner joins on merge keys alone, remembered for the grouping step
 * (GpuMergeJoinAddCountPaths) in the planner's memory: each unlinks itself
 * when that memory goes, so no planning sees another's.
 */
typedef struct CountCandidate
{
	MemoryContextCallback cb;
	struct CountCandidate *prev;
	struct CountCandidate *next;
	PlannerInfo *root;
	RelOptInfo *joinrel;
	Path *outer;
	Path *inner;
	Path *souter; /* the staged variant's sides, or NULL */
	Path *sinner;
	bool ostaged;
	bool istaged;
	List *mergeclauses;
} CountCandidate;

static CountCandidate *count_candidates = NULL;

static void
ForgetCountCandidate(void *arg)
{
	CountCandidate *c = (CountCandidate *) arg;

	if (c->prev)
		c->prev->next = c->next;
	else
		count_candidates = c->next;
	if (c->next)
		c->next->prev = c->prev;
}

static void
RememberCountCandidate(PlannerInfo *root, RelOptInfo *joinrel, Path *outer, Path *inner,
					   Path *souter, Path *sinner, bool ostaged, bool istaged, List *mergeclauses)
{
	CountCandidate *c = (CountCandidate *) palloc0(sizeof(CountCandidate));

	c->root = root;
	c->joinrel = joinrel;
	c->outer = outer;
	c->inner = inner;
	c->souter = souter;
	c->sinner = sinner;
	c->ostaged = ostaged;
	c->istaged = istaged;
	c->mergeclauses = list_copy(mergeclauses);
	c->cb.func = ForgetCountCandidate;
	c->cb.arg = c;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &c->cb);
	c->next = count_candidates;
	if (count_candidates)
		count_candidates->prev = c;
	count_candidates = c;
}

void
GpuMergeJoinAddPaths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					 RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	Path *outer = outerrel->cheapest_total_path;
	Path *inner = innerrel->cheapest_total_path;
	List *mergeclauses = NIL;
	List *outerkeys;
	List *clauses = NIL;
	List *filters = NIL;
	List *pathkeys = NIL;
	bool ordered = true;
	ListCell *lc;
	CustomPath *cpath;

	if (!GpuopsPlanningAllowedFor(GPUMERGEJOIN_NAME, gpuops_enable_mergejoin,
								  "gpuops.enable_mergejoin"))
		return;
	if (jointype != JOIN_INNER && jointype != JOIN_LEFT && jointype != JOIN_RIGHT &&
		jointype != JOIN_FULL && jointype != JOIN_SEMI && jointype != JOIN_ANTI)
		return;
	if (outer == NULL || inner == NULL || PATH_REQ_OUTER(outer) || PATH_REQ_OUTER(inner))
		return;
	if (extra->mergeclause_list == NIL)
		return;
	if (Max(outer->rows, inner->rows) < gpuops_min_rows)
	{
		GpuopsDecline(GPUMERGEJOIN_NAME, "%.0f and %.0f input rows, under gpuops.min_rows (%d)",
					  outer->rows, inner->rows, gpuops_min_rows);
		return;
	}

	/* the merge clauses whose two sides are columns of word-mergeable types */
	foreach (lc, extra->mergeclause_list)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		OpExpr *op = (OpExpr *) rinfo->clause;
		Expr *oexpr, *iexpr;

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
	foreach (lc, outerkeys)
	{
		PathKey *pk = (PathKey *) lfirst(lc);

		/* the device sorts ascending, NULLs last */
		if (GpuopsPathKeyStrategy(pk) != BTLessStrategyNumber || pk->pk_nulls_first)
			ordered = false;
	}

	/* the other clauses: as createplan.c, outer joins' pushed-down ones filter */
	foreach (lc, GpuopsOrderQuals(root, extra->restrictlist))
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
	if (ordered &&
		(jointype == JOIN_INNER || jointype == JOIN_LEFT || jointype == JOIN_SEMI ||
		 jointype == JOIN_ANTI))
		pathkeys = build_join_pathkeys(root, joinrel, jointype, outerkeys);

	cpath = MakeMergePath(root, joinrel, outer, inner, jointype, mergeclauses, clauses, filters,
						  pathkeys, false, 0, 0);
	if (cpath != NULL)
		GpuopsAddPath(joinrel, &cpath->path);

	/* the same join over sides that parallel workers read, for every join type */
	{
		bool ostaged, istaged;
		Path *souter = StagedSide(root, outerrel, outer, &ostaged);
		Path *sinner = StagedSide(root, innerrel, inner, &istaged);

		if (!ostaged && !istaged)
			souter = sinner = NULL;
		else if (SideBytes(ostaged ? outer : NULL) + SideBytes(istaged ? inner : NULL) >
				 (double) GpuopsHostMemoryLimit())
			souter = sinner = NULL; /* the chunks cannot be spilled */
		if (souter != NULL)
		{
			cpath = MakeMergePath(root, joinrel, souter, sinner, jointype, mergeclauses, clauses,
								  filters, pathkeys, false, ostaged ? outer->rows : 0,
								  istaged ? inner->rows : 0);
			if (cpath != NULL)
			{
				/* Gather below: it cannot run in a worker itself */
				cpath->path.parallel_safe = false;
				GpuopsAddPath(joinrel, &cpath->path);
			}
		}
		/* only the key pairs matter: count(*) above may count them (GpuMergeJoinAddCountPaths) */
		if (jointype == JOIN_INNER && clauses == NIL && filters == NIL)
			RememberCountCandidate(root, joinrel, outer, inner, souter, sinner, ostaged, istaged,
								   mergeclauses);
	}

	/*
	 * In parallel: each process sorts its share of a partial outer path and
	 * the whole inner side, as PostgreSQL's parallel merge join does.  Not
	 * for right and full joins: every process would return the inner rows
	 * it did not match.
	 */
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL && jointype != JOIN_RIGHT &&
		jointype != JOIN_FULL)
	{
		Path *partial = (Path *) linitial(outerrel->partial_pathlist);

		inner = get_cheapest_parallel_safe_total_inner(innerrel->pathlist);
		if (inner == NULL || PATH_REQ_OUTER(partial))
			return;
		cpath = MakeMergePath(root, joinrel, partial, inner, jointype, mergeclauses, clauses,
							  filters, pathkeys, true, 0, 0);
		if (cpath != NULL && cpath->path.parallel_safe)
			GpuopsAddPartialPath(joinrel, &cpath->path);
	}
}

/*
 * The aggregates of a grouping step's target and HAVING (each once) when
 * every one is a plain count(*) and nothing else is read; else NIL.
 */
static List *
CountStarAggrefs(List *exprs, List *having)
{
	List *items = pull_var_clause((Node *) list_concat_copy(exprs, having),
								  PVC_INCLUDE_AGGREGATES | PVC_RECURSE_WINDOWFUNCS |
									  PVC_INCLUDE_PLACEHOLDERS);
	List *aggs = NIL;
	ListCell *lc;

	foreach (lc, items)
	{
		Aggref *agg = (Aggref *) lfirst(lc);

		if (!IsA(agg, Aggref) || agg->aggfnoid != F_COUNT_ || !agg->aggstar ||
			agg->aggfilter != NULL || agg->aggdistinct != NIL || agg->aggorder != NIL ||
			agg->agglevelsup != 0 || agg->aggkind != AGGKIND_NORMAL ||
			agg->aggsplit != AGGSPLIT_SIMPLE)
			return NIL;
		aggs = list_append_unique(aggs, agg);
	}
	return aggs;
}

void
GpuMergeJoinAddCountPaths(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
						  void *extra_data)
{
	GroupPathExtraData *extra = (GroupPathExtraData *) extra_data;
	Query *parse = root->parse;
	List *having;
	List *aggs;

	if (!gpuops_enable_mergejoin || !GpuopsPlanningAllowed() || extra == NULL)
		return;
	/* one count of the whole join: no groups, and min/max left to PostgreSQL */
	if (parse->groupClause != NIL || parse->groupingSets != NIL || !parse->hasAggs ||
		root->minmax_aggs != NIL || parse->hasTargetSRFs ||
		extra->patype != PARTITIONWISE_AGGREGATE_NONE)
		return;
	having = GpuopsOrderQuals(root, (List *) extra->havingQual);
	aggs = CountStarAggrefs(output_rel->reltarget->exprs, having);
	if (aggs == NIL)
		return;
	for (CountCandidate *c = count_candidates; c != NULL; c = c->next)
	{
		if (c->root != root || c->joinrel != input_rel)
			continue;
		for (int staged = 0; staged < 2; staged++)
		{
			CustomPath *cpath;

			if (staged && c->souter == NULL)
				break;
			cpath = MakeMergePath(root, input_rel, staged ? c->souter : c->outer,
								  staged ? c->sinner : c->inner, JOIN_INNER, c->mergeclauses, NIL,
								  NIL, NIL, false, staged && c->ostaged ? c->outer->rows : 0,
								  staged && c->istaged ? c->inner->rows : 0);
			if (cpath == NULL)
				continue;
			/* one row, the count, once both sides are merged: no joined row is made */
			cpath->path.parent = output_rel;
			cpath->path.pathtarget = output_rel->reltarget;
			cpath->path.parallel_safe = false;
			cpath->path.rows = 1;
			cpath->path.pathkeys = NIL;
			cpath->path.total_cost = cpath->path.startup_cost + cpu_tuple_cost;
			cpath->custom_private = lappend(cpath->custom_private, list_make2(aggs, having));
			GpuopsAddPath(output_rel, &cpath->path);
		}
	}
}

static Plan *
PlanGpuMergeJoinPathImpl(PlannerInfo *, RelOptInfo *rel, CustomPath *best_path, List *tlist, List *,
						 List *custom_plans)
{
	CustomScan *cscan = GpuopsNewEquiJoinScan(rel, best_path, tlist, custom_plans,
											  &gpu_mergejoin_scan_methods);

	if (list_length(best_path->custom_private) > GPUOPS_EQUIJOIN_PATH_FIELDS)
	{
		/*
		 * Counting: the counts follow the children's columns in the scan
		 * tuple; setrefs points the target list's and HAVING's count(*) at
		 * them, as for an aggregate's output.
		 */
		List *count = (List *) llast(best_path->custom_private);
		List *aggs = (List *) linitial(count);
		ListCell *lc;

		foreach (lc, aggs)
			cscan->custom_scan_tlist = lappend(
				cscan->custom_scan_tlist,
				makeTargetEntry((Expr *) copyObject(lfirst(lc)),
								list_length(cscan->custom_scan_tlist) + 1, NULL, false));
		GpuopsEquiJoinPlan *plan = GpuopsReadEquiJoinPlan(cscan->custom_private, GPUMERGEJOIN_NAME);
		PlanFields fields;

		cscan->scan.plan.qual = (List *) copyObject(lsecond(count));
		plan->count_cols = list_length(aggs);
		GpuopsEquiJoinPlanFields(fields, plan, GPUMERGEJOIN_NAME);
		cscan->custom_private = fields.list();
	}
	GpuopsMatchScanNullingRels(cscan, best_path);
	return &cscan->scan.plan;
}

static Plan *
PlanGpuMergeJoinPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
					 List *clauses, List *custom_plans)
{
	return GpuopsGuard("PlanCustomPath", PlanGpuMergeJoinPathImpl, root, rel, best_path, tlist,
					   clauses, custom_plans);
}
