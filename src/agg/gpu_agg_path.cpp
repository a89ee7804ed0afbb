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
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_type_d.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/tlist.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/fmgroids.h"
#include "utils/typcache.h"
}

#include "agg_common.hpp"
#include "boundary.h"
#include "device.h"
#include "device_expr.h"
#include "gpu_agg.h"
#include "gpu_stage.h"
#include "guc.h"
#include "qual_order.h"
#include "join_plan.h"
#include "types.h"

static Plan *PlanGpuAggPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods gpu_agg_path_methods = {
	GPUAGG_NAME,
	PlanGpuAggPath,
};

static bool
CollectAggrefs(Node *node, List **aggs)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		*aggs = list_append_unique(*aggs, node);
		return false;			/* no Aggref nests in another at one query level */
	}
	/* through void (*)(void), which -Wcast-function-type accepts */
	return expression_tree_walker(node, (bool (*) ()) (void (*)(void)) CollectAggrefs, aggs);
}

/*
 * An aggregate's input the device computes (gpu_agg.h, "computed
 * inputs"): the argument of a sum, avg, variance or stddev of integers or
 * floats that is an expression, not a column, and compiles as a value
 * program (device_expr.h) over the child's columns, which then carry its
 * columns instead of its value.  A child that outputs plain columns can be
 * read directly from the heap (heap_source.cpp) and is not projected row by
 * row.  in: the programs' shared columns; false leaves everything as it
 * was.
 */
/*
 * As pull_var_clause(node, PVC_INCLUDE_AGGREGATES | PVC_INCLUDE_PLACEHOLDERS),
 * appending to c->found, but without descending into a subtree equal to
 * one of c->keys.
 */
typedef struct NonKeyVars
{
	List	   *keys;
	List	   *found;
} NonKeyVars;

static bool
NonKeyVarsWalker(Node *node, NonKeyVars *c)
{
	if (node == NULL || list_member(c->keys, node))
		return false;
	if (IsA(node, Var) || IsA(node, PlaceHolderVar) || IsA(node, Aggref) ||
		IsA(node, GroupingFunc))
	{
		c->found = lappend(c->found, node);
		return false;
	}
	return expression_tree_walker(node, (bool (*) ()) (void (*)(void)) NonKeyVarsWalker, c);
}

static void
CollectNonKeyVars(Node *node, List *keys, List **found)
{
	NonKeyVars	c = {keys, *found};

	(void) NonKeyVarsWalker(node, &c);
	*found = c.found;
}

static bool
DeviceArgument(Expr *arg, GpuopsAggKind kind, List **child_exprs, DeviceExprInputs *in,
			   GpuopsExprProgram *prog)
{
	List	   *cand;
	ListCell   *lc;

	if (!gpuops_enable_device_exprs || IsA(arg, Var) || list_member(*child_exprs, arg) ||
		(kind != GPUOPS_AGG_SUM_INT && kind != GPUOPS_AGG_SUMSQ_INT && kind != GPUOPS_AGG_FLOAT))
		return false;
	cand = list_copy(*child_exprs);
	foreach(lc, pull_var_clause((Node *) arg, PVC_INCLUDE_PLACEHOLDERS))
	{
		if (!IsA(lfirst(lc), Var))
			return false;
		cand = list_append_unique(cand, lfirst(lc));
	}
	in->outer_exprs = cand;
	if (!DeviceExprCompileInput(arg, in, prog))
	{
		in->outer_exprs = *child_exprs;
		return false;
	}
	*child_exprs = cand;
	return true;
}

/* The child column computing expr: an existing one, or a new one. */
static int
ChildColumn(List **exprs, Expr *expr)
{
	int			i = 0;
	ListCell   *lc;

	foreach(lc, *exprs)
	{
		if (equal(lfirst(lc), expr))
			return i;
		i++;
	}
	*exprs = lappend(*exprs, expr);
	return i;
}

/*
 * count(DISTINCT x): x's DISTINCT must use the type's own equality (which
 * the normalized sub-key reproduces).  Sets *arg.
 */
static bool
DistinctArg(Aggref *aggref, Expr **arg)
{
	SortGroupClause *sgc;
	TypeCacheEntry *tce;

	if (aggref->aggfnoid != F_COUNT_ANY || list_length(aggref->args) != 1 ||
		list_length(aggref->aggdistinct) != 1)
		return false;
	*arg = linitial_node(TargetEntry, aggref->args)->expr;
	sgc = linitial_node(SortGroupClause, aggref->aggdistinct);
	tce = lookup_type_cache(exprType((Node *) *arg), TYPECACHE_EQ_OPR);
	return OidIsValid(sgc->eqop) && sgc->eqop == tce->eq_opr;
}

/*
 * percentile_disc / percentile_cont(f) WITHIN GROUP (ORDER BY x [DESC]):
 * one constant fraction in [0, 1] (others, NULL included, keep PostgreSQL's
 * plan and its error or NULL), ordered by the type's own < or >.  Sets
 * *arg, *fraction, *desc.
 */
static bool
OrderedSetArg(Aggref *aggref, Expr **arg, double *fraction, bool *desc)
{
	SortGroupClause *sgc;
	TypeCacheEntry *tce;
	Const	   *c;

	if (list_length(aggref->args) != 1 || list_length(aggref->aggorder) != 1 ||
		list_length(aggref->aggdirectargs) != 1 || !IsA(linitial(aggref->aggdirectargs), Const))
		return false;
	c = linitial_node(Const, aggref->aggdirectargs);
	if (c->consttype != FLOAT8OID || c->constisnull)
		return false;
	*fraction = DatumGetFloat8(c->constvalue);
	if (!(*fraction >= 0.0 && *fraction <= 1.0))
		return false;
	*arg = linitial_node(TargetEntry, aggref->args)->expr;
	sgc = linitial_node(SortGroupClause, aggref->aggorder);
	tce = lookup_type_cache(exprType((Node *) *arg), TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	if (OidIsValid(sgc->sortop) && sgc->sortop == tce->lt_opr)
		*desc = false;
	else if (OidIsValid(sgc->sortop) && sgc->sortop == tce->gt_opr)
		*desc = true;
	else
		return false;
	return true;
}

/* The group key's kind and encoding, or false when the device cannot group it. */
static bool
GroupKeyKind(SortGroupClause *sgc, Expr *expr, GpuopsKeyKind *kind, GpuAggKeyEncoding *enc,
			 Oid *collation)
{
	Oid			type = exprType((Node *) expr);
	TypeCacheEntry *tce = lookup_type_cache(type, TYPECACHE_EQ_OPR);

	/* only the type's own equality: another opclass may group differently */
	if (!OidIsValid(sgc->eqop) || sgc->eqop != tce->eq_opr)
		return false;
	*enc = GPUAGG_KEY_VALUE;
	*collation = exprCollation((Node *) expr);
	if (GpuopsFixedKeyKind(type, kind))
		return true;
	if (type == TEXTOID || type == VARCHAROID)
	{
		Oid			coll = exprCollation((Node *) expr);

		/* deterministic collations call equal only identical bytes */
		if (!OidIsValid(coll) || !get_collation_isdeterministic(coll))
			return false;
		*kind = GPUOPS_KEY_INT8;
		*enc = GPUAGG_KEY_DICTIONARY;
		return true;
	}
	if (type == NUMERICOID ||
		(type == BPCHAROID && OidIsValid(*collation) &&
		 get_collation_isdeterministic(*collation)))
	{
		/*
		 * equal numerics (1.0, 1.00) and equal char(n) values (trailing
		 * blanks aside) are one group: ranks with ties
		 */
		*kind = GPUOPS_KEY_INT8;
		*enc = GPUAGG_KEY_RANKED;
		return true;
	}
	return false;
}

/* What a GpuAgg path reads and computes, gathered aggregate by aggregate. */
typedef struct AggBuild
{
	GpuAggPlan *plan;			/* keys and aggregates so far */
	List	   *child_exprs;	/* the child's output (gpu_agg.h) */
	bool		partial;		/* partial states, per parallel worker */
	bool		have_percentile;	/* text inputs of ordered aggregates come as ranks */
	int			order_arg_col;	/* the ordered aggregates' shared input */
	int			order_filter_col;
	int			order_desc;		/* their direction, once a percentile sets it */
	bool		hashable;		/* every aggregate's state suits the hash strategy */
	DeviceExprInputs prog_in;	/* computed inputs: their columns */
	List	   *programs;		/* per aggregate its program (a list), or NIL */
	List	   *prog_exprs;		/* and its argument, or NULL */
} AggBuild;

/*
 * An aggregate's kind, final step, argument (*arg, NULL for count(*)) and
 * the collation it compares text under, into d; false when the device
 * cannot compute it.
 */
static bool
ClassifyAggregate(Aggref *aggref, GpuAggPlanAgg *d, Expr **arg)
{
	*arg = NULL;
	d->arg_type = InvalidOid;
	if (aggref->agglevelsup != 0)
		return false;
	if (aggref->aggkind == AGGKIND_ORDERED_SET)
	{
		if (!OrderedSetArg(aggref, arg, &d->fraction, &d->desc))
			return false;
	}
	else if (aggref->aggkind != AGGKIND_NORMAL)
		return false;
	else if (aggref->aggdistinct != NIL)
	{
		if (!DistinctArg(aggref, arg))
			return false;
	}
	else if (aggref->aggorder != NIL)
		return false;
	else if (!aggref->aggstar)
	{
		if (list_length(aggref->args) != 1)
			return false;
		*arg = linitial_node(TargetEntry, aggref->args)->expr;
	}
	if (*arg != NULL)
		d->arg_type = exprType((Node *) *arg);
	if (!GpuAggClassify(aggref->aggfnoid, d->arg_type, &d->kind, &d->final, &d->final_fn))
		return false;
	if (d->kind == GPUOPS_AGG_FLOAT && !gpuops_enable_float_aggs)
	{
		elog(DEBUG1, "gpuops: GpuAgg not used: float sums, averages and variances differ in "
			 "rounding from a serial plan's (gpuops.enable_float_aggs is off)");
		return false;
	}
	/* classified by function; the aggregate's own DISTINCT or kind decides the rest */
	if (aggref->aggdistinct != NIL)
		d->kind = GPUOPS_AGG_COUNT_DISTINCT;
	if (gpuops_agg_ordered(d->kind) != (aggref->aggdistinct != NIL ||
										aggref->aggkind == AGGKIND_ORDERED_SET))
		return false;
	/*
	 * The collation text compares under: min/max call text_smaller and
	 * text_larger with the aggregate's; DISTINCT and WITHIN GROUP sort
	 * under the argument's own.
	 */
	if (*arg != NULL)
		d->collation = (d->kind == GPUOPS_AGG_MIN || d->kind == GPUOPS_AGG_MAX) ?
			aggref->inputcollid : exprCollation((Node *) *arg);
	return true;
}

/*
 * How the aggregate's argument reaches the device (d->value_kind,
 * d->arg_enc), and the child columns it reads: the argument's (or, computed
 * on the device, *computed with its program), count(x)'s "x IS NOT NULL",
 * the FILTER's.  False when the argument has no device form.
 */
static bool
AggregateInputs(AggBuild *b, Aggref *aggref, GpuAggPlanAgg *d, Expr *arg,
				GpuopsExprProgram *prog, bool *computed)
{
	Oid			argtype = d->arg_type;
	GpuopsAggKind kind = d->kind;
	GpuAggFinal final = d->final;

	*computed = false;
	d->value_kind = GPUOPS_KEY_INT8;
	d->arg_enc = GPUAGG_KEY_VALUE;
	if (kind != GPUOPS_AGG_COUNT)
	{
		if (GpuopsFixedKeyKind(argtype, &d->value_kind))
			d->arg_enc = GPUAGG_KEY_VALUE;
		else if (argtype == NUMERICOID &&
				 (final == GPUAGG_FINAL_SUM_SCALED || final == GPUAGG_FINAL_AVG_SCALED ||
				  final == GPUAGG_FINAL_VAR_SCALED))
		{
			/*
			 * Scaled integers on the device, numerics on the host where
			 * they do not fit (gpu_agg_numeric.cpp).  No partial state:
			 * numeric_avg_serialize's format is not built here, and the
			 * host path's states are not serialized.
			 */
			if (b->partial)
				return false;
			d->arg_enc = GPUAGG_KEY_SCALED;
		}
		else if (argtype == NUMERICOID &&
				 (kind == GPUOPS_AGG_MIN || kind == GPUOPS_AGG_MAX ||
				  kind == GPUOPS_AGG_COUNT_DISTINCT || kind == GPUOPS_AGG_PERCENTILE_DISC))
		{
			/* ranks in numeric order, equal values equal ranks (gpu_agg_dict.cpp) */
			d->arg_enc = GPUAGG_KEY_RANKED;
		}
		else if ((argtype == TEXTOID || argtype == BPCHAROID) &&
				 (kind == GPUOPS_AGG_MIN || kind == GPUOPS_AGG_MAX ||
				  kind == GPUOPS_AGG_COUNT_DISTINCT || kind == GPUOPS_AGG_PERCENTILE_DISC) &&
				 OidIsValid(d->collation) && get_collation_isdeterministic(d->collation))
		{
			/*
			 * Text as numbers (gpu_agg_dict.cpp): min, max and
			 * percentile_disc need the collation's order (ranks),
			 * count(DISTINCT) only equality (first-seen numbers).
			 */
			/* bpchar's equality ignores trailing blanks: ranks, ties equal */
			d->arg_enc = kind == GPUOPS_AGG_COUNT_DISTINCT && argtype == TEXTOID &&
				!b->have_percentile ? GPUAGG_KEY_DICTIONARY : GPUAGG_KEY_RANKED;
		}
		else
			return false;
		if (d->arg_enc == GPUAGG_KEY_VALUE)
			*computed = DeviceArgument(arg, kind, &b->child_exprs, &b->prog_in, prog);
		if (!*computed)
			d->arg_col = ChildColumn(&b->child_exprs, arg);
	}
	else if (arg != NULL)
	{
		/* count(x) counts the rows where x (the datum, even a row) is not NULL */
		NullTest   *nt = makeNode(NullTest);

		nt->arg = arg;
		nt->nulltesttype = IS_NOT_NULL;
		nt->argisrow = false;
		nt->location = -1;
		d->notnull_col = ChildColumn(&b->child_exprs, (Expr *) nt);
	}
	if (aggref->aggfilter != NULL)
		d->filter_col = ChildColumn(&b->child_exprs, aggref->aggfilter);
	return true;
}

/* One aggregate of the node, after those before it; false when it cannot be one. */
static bool
AddAggregate(AggBuild *b, Aggref *aggref)
{
	GpuAggPlanAgg *d = &b->plan->aggs[b->plan->naggs];
	GpuopsExprProgram prog;
	Expr	   *arg;
	bool		computed;

	memset(d, 0, sizeof(*d));
	d->arg_col = d->filter_col = d->notnull_col = -1;
	if (!ClassifyAggregate(aggref, d, &arg) ||
		!AggregateInputs(b, aggref, d, arg, &prog, &computed))
		return false;
	if (gpuops_agg_ordered(d->kind))
	{
		/*
		 * The device orders each group's rows by one input: every ordered
		 * aggregate must read the same one, under the same FILTER, in the
		 * same direction.
		 */
		if (b->order_arg_col >= 0 &&
			(d->arg_col != b->order_arg_col || d->filter_col != b->order_filter_col))
			return false;
		b->order_arg_col = d->arg_col;
		b->order_filter_col = d->filter_col;
		if (d->kind != GPUOPS_AGG_COUNT_DISTINCT)
		{
			if (b->order_desc >= 0 && b->order_desc != (int) d->desc)
				return false;
			b->order_desc = (int) d->desc;
		}
	}
	b->hashable &= gpuops::agg_hash_kind(d->kind, d->value_kind);
	b->programs = lappend(b->programs, computed ? DeviceExprProgramToList(&prog) : NIL);
	b->prog_exprs = lappend(b->prog_exprs, computed ? arg : NULL);
	b->plan->naggs++;
	return true;
}

/*
 * The path of an aggregation gathered in b: its cost, strategy and plan
 * data.  scan_exprs: the scan tuple's expressions.
 */
static CustomPath *
NewGpuAggPath(PlannerInfo *root, Path *input, RelOptInfo *rel, PathTarget *target,
			  Node *having, GroupPathExtraData *extra, AggBuild *b, List *scan_exprs)
{
	GpuAggPlan *plan = b->plan;
	int			nkeys = plan->nkeys;
	PlanFields	fields;
	CustomPath *cpath;
	QualCost	having_cost;
	double		in_rows,
				groups,
				mb;

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
		in_rows * list_length(b->child_exprs) * cpu_operator_cost * 0.5 +
		mb * gpuops_transfer_cost;
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
		groups * (cpu_tuple_cost + plan->naggs * cpu_operator_cost +
				  having_cost.per_tuple) + having_cost.startup;
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
MakeGpuAggPath(PlannerInfo *root, Path *input, RelOptInfo *rel, PathTarget *target,
			   Node *having, GroupPathExtraData *extra, bool partial)
{
	Query	   *parse = root->parse;
	AggBuild	b;
	List	   *aggrefs = NIL;
	List	   *extras = NIL;
	List	   *vars = NIL;
	List	   *scan_exprs;
	ListCell   *lc;

	if (input == NULL || PATH_REQ_OUTER(input))
		return NULL;
	memset(&b, 0, sizeof(b));
	b.plan = (GpuAggPlan *) palloc0(sizeof(GpuAggPlan));
	b.partial = partial;
	b.order_arg_col = b.order_filter_col = b.order_desc = -1;
	b.hashable = true;

	foreach(lc, parse->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		Expr	   *expr = (Expr *) get_sortgroupclause_expr(sgc, extra->targetList);
		GpuAggKeyPlan *key = &b.plan->keys[b.plan->nkeys];

		if (b.plan->nkeys == GPUOPS_MAX_SORT_KEYS ||
			!GroupKeyKind(sgc, expr, &key->kind, &key->enc, &key->collation))
			return NULL;
		b.child_exprs = lappend(b.child_exprs, expr);
		key->type = exprType((Node *) expr);
		b.plan->nkeys++;
	}

	CollectAggrefs((Node *) target->exprs, &aggrefs);
	CollectAggrefs(having, &aggrefs);
	if (list_length(aggrefs) > GPUOPS_MAX_AGGS)
		return NULL;

	/*
	 * columns outside aggregates that are not group keys: from a group's
	 * first row.  Not the Vars inside a group key expression: the key is
	 * its own column, and the input may not have those Vars at all (an
	 * Append's children compute upper(a) and return no a).
	 */
	CollectNonKeyVars((Node *) target->exprs, b.child_exprs, &vars);
	CollectNonKeyVars(having, b.child_exprs, &vars);
	foreach(lc, vars)
	{
		Node	   *v = (Node *) lfirst(lc);

		if (!IsA(v, Aggref) && !list_member(b.child_exprs, v))
			extras = list_append_unique(extras, v);
	}
	b.child_exprs = list_concat(b.child_exprs, extras);
	b.plan->nextra = list_length(extras);

	/*
	 * The device orders each group's rows by the ordered aggregates' shared
	 * input: with a percentile among them, text must come as ranks, also for
	 * a count(DISTINCT) of it (which alone needs only equality).
	 */
	foreach(lc, aggrefs)
		b.have_percentile |= lfirst_node(Aggref, lc)->aggkind == AGGKIND_ORDERED_SET;
	foreach(lc, aggrefs)
		if (!AddAggregate(&b, lfirst_node(Aggref, lc)))
			return NULL;

	/* the scan tuple: group keys, other columns, aggregates */
	scan_exprs = list_concat(list_copy_head(b.child_exprs, b.plan->nkeys + b.plan->nextra),
							 aggrefs);
	return NewGpuAggPath(root, input, rel, target, having, extra, &b, scan_exprs);
}

/* PostgreSQL's partially grouped rel for output_rel, when it made one. */
static RelOptInfo *
PartialGroupRel(PlannerInfo *root, RelOptInfo *output_rel)
{
	ListCell   *lc;

	foreach(lc, root->upper_rels[UPPERREL_PARTIAL_GROUP_AGG])
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
	Query	   *parse = root->parse;
	RelOptInfo *prel = PartialGroupRel(root, output_rel);
	Path	   *input;
	CustomPath *partial;
	Path	   *path;
	double		total;

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
	add_path(output_rel, path);
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
	Path	   *serial_input = (Path *) linitial(serial->custom_paths);
	List	   *child_exprs = (List *) lsecond(serial->custom_private);
	Path	   *gather;
	CustomPath *cpath;
	double		serial_read;

	if (!gpuops_enable_parallel_staging || input_rel->partial_pathlist == NIL)
		return NULL;
	gather = GpuStageGatherPath(root, input_rel, (Path *) linitial(input_rel->partial_pathlist),
								child_exprs);
	if (gather == NULL)
		return NULL;
	cpath = makeNode(CustomPath);
	memcpy(cpath, serial, sizeof(CustomPath));
	cpath->path.parallel_safe = false;	/* it has a Gather below */
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
	return expression_tree_walker(node, (bool (*) ()) (void (*)(void)) ContainsGroupingFunc, context);
}

/*
 * GROUPING() at this level, in the target, HAVING, or a subquery's
 * reference to it (a Param the planner computes here): only an Agg node
 * evaluates it.
 */
static bool
UsesGroupingFunc(PlannerInfo *root, GroupPathExtraData *extra)
{
	ListCell   *lc;

	if (ContainsGroupingFunc((Node *) extra->targetList, NULL) ||
		ContainsGroupingFunc(extra->havingQual, NULL))
		return true;
	foreach(lc, root->plan_params)
		if (ContainsGroupingFunc((Node *) lfirst_node(PlannerParamItem, lc)->item, NULL))
			return true;
	return false;
}

static void
GpuAggAddPathsImpl(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
				   GroupPathExtraData *extra)
{
	Query	   *parse = root->parse;
	CustomPath *cpath;
	CustomPath *staged;
	double		groups;

	/*
	 * minmax_aggs: the planner may replace min/max by index probes (Params)
	 * in every plan's expressions, ours included; keep its plans then.
	 */
	if (parse->groupingSets != NIL || root->minmax_aggs != NIL || parse->hasTargetSRFs ||
		input_rel->rows < gpuops_min_rows || UsesGroupingFunc(root, extra))
		return;
	cpath = MakeGpuAggPath(root, input_rel->cheapest_total_path, output_rel,
						   output_rel->reltarget, extra->havingQual, extra, false);
	if (cpath == NULL)
		return;
	groups = cpath->path.rows;
	staged = StagedGpuAggPath(root, input_rel, cpath);
	/* add_path frees a path it rejects: use cpath before */
	add_path(output_rel, &cpath->path);
	if (staged != NULL)
		add_path(output_rel, &staged->path);
	AddParallelGpuAggPath(root, input_rel, output_rel, extra, groups);
}

void
GpuAggAddPaths(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra)
{
	if (!gpuops_enable_agg || !GpuopsPlanningAllowed() || extra == NULL)
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
	PlanFields	reader(path_fields, GPUAGG_NAME);
	PlanFields	writer;
	List	   *exprs = NIL;
	ListCell   *lc;

	GpuAggPlanFields(reader, plan);
	foreach(lc, plan->prog_exprs)
		exprs = lappend(exprs, lfirst(lc) ? GpuopsOuterVarRefs((Node *) copyObject(lfirst(lc)),
																 child_exprs) : NULL);
	plan->prog_exprs = exprs;
	GpuAggPlanFields(writer, plan);
	pfree(plan);
	return (List *) copyObject(writer.list());
}

static Plan *
PlanGpuAggPathImpl(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
				   List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *priv = best_path->custom_private;
	Plan	   *child = (Plan *) linitial(custom_plans);
	Path	   *input = (Path *) linitial(best_path->custom_paths);

	/* the child computes exactly the columns the node reads (a Result if it cannot project) */
	child = change_plan_targetlist(child, GpuopsExprTlist((List *) lsecond(priv)), input->parallel_safe);
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
