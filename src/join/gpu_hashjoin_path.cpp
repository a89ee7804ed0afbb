/*
 * gpu_hashjoin_path.cpp
 *    GpuHashJoin planning: a CustomPath for inner, outer (left, right,
 *    full), semi and anti joins with at least one hashable equality,
 *    competing on cost with PostgreSQL's joins.
 *
 * Called from set_join_pathlist_hook for each pair of input rels (both
 * orders, so the cost model also picks the build side: the inner one).  A
 * hash key is a hashjoinable equality between a column of each side: of
 * type int2, int4, int8 (in any combination) or date, sent as its value; or
 * of any other type with a hash opclass (text, numeric, uuid, timestamps,
 * ...), sent as the value's hash.  Other clauses ride along and are
 * re-checked on the CPU for each candidate pair.
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/paths.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/restrictinfo.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
}

#include <cmath>
#include <utility>

#include "boundary.h"
#include "device.h"
#include "gpu_hashjoin.h"
#include "gpuops_device.h"
#include "guc.h"
#include "plan_why.h"
#include "join_filter.h"
#include "join_plan.h"
#include "qual_order.h"

static Plan *PlanGpuHashJoinPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
								 List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods gpu_hashjoin_path_methods = {
	GPUHASHJOIN_NAME, PlanGpuHashJoinPath,
	NULL, /* ReparameterizeCustomPathByChild: not partitionwise */
};

/* Equality functions whose two sides become the same 64-bit word. */
static bool
IsIntegerEquality(Oid opno)
{
	switch (get_opcode(opno))
	{
		case F_INT2EQ:
		case F_INT4EQ:
		case F_INT8EQ:
		case F_INT24EQ:
		case F_INT42EQ:
		case F_INT28EQ:
		case F_INT82EQ:
		case F_INT48EQ:
		case F_INT84EQ:
		case F_DATE_EQ:
			return true;
		default:
			return false;
	}
}

/* The join's clauses, sorted for a GpuHashJoin (MakeJoinPath). */
typedef struct HashJoinClauses
{
	List *clauses;	  /* decide whether a pair matches */
	List *filters;	  /* outer joins: applied to the joined rows */
	Expr *key_clause; /* the last hash key's clause */
	bool all_integer; /* every key goes to the device as its value */
} HashJoinClauses;

/*
 * The join's clauses into c, and the hash keys among them into plan (keys,
 * nkeys); false when the join has gating quals (PostgreSQL's plans handle
 * them).
 */
static bool
HashKeys(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel, RelOptInfo *innerrel,
		 Path *outer, Path *inner, JoinType jointype, JoinPathExtraData *extra,
		 GpuopsEquiJoinPlan *plan, HashJoinClauses *c)
{
	ListCell *lc;

	c->clauses = c->filters = NIL;
	c->key_clause = NULL;
	c->all_integer = true;
	foreach (lc, GpuopsOrderQuals(root, extra->restrictlist))
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		OpExpr *op;
		Expr *oexpr, *iexpr;
		int ocol, icol;
		RegProcedure lhash, rhash;

		if (rinfo->pseudoconstant)
			return false; /* gating quals: PostgreSQL's plans handle them */
		/*
		 * As createplan.c does: in outer joins (LEFT, RIGHT, FULL, ANTI)
		 * pushed-down clauses filter the joined rows; in inner and semi
		 * joins every clause decides the match.
		 */
		if (IS_OUTER_JOIN(jointype) && RINFO_IS_PUSHED_DOWN(rinfo, joinrel->relids))
		{
			c->filters = lappend(c->filters, rinfo->clause);
			continue;
		}
		c->clauses = lappend(c->clauses, rinfo->clause);
		if (!OidIsValid(rinfo->hashjoinoperator) || !IsA(rinfo->clause, OpExpr) ||
			plan->nkeys == GPUOPS_MAX_JOIN_KEYS)
			continue;
		op = (OpExpr *) rinfo->clause;
		if (list_length(op->args) != 2)
			continue;
		/* integers go to the device as values; anything else hashable as hashes */
		lhash = rhash = InvalidOid;
		if (!IsIntegerEquality(op->opno) && !get_op_hash_functions(op->opno, &lhash, &rhash))
			continue;
		if (bms_is_subset(rinfo->left_relids, outerrel->relids) &&
			bms_is_subset(rinfo->right_relids, innerrel->relids))
		{
			oexpr = (Expr *) linitial(op->args);
			iexpr = (Expr *) lsecond(op->args);
		}
		else if (bms_is_subset(rinfo->left_relids, innerrel->relids) &&
				 bms_is_subset(rinfo->right_relids, outerrel->relids))
		{
			oexpr = (Expr *) lsecond(op->args);
			iexpr = (Expr *) linitial(op->args);
			std::swap(lhash, rhash);
		}
		else
			continue;
		ocol = GpuopsFindColumn(outer->pathtarget->exprs, (Node *) oexpr);
		icol = GpuopsFindColumn(inner->pathtarget->exprs, (Node *) iexpr);
		if (ocol < 0 || icol < 0)
			continue; /* a key computed by an expression: not yet */
		plan->keys[plan->nkeys].outer_col = ocol;
		plan->keys[plan->nkeys].inner_col = icol;
		plan->keys[plan->nkeys].outer_type = exprType((Node *) oexpr);
		plan->keys[plan->nkeys].inner_type = exprType((Node *) iexpr);
		plan->keys[plan->nkeys].outer_hash = lhash; /* the outer side's, after any swap */
		plan->keys[plan->nkeys].inner_hash = rhash;
		plan->keys[plan->nkeys].collation = op->inputcollid;
		c->key_clause = rinfo->clause;
		c->all_integer &= !OidIsValid(lhash);
		plan->nkeys++;
	}
	return true;
}

/*
 * The path joining `outer` and `inner` (paths of outerrel and innerrel), or
 * NULL when no clause can be a hash key.  `partial`: outer is a partial
 * path, and the join runs in each process of a parallel plan.
 */
static CustomPath *
MakeJoinPath(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel, RelOptInfo *innerrel,
			 Path *outer, Path *inner, JoinType jointype, JoinPathExtraData *extra, bool partial)
{
	GpuopsEquiJoinPlan *plan = (GpuopsEquiJoinPlan *) palloc0(sizeof(GpuopsEquiJoinPlan));
	PlanFields fields;
	HashJoinClauses hc;
	int nkeys;
	List *clauses;
	List *filters;
	CustomPath *cpath;
	QualCost qual_cost;
	List *params = NIL;
	List *device = NIL;
	List *filter;
	double orows, irows, rows, mb;

	if (!HashKeys(root, joinrel, outerrel, innerrel, outer, inner, jointype, extra, plan, &hc))
		return NULL;
	nkeys = plan->nkeys;
	clauses = hc.clauses;
	filters = hc.filters;
	if (nkeys == 0)
		return NULL;

	/*
	 * With one key the 64-bit word is the integer value itself and the hash
	 * is a bijection of it (join_hash.hpp), so equal hashes mean equal keys:
	 * that clause needs no re-check.  With several keys hashes can collide,
	 * and every clause is re-checked.
	 */
	if (nkeys == 1 && hc.all_integer)
		clauses = list_delete_ptr(clauses, hc.key_clause);
	/* the clauses the device can test on each candidate pair */
	filter = GpuopsJoinFilterPlan(clauses, outer->pathtarget, inner->pathtarget, &params, &device);
	plan->jointype = jointype;
	plan->nkeys = nkeys;
	plan->filter = filter;
	GpuopsEquiJoinPlanFields(fields, plan, GPUHASHJOIN_NAME);
	pfree(plan);

	/*
	 * Cost: the inner side is staged and the directory built before the
	 * first row (start-up); every outer row is staged and probed; each
	 * candidate pair pays the join clauses' re-check and a tuple.  Staging
	 * dominates, as for GpuSort (gpuops.tuple_cost per row).
	 */
	orows = Max(outer->rows, 1.0); /* per process, for a partial path */
	irows = Max(inner->rows, 1.0);
	rows = partial ? clamp_row_est(joinrel->rows / GpuopsParallelDivisor(outer)) : joinrel->rows;
	mb = (orows + irows) * nkeys * sizeof(uint64) / (1024.0 * 1024.0);
	cost_qual_eval(&qual_cost, list_concat_copy(clauses, filters), root);

	cpath = GpuopsNewJoinPath(joinrel, outer, inner, partial, &gpu_hashjoin_path_methods);
	cpath->path.pathkeys = NIL;
	cpath->path.rows = rows;
	cpath->path.startup_cost = inner->total_cost + gpuops_startup_cost + irows * gpuops_tuple_cost;
	cpath->path.total_cost = cpath->path.startup_cost + outer->total_cost +
		orows * gpuops_tuple_cost + mb * gpuops_transfer_cost +
		rows * (cpu_tuple_cost + qual_cost.per_tuple) + qual_cost.startup;
	if (partial && gpuops_enable_shared_build && parallel_leader_participation)
	{
		/*
		 * Shared build (gpu_hashjoin_shared.cpp): only the leader uses the
		 * device.  Each worker copies its probe rows' key words to the
		 * leader and expands the answers: per row about an operator's cost,
		 * not a staged tuple's, where the rows come straight from heap pages
		 * (heap_source.cpp; 38 ns a row measured on the benchmark's 50M x 1M
		 * join), and the leader's inner side likewise.  A worker that reads
		 * an inner column also reads the inner side and sorts its hashes on
		 * the host for its copy of the directory; one that reads none needs
		 * only match counts and reads nothing more.
		 */
		Relids inner_relids = innerrel->relids;
		bool counts_only = jointype != JOIN_RIGHT && jointype != JOIN_FULL &&
			!bms_overlap(pull_varnos(root, (Node *) joinrel->reltarget->exprs), inner_relids) &&
			!bms_overlap(pull_varnos(root, (Node *) clauses), inner_relids) &&
			!bms_overlap(pull_varnos(root, (Node *) filters), inner_relids);
		Cost copy = counts_only ? 0.0 : irows * cpu_operator_cost * (1.0 + std::log2(irows));
		/*
		 * Read from heap pages, a row also skips the scan's own per-tuple
		 * charge: no tuple passes through the executor (0.2 s against 1.0 s
		 * for a worker's 5.5M rows, measured).
		 */
		Cost per_row = Max(gpuops_tuple_cost - cpu_operator_cost * nkeys, 0.0);
		Cost inner_saving = GpuopsDirectReadSaving(inner, irows, per_row);
		Cost outer_saving = GpuopsDirectReadSaving(outer, orows, per_row);

		/*
		 * The leader probes for every process, one request after another:
		 * the whole outer side's rows (not this process's share) pass
		 * through it.  Measured on the H200 (SSB SF 10, Q3.2): the leader
		 * probed its own 15.3M rows and served 44.7M of the workers' in
		 * about 2.6 s, ~43 ns a row, where PostgreSQL's 8 processes joined
		 * all 60M in 1.0 s.  Half a staged tuple's cost a row (0.02 at the
		 * default gpuops.tuple_cost) is that rate on PostgreSQL's scale
		 * (a parallel seq scan's ~0.025 a row for ~60 ns).
		 */
		Cost service = orows * GpuopsParallelDivisor(outer) * gpuops_tuple_cost * 0.5;

		cpath->path.parallel_aware = true;
		cpath->path.startup_cost += copy - inner_saving;
		cpath->path.total_cost += copy - inner_saving - outer_saving + service;
	}
	else if (partial)
	{
		cpath->path.startup_cost += gpuops_parallel_startup_cost;
		cpath->path.total_cost += gpuops_parallel_startup_cost;
	}
	cpath->custom_private = list_make4(fields.list(), clauses, filters, list_make2(params, device));
	return cpath;
}

void
GpuHashJoinAddPaths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	Path *outer = outerrel->cheapest_total_path;
	Path *inner = innerrel->cheapest_total_path;
	CustomPath *cpath;

	if (!GpuopsPlanningAllowedFor(GPUHASHJOIN_NAME, gpuops_enable_hashjoin,
								  "gpuops.enable_hashjoin"))
		return;

	/*
	 * The inner side is always the build side: LEFT and RIGHT (the same
	 * join with the sides swapped, offered by PostgreSQL too) let the cost
	 * model pick which one is built.  Unique-ified inputs of semi joins
	 * (JOIN_UNIQUE_*) keep PostgreSQL's plans.
	 */
	if (jointype != JOIN_INNER && jointype != JOIN_LEFT && jointype != JOIN_RIGHT &&
		jointype != JOIN_FULL && jointype != JOIN_SEMI && jointype != JOIN_ANTI)
		return;
	if (outer == NULL || inner == NULL || PATH_REQ_OUTER(outer) || PATH_REQ_OUTER(inner))
		return;
	if (Max(outer->rows, inner->rows) < gpuops_min_rows)
	{
		GpuopsDecline(GPUHASHJOIN_NAME, "%.0f and %.0f input rows, under gpuops.min_rows (%d)",
					  outer->rows, inner->rows, gpuops_min_rows);
		return;
	}
	cpath = MakeJoinPath(root, joinrel, outerrel, innerrel, outer, inner, jointype, extra, false);
	if (cpath == NULL)
		return;
	GpuopsAddPath(joinrel, &cpath->path);

	/*
	 * In parallel: each worker (and the leader) reads the whole inner side
	 * and probes its share of a partial outer path, as PostgreSQL's
	 * non-shared parallel hash join does; Gather (or a partial aggregate
	 * first) sits above.  Not for RIGHT and FULL joins: every process would
	 * return the inner rows it did not match.  With the shared build only
	 * the leader uses the device; without it each process builds on the
	 * device and creating its CUDA context is priced by
	 * gpuops.parallel_startup_cost.
	 */
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL && jointype != JOIN_RIGHT &&
		jointype != JOIN_FULL)
	{
		Path *partial = (Path *) linitial(outerrel->partial_pathlist);

		/* the inner side runs whole in every process: a parallel-safe path */
		inner = get_cheapest_parallel_safe_total_inner(innerrel->pathlist);
		if (inner == NULL || PATH_REQ_OUTER(partial))
			return;
		cpath = MakeJoinPath(root, joinrel, outerrel, innerrel, partial, inner, jointype, extra,
							 true);
		if (cpath != NULL && cpath->path.parallel_safe)
			GpuopsAddPartialPath(joinrel, &cpath->path);
	}
}

static Plan *
PlanGpuHashJoinPathImpl(PlannerInfo *, RelOptInfo *rel, CustomPath *best_path, List *tlist, List *,
						List *custom_plans)
{
	CustomScan *cscan = GpuopsNewEquiJoinScan(rel, best_path, tlist, custom_plans,
											  &gpu_hashjoin_scan_methods);

	GpuopsMatchScanNullingRels(cscan, best_path);
	return &cscan->scan.plan;
}

static Plan *
PlanGpuHashJoinPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
					List *clauses, List *custom_plans)
{
	return GpuopsGuard("PlanCustomPath", PlanGpuHashJoinPathImpl, root, rel, best_path, tlist,
					   clauses, custom_plans);
}
