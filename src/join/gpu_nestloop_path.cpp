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

#include "access/stratnum.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
}

#include "boundary.h"
#include "device.h"
#include "device_expr.h"
#include "expr_eval.hpp"
#include "gpu_nestloop.h"
#include "guc.h"
#include "plan_why.h"
#include "join_plan.h"
#include "qual_order.h"

/*
 * A device program step per pair costs about a thousandth of what
 * PostgreSQL's executor charges per operator (cpu_operator_cost): an H100
 * tests some 10^10 pairs a second where the executor tests 10^7.
 */
#define GPUNL_STEP_COST_RATIO 0.001

static Plan *PlanGpuNestLoopPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
								 List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods gpu_nestloop_path_methods = {
	GPUNESTLOOP_NAME, PlanGpuNestLoopPath,
	NULL, /* ReparameterizeCustomPathByChild: not partitionwise */
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

/*
 * The indexed form (gpuops_device.h, GpuopsNestLoopIndex): one inner column
 * the join bounds from below and/or above by expressions of the outer row.
 */
typedef struct RangeIndex
{
	int column; /* program inner column */
	bool is_float;
	RestrictInfo *lower; /* column >(=) bound; NULL: none */
	RestrictInfo *upper; /* column <(=) bound; NULL: none */
	bool lower_strict;
	bool upper_strict;
	GpuopsExprProgram lower_prog;
	GpuopsExprProgram upper_prog;
	Selectivity sel; /* of the pairs, by the two clauses */
} RangeIndex;

/* Types whose words compare alike: the integers, the floats, else one type. */
static Oid
ValueDomain(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return INT8OID;
		case FLOAT4OID:
		case FLOAT8OID:
			return FLOAT8OID;
		default:
			return type;
	}
}

/*
 * Is rinfo `column OP bound` (either way round), the column one of
 * col_exprs (an input's output columns), OP <, <=, > or >= of the column
 * type's default btree family, the bound an expression of bound_relids
 * only, of the same value domain?  Sets the column (its index in
 * col_exprs), the bound and which bound it is.
 */
static bool
RangeShape(RestrictInfo *rinfo, Relids bound_relids, List *col_exprs, int *col, Node **bound,
		   bool *is_lower, bool *strict)
{
	OpExpr *op = (OpExpr *) rinfo->clause;
	bool commuted;
	int strategy;
	Oid coltype, opclass;

	if (!is_opclause(op) || list_length(op->args) != 2)
		return false;
	if (bms_is_subset(rinfo->right_relids, bound_relids) &&
		(*col = GpuopsFindColumn(col_exprs, (Node *) linitial(op->args))) >= 0)
	{
		*bound = (Node *) lsecond(op->args);
		commuted = false;
	}
	else if (bms_is_subset(rinfo->left_relids, bound_relids) &&
			 (*col = GpuopsFindColumn(col_exprs, (Node *) lsecond(op->args))) >= 0)
	{
		*bound = (Node *) linitial(op->args);
		commuted = true;
	}
	else
		return false;
	coltype = exprType((Node *) list_nth(col_exprs, *col));
	if (!DeviceExprWordsOrdered(coltype) || ValueDomain(coltype) != ValueDomain(exprType(*bound)) ||
		contain_volatile_functions(*bound))
		return false;
	opclass = GetDefaultOpClass(coltype, BTREE_AM_OID);
	if (!OidIsValid(opclass))
		return false;
	strategy = get_op_opfamily_strategy(op->opno, get_opclass_family(opclass));
	if (commuted && strategy != BTEqualStrategyNumber && strategy != 0)
		strategy = BTMaxStrategyNumber + 1 - strategy; /* < <-> >, <= <-> >= */
	switch (strategy)
	{
		case BTLessStrategyNumber:
		case BTLessEqualStrategyNumber:
			*is_lower = false;
			*strict = strategy == BTLessStrategyNumber;
			return true;
		case BTGreaterStrategyNumber:
		case BTGreaterEqualStrategyNumber:
			*is_lower = true;
			*strict = strategy == BTGreaterStrategyNumber;
			return true;
		default:
			return false;
	}
}

/*
 * A bound of an inner column by the outer row (RangeShape) whose bound
 * compiles as a value program: sets the program column, which bound it is,
 * and the program.
 */
static bool
RangeClause(RestrictInfo *rinfo, RelOptInfo *outerrel, DeviceExprInputs *in, int *column,
			bool *is_lower, bool *strict, GpuopsExprProgram *prog)
{
	Node *bound;
	int icol;

	if (!RangeShape(rinfo, outerrel->relids, in->inner_exprs, &icol, &bound, is_lower, strict))
		return false;
	*column = -1;
	for (int c = 0; c < in->ninner; c++)
		if (in->inner_cols[c] == icol)
			*column = c;
	return *column >= 0 && DeviceExprCompileValue((Expr *) bound, in, prog);
}

/*
 * Would the other order of the inputs bound one column of this outer side
 * from below and above (a band, `o.x BETWEEN i.lo AND i.hi` seen from i)?
 */
static bool
OuterHasBand(List *restrictlist, RelOptInfo *innerrel, Path *outer)
{
	List *exprs = outer->pathtarget->exprs;
	int *found = (int *) palloc0(sizeof(int) * Max(list_length(exprs), 1));
	bool band = false;
	ListCell *lc;

	foreach (lc, restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Node *bound;
		bool is_lower, strict;
		int c;

		if (RangeShape(rinfo, innerrel->relids, exprs, &c, &bound, &is_lower, &strict))
		{
			found[c] |= is_lower ? 1 : 2;
			band |= found[c] == 3;
		}
	}
	pfree(found);
	return band;
}

/* Can a clause's evaluation raise an error (as far as its program shows)? */
static bool
ClauseMayFail(RestrictInfo *rinfo, DeviceExprInputs *in)
{
	DeviceExprInputs alone;
	GpuopsExprProgram *prog = (GpuopsExprProgram *) palloc(sizeof(GpuopsExprProgram));
	bool fails = false;

	memset(&alone, 0, sizeof(alone));
	alone.outer_exprs = in->outer_exprs;
	alone.inner_exprs = in->inner_exprs;
	if (!DeviceExprCompile(list_make1(rinfo->clause), &alone, prog))
		fails = true;
	for (int i = 0; !fails && i < prog->nsteps; i++)
		fails = gpuops::expr_step_may_recheck(&prog->steps[i]);
	pfree(prog);
	return fails;
}

/*
 * Chooses the indexed form's column: among the inner columns the device
 * clauses bound, the one whose first lower and first upper bound leave the
 * fewest pairs by the planner's selectivity.  Only when no other join
 * clause can fail: the index skips pairs that PostgreSQL's nested loop
 * would evaluate those clauses on.
 */
static bool
FindRangeIndex(PlannerInfo *root, JoinPathExtraData *extra, RelOptInfo *outerrel,
			   List *device_rinfos, DeviceExprInputs *in, RangeIndex *best)
{
	RangeIndex *per = (RangeIndex *) palloc0(sizeof(RangeIndex) * GPUOPS_EXPR_MAX_COLS);
	GpuopsExprProgram *prog = (GpuopsExprProgram *) palloc(sizeof(GpuopsExprProgram));
	bool found = false;
	ListCell *lc;

	foreach (lc, device_rinfos)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		int c;
		bool is_lower, strict;
		RangeIndex *ix;

		if (!RangeClause(rinfo, outerrel, in, &c, &is_lower, &strict, prog))
			continue;
		ix = &per[c];
		ix->column = c;
		ix->is_float = ValueDomain(in->inner_types[c]) == FLOAT8OID;
		if (is_lower && ix->lower == NULL)
		{
			ix->lower = rinfo;
			ix->lower_strict = strict;
			ix->lower_prog = *prog;
		}
		else if (!is_lower && ix->upper == NULL)
		{
			ix->upper = rinfo;
			ix->upper_strict = strict;
			ix->upper_prog = *prog;
		}
	}
	for (int c = 0; c < in->ninner; c++)
	{
		RangeIndex *ix = &per[c];
		List *bounds = NIL;
		bool safe = true;

		if (ix->lower == NULL && ix->upper == NULL)
			continue;
		if (ix->lower)
			bounds = lappend(bounds, ix->lower);
		if (ix->upper)
			bounds = lappend(bounds, ix->upper);
		foreach (lc, device_rinfos)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

			if (!list_member_ptr(bounds, rinfo) && ClauseMayFail(rinfo, in))
				safe = false;
		}
		if (!safe)
			continue;
		/*
		 * PostgreSQL estimates the two bounds of a join clause pair
		 * independently (a third each); a range between them is usually
		 * narrow, as its own range-pair default says for restrictions.
		 */
		ix->sel = list_length(bounds) == 2
			? DEFAULT_RANGE_INEQ_SEL
			: clauselist_selectivity(root, bounds, 0, JOIN_INNER, extra->sjinfo);
		if (!found || ix->sel < best->sel)
			*best = *ix;
		found = true;
	}
	pfree(per);
	pfree(prog);
	return found;
}

/* The indexed form in the plan (none: column -1). */
static void
RangeIndexToPlan(const RangeIndex *ix, GpuopsNestLoopIndex *out)
{
	out->column = ix->column;
	out->is_float = ix->is_float;
	out->has_lower = ix->lower != NULL;
	out->lower_strict = ix->lower_strict;
	out->has_upper = ix->upper != NULL;
	out->upper_strict = ix->upper_strict;
	if (ix->lower)
		out->lower = ix->lower_prog;
	if (ix->upper)
		out->upper = ix->upper_prog;
}

static CustomPath *
MakeNestLoopPath(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel, RelOptInfo *innerrel,
				 Path *outer, Path *inner, JoinType jointype, JoinPathExtraData *extra,
				 bool partial, bool *band)
{
	List *clauses = NIL; /* decide whether a pair matches */
	List *filters = NIL; /* outer joins: applied to the joined rows */
	List *device = NIL;	 /* clauses the program holds */
	List *device_rinfos = NIL;
	List *ranges = NIL; /* the indexed form's bound clauses */
	GpuNestLoopPlan *plan = (GpuNestLoopPlan *) palloc0(sizeof(GpuNestLoopPlan));
	PlanFields fields;
	RangeIndex ix = {};
	double step_cost = cpu_operator_cost * GPUNL_STEP_COST_RATIO;
	double loop_cost;
	bool recheck_all = false;
	DeviceExprInputs in;
	GpuopsExprProgram *prog = (GpuopsExprProgram *) palloc(sizeof(GpuopsExprProgram));
	ListCell *lc;
	CustomPath *cpath;
	QualCost qual_cost;
	double orows, irows, rows, pairs, mb;

	*band = false;
	plan->index.column = -1; /* no indexed form unless one is chosen below */
	memset(&in, 0, sizeof(in));
	in.outer_exprs = outer->pathtarget->exprs;
	in.inner_exprs = inner->pathtarget->exprs;
	foreach (lc, GpuopsOrderQuals(root, extra->restrictlist))
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo->pseudoconstant)
			return NULL; /* gating quals: PostgreSQL's plans handle them */
		if (IsEquiJoinClause(rinfo, outerrel, innerrel))
			return NULL; /* the hash and merge joins' case */
		/* as createplan.c: pushed-down clauses of outer joins filter joined rows */
		if (IS_OUTER_JOIN(jointype) && RINFO_IS_PUSHED_DOWN(rinfo, joinrel->relids))
		{
			filters = lappend(filters, rinfo->clause);
			continue;
		}
		clauses = lappend(clauses, rinfo->clause);
		if (DeviceExprCompile(list_make1(rinfo->clause), &in, prog))
		{
			device = lappend(device, rinfo->clause);
			device_rinfos = lappend(device_rinfos, rinfo);
		}
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
	orows = Max(outer->rows, 1.0); /* per process, for a partial path */
	irows = Max(inner->rows, 1.0);
	pairs = orows * irows;
	rows = partial ? clamp_row_est(joinrel->rows / GpuopsParallelDivisor(outer)) : joinrel->rows;
	mb = (orows * in.nouter + irows * in.ninner) * 9.0 / (1024.0 * 1024.0);
	cost_qual_eval(&qual_cost, recheck_all ? list_concat_copy(clauses, filters) : filters, root);

	/*
	 * The blocked loop tests every pair.  The indexed one sorts the inner
	 * side, runs the bound programs and a binary search per outer row, and
	 * tests the pairs its range leaves; chosen where that is cheaper.  A
	 * clause left to PostgreSQL might fail on a pair the range skips, so
	 * then there is no index.
	 */
	loop_cost = pairs * prog->nsteps * step_cost;
	if (gpuops_enable_nestloop_index && !recheck_all &&
		FindRangeIndex(root, extra, outerrel, device_rinfos, &in, &ix))
	{
		double log_inner = log2(irows + 1.0);
		double index_cost = irows * log_inner * 4 * step_cost +
			orows * (log_inner + ix.lower_prog.nsteps + ix.upper_prog.nsteps) * step_cost +
			pairs * ix.sel * prog->nsteps * step_cost;

		if (index_cost < loop_cost)
		{
			loop_cost = index_cost;
			RangeIndexToPlan(&ix, &plan->index);
			*band = ix.lower != NULL && ix.upper != NULL;
			if (ix.lower)
				ranges = lappend(ranges, ix.lower->clause);
			if (ix.upper)
				ranges = lappend(ranges, ix.upper->clause);
		}
	}

	cpath = GpuopsNewJoinPath(joinrel, outer, inner, partial, &gpu_nestloop_path_methods);
	cpath->path.pathkeys = NIL;
	cpath->path.rows = rows;
	cpath->path.startup_cost = inner->total_cost + gpuops_startup_cost + irows * gpuops_tuple_cost;
	cpath->path.total_cost = cpath->path.startup_cost + outer->total_cost +
		orows * gpuops_tuple_cost + mb * gpuops_transfer_cost + loop_cost +
		rows * (cpu_tuple_cost + qual_cost.per_tuple) + qual_cost.startup;
	if (partial)
	{
		cpath->path.startup_cost += gpuops_parallel_startup_cost;
		cpath->path.total_cost += gpuops_parallel_startup_cost;
	}
	plan->jointype = jointype;
	plan->recheck_all = recheck_all;
	plan->nouter = in.nouter;
	plan->ninner = in.ninner;
	memcpy(plan->outer_cols, in.outer_cols, sizeof(plan->outer_cols));
	memcpy(plan->inner_cols, in.inner_cols, sizeof(plan->inner_cols));
	plan->param_slots = in.param_slots;
	plan->program = *prog;
	GpuNestLoopPlanFields(fields, plan);
	pfree(plan);
	/* the plan's data, then custom_exprs to be */
	cpath->custom_private = list_make2(fields.list(),
									   list_make5(clauses, filters, in.params, device, ranges));
	return cpath;
}

void
GpuNestLoopAddPaths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	Path *outer = outerrel->cheapest_total_path;
	Path *inner = innerrel->cheapest_total_path;
	CustomPath *cpath;
	bool band;

	if (!GpuopsPlanningAllowedFor(GPUNESTLOOP_NAME, gpuops_enable_nestloop,
								  "gpuops.enable_nestloop"))
		return;
	/* RIGHT and FULL would need every inner row's match state across outer batches */
	if (jointype != JOIN_INNER && jointype != JOIN_LEFT && jointype != JOIN_SEMI &&
		jointype != JOIN_ANTI)
		return;
	if (outer == NULL || inner == NULL || PATH_REQ_OUTER(outer) || PATH_REQ_OUTER(inner))
		return;
	/* the device's work is the pairs: a join of two small inputs can be large */
	if (outer->rows * inner->rows < gpuops_min_rows)
	{
		GpuopsDecline(GPUNESTLOOP_NAME, "%.0f pairs of rows, under gpuops.min_rows (%d)",
					  outer->rows * inner->rows, gpuops_min_rows);
		return;
	}
	cpath = MakeNestLoopPath(root, joinrel, outerrel, innerrel, outer, inner, jointype, extra,
							 false, &band);
	if (cpath == NULL)
		return;

	/*
	 * An inner join is planned in both orders.  Where the other order can
	 * index a band (one column bounded from both sides) and this one cannot,
	 * leave the join to it: the band tests a sliver of the pairs, but the
	 * estimate of the joined rows (PostgreSQL's, a ninth of all pairs for
	 * two inequalities) usually dwarfs that difference in cost, and the
	 * path with the cheaper start would win.
	 */
	if (jointype == JOIN_INNER && !band && gpuops_enable_nestloop_index &&
		OuterHasBand(extra->restrictlist, innerrel, outer))
		return;
	GpuopsAddPath(joinrel, &cpath->path);

	/*
	 * In parallel: each process loads the whole inner side and tests its
	 * share of a partial outer path against it, under Gather.
	 */
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL)
	{
		Path *partial = (Path *) linitial(outerrel->partial_pathlist);

		inner = get_cheapest_parallel_safe_total_inner(innerrel->pathlist);
		if (inner == NULL || PATH_REQ_OUTER(partial))
			return;
		cpath = MakeNestLoopPath(root, joinrel, outerrel, innerrel, partial, inner, jointype, extra,
								 true, &band);
		if (cpath != NULL && cpath->path.parallel_safe)
			GpuopsAddPartialPath(joinrel, &cpath->path);
	}
}

static Plan *
PlanGpuNestLoopPathImpl(PlannerInfo *, RelOptInfo *rel, CustomPath *best_path, List *tlist, List *,
						List *custom_plans)
{
	CustomScan *cscan = GpuopsNewJoinScan(rel, best_path, tlist, custom_plans,
										  &gpu_nestloop_scan_methods);

	cscan->custom_private = (List *) copyObject(linitial(best_path->custom_private));
	cscan->custom_exprs = (List *) copyObject(lsecond(best_path->custom_private));
	GpuopsMatchScanNullingRels(cscan, best_path);
	return &cscan->scan.plan;
}

static Plan *
PlanGpuNestLoopPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
					List *clauses, List *custom_plans)
{
	return GpuopsGuard("PlanCustomPath", PlanGpuNestLoopPathImpl, root, rel, best_path, tlist,
					   clauses, custom_plans);
}
