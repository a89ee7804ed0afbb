/*
 * gpu_agg_inputs.cpp
 *    GpuAgg planning, what the device can take and how the child feeds it:
 *    the group keys (their kind, and how they reach the device: values,
 *    dictionary numbers, ranks), the columns taken from a group's first
 *    row, and each aggregate (its kind, final step, argument and FILTER, as
 *    child columns or a device program computing the argument).
 *    gpu_agg_path.cpp costs and makes the paths from what this file
 *    collects (gpu_agg_inputs.h): deciding what the device takes is a job
 *    of its own, and the longer one.
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_type_d.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"
#include "utils/lsyscache.h"
#include "utils/fmgroids.h"
#include "utils/typcache.h"
}

#include "agg_common.hpp"
#include "device_expr.h"
#include "gpu_agg.h"
#include "gpu_agg_inputs.h"
#include "guc.h"
#include "plan_why.h"
#include "types.h"

/* gpu_agg_inputs.h */
bool
GpuAggCollectAggrefs(Node *node, List **aggs)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		*aggs = list_append_unique(*aggs, node);
		return false; /* no Aggref nests in another at one query level */
	}
	/* through void (*)(void), which -Wcast-function-type accepts */
	return expression_tree_walker(node, (bool (*)())(void (*)(void)) GpuAggCollectAggrefs, aggs);
}

/*
 * As pull_var_clause(node, PVC_INCLUDE_AGGREGATES | PVC_INCLUDE_PLACEHOLDERS),
 * appending to c->found, but without descending into a subtree equal to
 * one of c->keys.
 */
typedef struct NonKeyVars
{
	List *keys;
	List *found;
} NonKeyVars;

static bool
NonKeyVarsWalker(Node *node, NonKeyVars *c)
{
	if (node == NULL || list_member(c->keys, node))
		return false;
	if (IsA(node, Var) || IsA(node, PlaceHolderVar) || IsA(node, Aggref) || IsA(node, GroupingFunc))
	{
		c->found = lappend(c->found, node);
		return false;
	}
	return expression_tree_walker(node, (bool (*)())(void (*)(void)) NonKeyVarsWalker, c);
}

static void
CollectNonKeyVars(Node *node, List *keys, List **found)
{
	NonKeyVars c = {keys, *found};

	(void) NonKeyVarsWalker(node, &c);
	*found = c.found;
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
static bool
DeviceArgument(Expr *arg, GpuopsAggKind kind, List **child_exprs, DeviceExprInputs *in,
			   GpuopsExprProgram *prog)
{
	List *cand;
	ListCell *lc;

	if (!gpuops_enable_device_exprs || IsA(arg, Var) || list_member(*child_exprs, arg) ||
		(kind != GPUOPS_AGG_SUM_INT && kind != GPUOPS_AGG_SUMSQ_INT && kind != GPUOPS_AGG_FLOAT))
		return false;
	cand = list_copy(*child_exprs);
	foreach (lc, pull_var_clause((Node *) arg, PVC_INCLUDE_PLACEHOLDERS))
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
	int i = 0;
	ListCell *lc;

	foreach (lc, *exprs)
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
	Const *c;

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
bool
GpuAggGroupKeyKind(SortGroupClause *sgc, Expr *expr, GpuopsKeyKind *kind, GpuAggKeyEncoding *enc,
				   Oid *collation)
{
	Oid type = exprType((Node *) expr);
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
		Oid coll = exprCollation((Node *) expr);

		/* deterministic collations call equal only identical bytes */
		if (!OidIsValid(coll) || !get_collation_isdeterministic(coll))
			return false;
		*kind = GPUOPS_KEY_INT8;
		*enc = GPUAGG_KEY_DICTIONARY;
		return true;
	}
	if (type == NUMERICOID ||
		(type == BPCHAROID && OidIsValid(*collation) && get_collation_isdeterministic(*collation)))
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
		GpuopsDecline(GPUAGG_NAME,
					  "float sums, averages and variances differ in "
					  "rounding from a serial plan's (gpuops.enable_float_aggs is off)");
		return false;
	}
	/* classified by function; the aggregate's own DISTINCT or kind decides the rest */
	if (aggref->aggdistinct != NIL)
		d->kind = GPUOPS_AGG_COUNT_DISTINCT;
	if (gpuops_agg_ordered(d->kind) !=
		(aggref->aggdistinct != NIL || aggref->aggkind == AGGKIND_ORDERED_SET))
		return false;
	/*
	 * The collation text compares under: min/max call text_smaller and
	 * text_larger with the aggregate's; DISTINCT and WITHIN GROUP sort
	 * under the argument's own.
	 */
	if (*arg != NULL)
		d->collation = (d->kind == GPUOPS_AGG_MIN || d->kind == GPUOPS_AGG_MAX)
			? aggref->inputcollid
			: exprCollation((Node *) *arg);
	return true;
}

/*
 * How the aggregate's argument reaches the device (d->value_kind,
 * d->arg_enc), and the child columns it reads: the argument's (or, computed
 * on the device, *computed with its program), count(x)'s "x IS NOT NULL",
 * the FILTER's.  False when the argument has no device form.
 */
static bool
AggregateInputs(GpuAggBuild *b, Aggref *aggref, GpuAggPlanAgg *d, Expr *arg,
				GpuopsExprProgram *prog, bool *computed)
{
	Oid argtype = d->arg_type;
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
					!b->have_percentile
				? GPUAGG_KEY_DICTIONARY
				: GPUAGG_KEY_RANKED;
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
		NullTest *nt = makeNode(NullTest);

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
AddAggregate(GpuAggBuild *b, Aggref *aggref)
{
	GpuAggPlanAgg *d = &b->plan->aggs[b->plan->naggs];
	GpuopsExprProgram prog;
	Expr *arg;
	bool computed;

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

bool
GpuAggCollectInputs(PlannerInfo *root, PathTarget *target, Node *having, GroupPathExtraData *extra,
					bool partial, GpuAggBuild *b, List **scan_exprs)
{
	Query *parse = root->parse;
	List *aggrefs = NIL;
	List *extras = NIL;
	List *vars = NIL;
	ListCell *lc;

	b->plan = (GpuAggPlan *) palloc0(sizeof(GpuAggPlan));
	b->partial = partial;
	b->order_arg_col = b->order_filter_col = b->order_desc = -1;
	b->hashable = true;

	foreach (lc, parse->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		Expr *expr = (Expr *) get_sortgroupclause_expr(sgc, extra->targetList);
		GpuAggKeyPlan *key = &b->plan->keys[b->plan->nkeys];

		if (b->plan->nkeys == GPUOPS_MAX_SORT_KEYS ||
			!GpuAggGroupKeyKind(sgc, expr, &key->kind, &key->enc, &key->collation))
			return false;
		b->child_exprs = lappend(b->child_exprs, expr);
		key->type = exprType((Node *) expr);
		b->plan->nkeys++;
	}

	GpuAggCollectAggrefs((Node *) target->exprs, &aggrefs);
	GpuAggCollectAggrefs(having, &aggrefs);
	if (list_length(aggrefs) > GPUOPS_MAX_AGGS)
		return false;

	/*
	 * columns outside aggregates that are not group keys: from a group's
	 * first row.  Not the Vars inside a group key expression: the key is
	 * its own column, and the input may not have those Vars at all (an
	 * Append's children compute upper(a) and return no a).
	 */
	CollectNonKeyVars((Node *) target->exprs, b->child_exprs, &vars);
	CollectNonKeyVars(having, b->child_exprs, &vars);
	foreach (lc, vars)
	{
		Node *v = (Node *) lfirst(lc);

		if (!IsA(v, Aggref) && !list_member(b->child_exprs, v))
			extras = list_append_unique(extras, v);
	}
	b->child_exprs = list_concat(b->child_exprs, extras);
	b->plan->nextra = list_length(extras);

	/*
	 * The device orders each group's rows by the ordered aggregates' shared
	 * input: with a percentile among them, text must come as ranks, also for
	 * a count(DISTINCT) of it (which alone needs only equality).
	 */
	foreach (lc, aggrefs)
		b->have_percentile |= lfirst_node(Aggref, lc)->aggkind == AGGKIND_ORDERED_SET;
	foreach (lc, aggrefs)
		if (!AddAggregate(b, lfirst_node(Aggref, lc)))
			return false;

	/* the scan tuple: group keys, other columns, aggregates */
	*scan_exprs = list_concat(list_copy_head(b->child_exprs, b->plan->nkeys + b->plan->nextra),
							  aggrefs);
	return true;
}
