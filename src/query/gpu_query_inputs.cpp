/*
 * gpu_query_inputs.cpp
 *    GpuQuery planning: can the device run this one-table block, and with
 *    which columns and programs (gpu_query.h)?  gpu_query_path.cpp costs
 *    and makes the path from what this file gathers.
 *
 * Declined, each with a DEBUG1 reason: not one plain heap table (views
 * are flattened; inheritance, partitions, TABLESAMPLE, another table AM,
 * row-level security); GROUPING SETS, GROUPING(), set-returning functions
 * in the target, min/max the planner answers from an index; a table
 * estimated under gpuops.min_rows rows (before the quals: reading is what
 * the device saves); a qual the device cannot compile, volatile, or with a
 * subplan; a group key the device cannot group (gpu_agg_inputs.h's rule,
 * and text only as a column of at most 16 bytes: bpchar(n), varchar(n)); an
 * aggregate other than count, sum, avg (of integers, numerics with a
 * static display scale, floats under gpuops.enable_float_aggs), min, max
 * (of integer-like types) without DISTINCT, ORDER BY or outer references;
 * a column outside aggregates that is not a group key; system columns;
 * more columns than one program reads (16).
 */
extern "C" {
#include "postgres.h"

#include "access/heapam.h"
#include "access/table.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_type_d.h"
#include "mb/pg_wchar.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parse_oper.h"
#include "parser/parsetree.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
}

#include "device_expr.h"
#include "device_expr_catalog.h"
#include "gpu_agg.h"
#include "gpu_agg_inputs.h"
#include "gpu_query.h"
#include "guc.h"
#include "pg_compat.h"
#include "plan_why.h"
#include "qual_order.h"
#include "query_text_test.h"
#include "types.h"

int
GpuQueryColumnForm(Oid type)
{
	switch (type)
	{
		case FLOAT4OID:
			return QCOL_FLOAT4;
		case FLOAT8OID:
			return QCOL_FLOAT8;
		case NUMERICOID:
			return QCOL_NUMERIC;
		case BPCHAROID:
			return QCOL_BPCHAR16;
		case TEXTOID:
		case VARCHAROID:
			return QCOL_TEXT16;
		default:
			/* the integer-like types the device expressions hold as int64 words */
			return DeviceExprTypeKind(type) == GPUOPS_ET_INT ? QCOL_INT : -1;
	}
}

int
GpuQueryInputColumn(DeviceExprInputs *in, Node *var)
{
	int idx = -1;
	int i = 0;
	ListCell *lc;

	foreach (lc, in->outer_exprs)
	{
		if (equal(lfirst(lc), var))
		{
			idx = i;
			break;
		}
		i++;
	}
	if (idx < 0)
		return -1;
	for (int pc = 0; pc < in->nouter; pc++)
		if (in->outer_cols[pc] == idx)
			return pc;
	if (in->nouter >= GPUOPS_QUERY_MAX_COLS)
		return -1;
	in->outer_cols[in->nouter] = idx;
	in->outer_types[in->nouter] = exprType(var);
	return in->nouter++;
}

/*
 * A Var's column, or a program computing expr; false when neither can be.
 * A numeric value needs the display scale the plan fixes (*num_scale)
 * where it is summed (need_scale); a program's always (its words' scales
 * come from its operations).
 */
static bool
ValueInput(GpuQueryBuild *b, DeviceExprInputs *in, Expr *expr, bool need_scale, int *col,
		   List **prog_list, int *num_scale)
{
	GpuopsExprProgram prog;

	*col = -1;
	*prog_list = NIL;
	*num_scale = -1;
	if (IsA(expr, Var))
	{
		Oid type = exprType((Node *) expr);

		if (DeviceExprTypeKind(type) < 0)
			return false;
		if (type == NUMERICOID)
		{
			*num_scale = NumericDisplayScale((Node *) expr);
			if (need_scale && (*num_scale < 0 || *num_scale > 38))
				return false;
		}
		*col = GpuQueryInputColumn(in, (Node *) expr);
		return *col >= 0;
	}
	if (!DeviceExprCompileAggInput(expr, in, &prog, num_scale))
		return false;
	b->program_steps += prog.nsteps;
	*prog_list = DeviceExprProgramToList(&prog);
	return true;
}

/* Text a dimension hands over as dictionary codes (gpu_query_dims.cpp). */
static bool
DictType(Oid type)
{
	return type == TEXTOID || type == VARCHAROID || type == BPCHAROID;
}

/*
 * A group key of the table's short text: bpchar(n) or varchar(n), n at
 * most 16.  In a multibyte encoding a value may still take more than 16
 * bytes: the reader then escapes to PostgreSQL's plan (query_reader.h).
 */
static bool
ShortTextKey(Expr *expr, Oid collation)
{
	int32 typmod = exprTypmod((Node *) expr);

	if (!IsA(expr, Var) || typmod < (int32) VARHDRSZ)
		return false;
	/* deterministic: equal values are equal bytes (bpchar: trailing blanks aside) */
	if (!OidIsValid(collation) || !get_collation_isdeterministic(collation))
		return false;
	return typmod - (int32) VARHDRSZ <= 16;
}

static bool
AddKey(GpuQueryBuild *b, DeviceExprInputs *in, SortGroupClause *sgc, Expr *expr)
{
	GpuQueryPlan *plan = b->plan;
	GpuQueryKeyPlan *key = &plan->keys[plan->nkeys];
	GpuopsKeyKind kind;
	GpuAggKeyEncoding enc;
	Oid collation;
	List *prog = NIL;
	int scale;

	if (plan->nkeys >= GPUOPS_QUERY_MAX_KEYS)
		return GpuQueryDecline("too many group keys");
	if (!GpuAggGroupKeyKind(sgc, expr, &kind, &enc, &collation))
		return GpuQueryDecline("a group key the device cannot group");
	key->type = exprType((Node *) expr);
	key->typmod = exprTypmod((Node *) expr);
	key->dict = false;
	if (IsA(expr, Var) && (int) ((Var *) expr)->varno != (int) b->fact->relid &&
		DictType(key->type))
	{
		/* a dimension's text: its dictionary code groups (deterministic: equal is bytes) */
		if (!OidIsValid(collation) || !get_collation_isdeterministic(collation))
			return GpuQueryDecline("a text group key under a nondeterministic collation");
		key->kind = GPUOPS_QKEY_INT;
		key->dict = true;
		key->col = GpuQueryInputColumn(in, (Node *) expr);
		if (key->col < 0)
			return GpuQueryDecline("more columns than a device program reads");
	}
	else if (enc == GPUAGG_KEY_VALUE && DeviceExprTypeKind(key->type) >= 0)
	{
		key->kind = DeviceExprTypeKind(key->type) == GPUOPS_ET_FLOAT ? GPUOPS_QKEY_FLOAT
																	 : GPUOPS_QKEY_INT;
		if (!ValueInput(b, in, expr, false, &key->col, &prog, &scale))
			return GpuQueryDecline("a group key expression without a device form");
	}
	else if ((key->type == BPCHAROID || key->type == VARCHAROID || key->type == TEXTOID) &&
			 ShortTextKey(expr, collation))
	{
		key->kind = GPUOPS_QKEY_BYTES16;
		key->col = GpuQueryInputColumn(in, (Node *) expr);
		if (key->col < 0)
			return GpuQueryDecline("more columns than a device program reads");
	}
	else
		return GpuQueryDecline("a group key of a type the device does not group in one pass "
							   "(text longer than 16 bytes, numeric, ...)");
	plan->key_progs = lappend(plan->key_progs, prog);
	b->key_exprs = lappend(b->key_exprs, expr);
	plan->nkeys++;
	return true;
}

/*
 * The display scale of each value of a numeric CASE whose branches have
 * static but unequal scales, as an int4 CASE of the same conditions (the
 * largest in *max_scale), or NULL.  PostgreSQL's sum shows the largest
 * scale among the values it adds; the device adds them at the largest any
 * branch has and finds the group's with a hidden max of this (AddScaleAgg).
 */
static Expr *
ScaleCase(Node *e, int *max_scale)
{
	int scale = NumericDisplayScale(e);
	CaseExpr *ce, *out;
	ListCell *lc;

	if (scale >= 0 || (IsA(e, Const) && ((Const *) e)->constisnull))
	{
		/* a NULL adds nothing: its rows are not counted (AddScaleAgg's filter) */
		scale = Max(scale, 0);
		*max_scale = Max(*max_scale, scale);
		return (Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(scale),
								  false, true);
	}
	if (!IsA(e, CaseExpr))
		return NULL;
	ce = (CaseExpr *) e;
	out = makeNode(CaseExpr);
	out->casetype = INT4OID;
	out->casecollid = InvalidOid;
	out->arg = ce->arg;
	out->location = -1;
	foreach (lc, ce->args)
	{
		CaseWhen *w = lfirst_node(CaseWhen, lc);
		CaseWhen *nw = makeNode(CaseWhen);

		nw->expr = w->expr;
		nw->result = ScaleCase((Node *) w->result, max_scale);
		nw->location = -1;
		if (nw->result == NULL)
			return NULL;
		out->args = lappend(out->args, nw);
	}
	out->defresult = ScaleCase((Node *) ce->defresult, max_scale);
	return out->defresult != NULL ? (Expr *) out : NULL;
}

/*
 * Aggregate a (a numeric sum or average of a CASE, ScaleCase) gets its
 * display scale from a hidden max over the rows it adds, placed after the
 * scan tuple's aggregates (plan->nhidden).
 */
static bool
AddScaleAgg(GpuQueryBuild *b, DeviceExprInputs *in, int a, Expr *scale_expr, Aggref *aggref)
{
	GpuQueryPlan *plan = b->plan;
	GpuQueryAggPlan *h = &plan->aggs[plan->naggs];
	Expr *arg = linitial_node(TargetEntry, aggref->args)->expr;
	NullTest *nt = makeNode(NullTest);
	Expr *filter;
	GpuopsExprProgram prog;
	int scale;

	if (plan->naggs >= GPUOPS_MAX_AGGS)
		return GpuQueryDecline("too many aggregates");
	nt->arg = arg;
	nt->nulltesttype = IS_NOT_NULL;
	nt->argisrow = false;
	nt->location = -1;
	filter = aggref->aggfilter != NULL ? make_andclause(list_make2(aggref->aggfilter, nt))
									   : (Expr *) nt;
	memset(h, 0, sizeof(*h));
	h->kind = GPUOPS_QAGG_MAX;
	h->arg_type = GPUOPS_ET_INT;
	h->arg_col = -1;
	h->final = GPUAGG_FINAL_VALUE;
	h->arg_pgtype = INT4OID;
	h->scale_agg = -1;
	if (!DeviceExprCompileAggInput(scale_expr, in, &prog, &scale))
		return GpuQueryDecline("a numeric CASE whose scales have no device form");
	b->program_steps += prog.nsteps;
	plan->arg_progs = lappend(plan->arg_progs, DeviceExprProgramToList(&prog));
	if (!DeviceExprCompileAggInput(filter, in, &prog, &scale))
		return GpuQueryDecline("a numeric CASE whose scales have no device form");
	b->program_steps += prog.nsteps;
	plan->filter_progs = lappend(plan->filter_progs, DeviceExprProgramToList(&prog));
	plan->aggs[a].scale_agg = plan->naggs;
	plan->naggs++;
	plan->nhidden++;
	return true;
}

/* min and max: of the types whose words order as their values (no floats: NaN, -0) */
static bool
MinMaxType(Oid type)
{
	return DeviceExprTypeKind(type) == GPUOPS_ET_INT;
}

static bool
AddAggregate(GpuQueryBuild *b, DeviceExprInputs *in, Aggref *aggref, List **scale_exprs)
{
	GpuQueryPlan *plan = b->plan;
	GpuQueryAggPlan *d = &plan->aggs[plan->naggs];
	GpuopsAggKind kind;
	Expr *arg = NULL;
	List *arg_prog = NIL;
	List *filter_prog = NIL;
	int scale = -1;

	memset(d, 0, sizeof(*d));
	d->arg_col = -1;
	d->scale_agg = -1;
	*scale_exprs = lappend(*scale_exprs, NULL);
	if (aggref->agglevelsup != 0 || aggref->aggkind != AGGKIND_NORMAL ||
		aggref->aggdistinct != NIL || aggref->aggorder != NIL)
		return GpuQueryDecline("an ordered-set, DISTINCT, ORDER BY or outer aggregate");
	if (!aggref->aggstar)
	{
		if (list_length(aggref->args) != 1)
			return GpuQueryDecline("an aggregate of several arguments");
		arg = linitial_node(TargetEntry, aggref->args)->expr;
		d->arg_pgtype = exprType((Node *) arg);
	}
	if (!GpuAggClassify(aggref->aggfnoid, d->arg_pgtype, &kind, &d->final, &d->final_fn))
		return GpuQueryDecline("an aggregate the device does not compute");
	switch (d->final)
	{
		case GPUAGG_FINAL_COUNT:
			d->kind = GPUOPS_QAGG_COUNT;
			break;
		case GPUAGG_FINAL_SUM_INT8:
		case GPUAGG_FINAL_SUM_NUMERIC:
		case GPUAGG_FINAL_AVG_NUMERIC:
			d->kind = GPUOPS_QAGG_SUM_INT;
			break;
		case GPUAGG_FINAL_SUM_SCALED:
		case GPUAGG_FINAL_AVG_SCALED:
			d->kind = GPUOPS_QAGG_SUM_NUM;
			break;
		case GPUAGG_FINAL_SUM_FLOAT4:
		case GPUAGG_FINAL_SUM_FLOAT8:
			d->kind = GPUOPS_QAGG_SUM_FLOAT;
			break;
		case GPUAGG_FINAL_FLOAT_FN:
			/* avg of floats: float8_avg reads N and Sx only; variances need Sxx */
			if (aggref->aggfnoid != F_AVG_FLOAT4 && aggref->aggfnoid != F_AVG_FLOAT8)
				return GpuQueryDecline("variance or standard deviation");
			d->kind = GPUOPS_QAGG_SUM_FLOAT;
			break;
		case GPUAGG_FINAL_VALUE:
			if (!MinMaxType(d->arg_pgtype))
				return GpuQueryDecline("min or max of a type the device does not order by value");
			d->kind = kind == GPUOPS_AGG_MIN ? GPUOPS_QAGG_MIN : GPUOPS_QAGG_MAX;
			break;
		default:
			return GpuQueryDecline("an aggregate the device does not compute in one pass");
	}
	if (d->kind == GPUOPS_QAGG_SUM_FLOAT && !gpuops_enable_float_aggs)
		return GpuQueryDecline("float sums and averages differ in rounding from a serial plan's "
							   "(gpuops.enable_float_aggs is off)");
	if (arg != NULL && d->kind == GPUOPS_QAGG_SUM_NUM && NumericDisplayScale((Node *) arg) < 0 &&
		IsA(arg, CaseExpr))
	{
		/* a CASE of unequal scales: added at the largest, shown at the group's (AddScaleAgg) */
		GpuopsExprProgram prog;
		Expr *scale_expr = ScaleCase((Node *) arg, &scale);

		if (scale_expr == NULL || scale > 38 || !DeviceExprCompileAggInput(arg, in, &prog, NULL))
			return GpuQueryDecline("a numeric CASE without a device form, or a branch's scale not "
								   "fixed by the plan");
		b->program_steps += prog.nsteps;
		arg_prog = DeviceExprProgramToList(&prog);
		llast(*scale_exprs) = scale_expr;
		d->arg_type = GPUOPS_ET_NUM;
		d->num_scale = scale;
	}
	else if (arg != NULL)
	{
		if (!ValueInput(b, in, arg, d->kind == GPUOPS_QAGG_SUM_NUM, &d->arg_col, &arg_prog, &scale))
			return GpuQueryDecline("an aggregate argument without a device form, or a numeric one "
								   "without a display scale fixed by the plan");
		d->arg_type = (GpuopsExprType) DeviceExprTypeKind(d->arg_pgtype);
		if (d->kind != GPUOPS_QAGG_COUNT &&
			d->arg_type !=
				(d->kind == GPUOPS_QAGG_SUM_NUM			? GPUOPS_ET_NUM
					 : d->kind == GPUOPS_QAGG_SUM_FLOAT ? GPUOPS_ET_FLOAT
														: GPUOPS_ET_INT))
			return GpuQueryDecline("an aggregate argument of an unexpected type");
		d->num_scale = Max(scale, 0);
	}
	if (aggref->aggfilter != NULL)
	{
		GpuopsExprProgram prog;
		int fscale;

		if (!DeviceExprCompileAggInput(aggref->aggfilter, in, &prog, &fscale) ||
			exprType((Node *) aggref->aggfilter) != BOOLOID)
			return GpuQueryDecline("a FILTER without a device form");
		b->program_steps += prog.nsteps;
		filter_prog = DeviceExprProgramToList(&prog);
	}
	plan->arg_progs = lappend(plan->arg_progs, arg_prog);
	plan->filter_progs = lappend(plan->filter_progs, filter_prog);
	plan->naggs++;
	return true;
}

/*
 * The Vars under node outside the aggregates and the group keys (*vars,
 * once each): columns functionally dependent on the group keys (the
 * parser accepts no other, and the planner drops them from GROUP BY:
 * remove_useless_groupby_columns).  True on a placeholder, GROUPING() or
 * an outer query's Var.
 */
typedef struct DependentCxt
{
	List *keys;
	List *vars;
} DependentCxt;

static bool
DependentVarWalker(Node *node, DependentCxt *cxt)
{
	if (node == NULL || list_member(cxt->keys, node) || IsA(node, Aggref))
		return false;
	/* (an outer query's Var is a Param by now: refused if one were left) */
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
	{
		cxt->vars = list_append_unique(cxt->vars, node);
		return false;
	}
	if (IsA(node, Var) || IsA(node, PlaceHolderVar) || IsA(node, GroupingFunc))
		return true;
	return expression_tree_walker(node, (bool (*)())(void (*)(void)) DependentVarWalker, cxt);
}

/*
 * Whether a functionally dependent column groups by its dimension row
 * (plan->pay_dict 2): a joined table's column of a type with no key
 * word (numeric, text); each of its rows is one group key value, since
 * the group keys hold the table's primary key.  Text is row-coded too,
 * not dictionary-coded: a dictionary hashes every staged row's value
 * (TPC-H Q10's four customer texts, 1.5M rows each at SF 10, took
 * seconds in the leader) for codes that only repeat the row's.
 */
static bool
RowCoded(GpuQueryBuild *b, Var *v)
{
	GpuopsKeyKind kind;

	return (int) v->varno != (int) b->fact->relid &&
		!(GpuopsFixedKeyKind(v->vartype, &kind) && DeviceExprTypeKind(v->vartype) >= 0);
}

/*
 * A functionally dependent column as one more group key: it splits no
 * group.  Row-coded ones group by their dimension row, the others as
 * GROUP BY would group them (their type's default equality).
 */
static bool
AddDependentKey(GpuQueryBuild *b, DeviceExprInputs *in, Var *v)
{
	GpuQueryPlan *plan = b->plan;
	GpuQueryKeyPlan *key = &plan->keys[plan->nkeys];
	SortGroupClause *sgc;

	if (!list_member(b->row_coded, v))
	{
		sgc = makeNode(SortGroupClause);
		get_sort_group_operators(v->vartype, false, false, false, &sgc->sortop, &sgc->eqop, NULL,
								 &sgc->hashable);
		return AddKey(b, in, sgc, (Expr *) v);
	}
	if (plan->nkeys >= GPUOPS_QUERY_MAX_KEYS)
		return GpuQueryDecline("too many group keys");
	key->kind = GPUOPS_QKEY_INT;
	key->dict = true; /* the word: the row, which the dimension's values give back */
	key->type = v->vartype;
	key->typmod = v->vartypmod;
	key->col = GpuQueryInputColumn(in, (Node *) v);
	if (key->col < 0)
		return GpuQueryDecline("more columns than a device program reads");
	plan->key_progs = lappend(plan->key_progs, NIL);
	b->key_exprs = lappend(b->key_exprs, v);
	plan->nkeys++;
	return true;
}

/* Is a Var outside the aggregates and the group keys under node? */
static bool
NonKeyVarWalker(Node *node, List *keys)
{
	if (node == NULL || list_member(keys, node) || IsA(node, Aggref))
		return false;
	if (IsA(node, Var) || IsA(node, PlaceHolderVar) || IsA(node, GroupingFunc))
		return true;
	return expression_tree_walker(node, (bool (*)())(void (*)(void)) NonKeyVarWalker, keys);
}

static bool
HeapTable(Oid relid)
{
	Relation r = table_open(relid, NoLock); /* the planner holds its lock */
	bool heap = r->rd_rel->relam == HEAP_TABLE_AM_OID;

	table_close(r, NoLock);
	return heap;
}

/* The rel: one plain heap table, without row-level security. */
static bool
PlainTable(PlannerInfo *root, RelOptInfo *rel)
{
	RangeTblEntry *rte;
	ListCell *lc;

	if (rel->reloptkind != RELOPT_BASEREL || rel->rtekind != RTE_RELATION ||
		bms_membership(rel->relids) != BMS_SINGLETON)
		return GpuQueryDecline("not one base table");
	rte = planner_rt_fetch(rel->relid, root);
	if (rte->relkind != RELKIND_RELATION || rte->inh)
		return GpuQueryDecline("not a plain table (inheritance, partitions, views)");
	if (rte->tablesample != NULL)
		return GpuQueryDecline("TABLESAMPLE");
	if (!HeapTable(rte->relid))
		return GpuQueryDecline("a table access method other than heap");
	if (rte->securityQuals != NIL)
		return GpuQueryDecline("row-level security");
	if (!bms_is_empty(rel->lateral_relids) || rel->lateral_vars != NIL)
		return GpuQueryDecline("a lateral reference");
	foreach (lc, rel->baserestrictinfo)
		if (lfirst_node(RestrictInfo, lc)->security_level > 0)
			return GpuQueryDecline("row-level security");
	return true;
}

Var *
GpuQueryInputVar(Node *input)
{
	Var *v;

	if (IsA(input, Var))
		return (Var *) input;
	return QueryTextTestOf(input, &v, NULL) ? v : NULL;
}

bool
GpuQueryCollectInputs(Node *node, List **inputs)
{
	Var *v;

	if (node == NULL)
		return false;
	if ((IsA(node, Var) && ((Var *) node)->varlevelsup == 0) || IsA(node, PlaceHolderVar) ||
		QueryTextTestOf(node, &v, NULL))
	{
		*inputs = list_append_unique(*inputs, node);
		return false;
	}
	return expression_tree_walker(node, (bool (*)())(void (*)(void)) GpuQueryCollectInputs, inputs);
}

/* The dimension a Var is of, or -1 (the fact table's). */
static int
VarDim(const GpuQueryBuild *b, const Var *v)
{
	int d = 0;
	ListCell *lc;

	foreach (lc, b->dim_rels)
	{
		if ((int) ((RelOptInfo *) lfirst(lc))->relid == (int) v->varno)
			return d;
		d++;
	}
	return -1;
}

/* A dimension column's place among its child's output columns, or -1. */
static int
ChildColumn(const GpuQueryBuild *b, int d, const Var *v)
{
	Path *path = (Path *) list_nth(b->dim_paths, d);
	int i = 0;
	ListCell *lc;

	foreach (lc, path->pathtarget->exprs)
	{
		if (equal(lfirst(lc), v))
			return i;
		i++;
	}
	return -1;
}

/*
 * The columns every program reads, numbered once: the fact table's first
 * (the batch), then each dimension's payload in lookup order, so that a
 * lookup's key column always comes before the columns it adds.  The fact
 * qual's program, compiled first, numbers its own columns from 0.
 */
static bool
NumberColumns(GpuQueryBuild *b, DeviceExprInputs *in)
{
	GpuQueryPlan *plan = b->plan;
	ListCell *lc;

	foreach (lc, in->outer_exprs)
		if ((int) GpuQueryInputVar((Node *) lfirst(lc))->varno == (int) b->fact->relid &&
			GpuQueryInputColumn(in, (Node *) lfirst(lc)) < 0)
			return GpuQueryDecline("more columns than a device program reads");
	plan->ncols = in->nouter;
	for (int c = 0; c < in->nouter; c++)
	{
		Node *input = (Node *) list_nth(in->outer_exprs, in->outer_cols[c]);
		Var *v = GpuQueryInputVar(input);

		plan->attnums[c] = v->varattno;
		plan->forms[c] = GpuQueryColumnForm(v->vartype);
		if (!IsA(input, Var))
		{
			plan->forms[c] = QCOL_TEXT_TEST;
			plan->test_cols = lappend_int(plan->test_cols, c);
			plan->test_exprs = lappend(plan->test_exprs, input);
		}
		b->row_bytes += plan->forms[c] == QCOL_BPCHAR16 || plan->forms[c] == QCOL_TEXT16 ? 17 : 9;
	}
	plan->ndims = list_length(b->dim_rels);
	for (int d = 0; d < plan->ndims; d++)
	{
		GpuQueryDimPlan *dim = &plan->dims[d];
		OpExpr *op = (OpExpr *) list_nth(b->lookups, d);
		Var *l = (Var *) linitial(op->args), *r = (Var *) lsecond(op->args);
		Var *key = VarDim(b, l) == d ? l : r;
		Var *col = key == l ? r : l;

		dim->kind = (GpuopsQueryDimKind) list_nth_int(b->dim_kinds, d);
		dim->key_col = GpuQueryInputColumn(in, (Node *) col);
		dim->key_pos = ChildColumn(b, d, key);
		dim->key_type = key->vartype;
		dim->first_pay = plan->npayload;
		if (dim->key_col < 0 || dim->key_col >= in->nouter || dim->key_pos < 0)
			return GpuQueryDecline("a lookup whose columns are not at hand");
		foreach (lc, in->outer_exprs)
		{
			Node *input = (Node *) lfirst(lc);
			Var *v = GpuQueryInputVar(input);
			Oid type = exprType(input);
			int c;

			if (VarDim(b, v) != d)
				continue;
			c = GpuQueryInputColumn(in, input);
			if (c < 0)
				return GpuQueryDecline("more columns than a device program reads");
			if (!IsA(input, Var))
			{
				plan->test_cols = lappend_int(plan->test_cols, c);
				plan->test_exprs = lappend(plan->test_exprs, input);
			}
			plan->pay_pos[plan->npayload] = ChildColumn(b, d, v);
			plan->pay_types[plan->npayload] = type;
			/* 1: text as dictionary codes; 2: the row (a dependent column, RowCoded) */
			plan->pay_dict[plan->npayload] = list_member_ptr(b->row_coded, input) ? 2
				: DeviceExprTypeKind(type) < 0									  ? 1
																				  : 0;
			if (plan->pay_pos[plan->npayload] < 0)
				return GpuQueryDecline("a joined table's column its plan does not return");
			plan->npayload++;
			dim->npayload++;
		}
		/* PostgreSQL reads a semi or anti join's table only in its clause */
		if (dim->kind != GPUOPS_QDIM_INNER && dim->npayload > 0)
			return GpuQueryDecline("a semi or anti join's column read outside its clause");
	}
	if (in->nouter != plan->ncols + plan->npayload)
		return GpuQueryDecline("columns out of order");
	return true;
}

bool
GpuQueryCollect(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
				GroupPathExtraData *extra, GpuQueryBuild *b)
{
	Query *parse = root->parse;
	GpuQueryPlan *plan;
	DeviceExprInputs in;
	List *aggrefs = NIL;
	List *inputs = NIL;
	List *scale_exprs = NIL; /* per aggregate ScaleCase's expression, or NULL */
	List *all = NIL;
	List *groups = NIL; /* GROUP BY's expressions */
	DependentCxt dep = {NIL, NIL};
	ListCell *lc;

	if (input_rel->reloptkind == RELOPT_BASEREL)
		b->fact = input_rel;
	else if (input_rel->reloptkind != RELOPT_JOINREL)
		return GpuQueryDecline("not a table or a join of tables");
	else if (!gpuops_enable_query_join)
		return GpuQueryDecline("a join (gpuops.enable_query_join is off)");
	else if (!GpuQueryPlanJoin(root, input_rel, b))
		return false;
	if (!PlainTable(root, b->fact))
		return false;
	if (IS_DUMMY_REL(input_rel))
		return GpuQueryDecline("the quals are never true (PostgreSQL reads nothing)");
	if (parse->groupingSets != NIL || GpuAggUsesGroupingFunc(root, extra))
		return GpuQueryDecline("GROUPING SETS, ROLLUP, CUBE or GROUPING()");
	/* the planner may replace min/max by index probes in every plan, ours included */
	if (root->minmax_aggs != NIL)
		return GpuQueryDecline("min/max answered from an index");
	if (parse->hasTargetSRFs)
		return GpuQueryDecline("a set-returning function in the target");
	if (b->fact->tuples < gpuops_min_rows)
		return GpuQueryDecline("a table under gpuops.min_rows rows");

	b->plan = plan = (GpuQueryPlan *) palloc0(sizeof(GpuQueryPlan));
	memset(&in, 0, sizeof(in));
	if (GpuopsHasPseudoconstant(b->fact->baserestrictinfo))
		return GpuQueryDecline("a one-time filter (a qual on no column of the block)");
	b->quals = GpuopsOrderQuals(root, get_actual_clauses(b->fact->baserestrictinfo));
	if (contain_volatile_functions((Node *) b->quals) || contain_subplans((Node *) b->quals) ||
		contain_volatile_functions((Node *) b->join_quals) ||
		contain_subplans((Node *) b->join_quals))
		return GpuQueryDecline("a volatile qual, or one with a subquery");

	/* the table's columns the block reads: every program reads them by one numbering */
	GpuAggCollectAggrefs((Node *) output_rel->reltarget->exprs, &aggrefs);
	GpuAggCollectAggrefs(extra->havingQual, &aggrefs);
	if (list_length(aggrefs) > GPUOPS_MAX_AGGS)
		return GpuQueryDecline("too many aggregates");
	if (contain_volatile_functions((Node *) aggrefs) || contain_subplans((Node *) aggrefs))
		return GpuQueryDecline("a volatile aggregate argument, or one with a subquery");
	all = list_concat(list_concat(list_copy(b->quals), b->join_quals), aggrefs);
	/* (every GROUP BY column redundant: a grouping of constants, not a plain aggregate) */
	if (parse->groupClause != NIL && GpuopsGroupClause(root) == NIL)
		return GpuQueryDecline("a GROUP BY of redundant columns only");
	foreach (lc, GpuopsGroupClause(root))
		groups = lappend(
			groups, get_sortgroupclause_expr(lfirst_node(SortGroupClause, lc), extra->targetList));
	all = list_concat(all, groups);
	/* the columns that depend on the group keys (GROUP BY a primary key, other columns) */
	dep.keys = groups;
	if (DependentVarWalker((Node *) output_rel->reltarget->exprs, &dep) ||
		DependentVarWalker(extra->havingQual, &dep))
		return GpuQueryDecline("a placeholder or GROUPING() outside aggregates");
	/* a lookup needs the column it looks up by, not the dimension's key */
	foreach (lc, b->lookups)
	{
		OpExpr *op = (OpExpr *) lfirst(lc);
		int d = foreach_current_index(lc);

		all = lappend(all,
					  VarDim(b, (Var *) linitial(op->args)) == d ? lsecond(op->args)
																 : linitial(op->args));
	}
	GpuQueryCollectInputs((Node *) all, &inputs);
	foreach (lc, dep.vars)
	{
		Var *v = (Var *) lfirst(lc);

		if (!RowCoded(b, v))
			GpuQueryCollectInputs((Node *) v, &inputs);
		else if (list_member(inputs, v))
			return GpuQueryDecline("a column grouped by its row that is also read as a value");
		else
		{
			b->row_coded = lappend(b->row_coded, v);
			inputs = lappend(inputs, v);
		}
	}
	foreach (lc, inputs)
	{
		Node *input = (Node *) lfirst(lc);
		Var *v = IsA(input, PlaceHolderVar) ? NULL : GpuQueryInputVar(input);

		if (v == NULL || !bms_is_member((int) v->varno, input_rel->relids) || v->varattno <= 0)
			return GpuQueryDecline("a system column, whole row or placeholder");
		if (IsA(input, Var) && !list_member_ptr(b->row_coded, input) &&
			(v->varno == (int) b->fact->relid
				 ? GpuQueryColumnForm(v->vartype) < 0
				 : DeviceExprTypeKind(v->vartype) < 0 && !DictType(v->vartype)))
			return GpuQueryDecline("a column of a type the reader does not read");
		in.outer_exprs = lappend(in.outer_exprs, input);
	}
	b->qual_vars = pull_var_clause(
		(Node *) list_concat(list_concat(list_copy(b->quals), b->join_quals), b->lookups), 0);

	if (b->quals != NIL)
	{
		GpuopsExprProgram prog;

		/* resets the inputs' columns: the first program */
		if (!DeviceExprCompile(b->quals, &in, &prog))
			return GpuQueryDecline("a qual without a device form");
		b->program_steps += prog.nsteps;
		plan->qual_prog = DeviceExprProgramToList(&prog);
		plan->params = in.params;
		plan->param_slots = in.param_slots;
	}
	if (!NumberColumns(b, &in))
		return false;
	if (b->join_quals != NIL)
	{
		GpuopsExprProgram prog;
		int scale;

		/* over the joined row's columns, all numbered: no Params (bound per scan) */
		if (!DeviceExprCompileAggInput(make_ands_explicit(b->join_quals), &in, &prog, &scale) ||
			in.nouter != plan->ncols + plan->npayload)
			return GpuQueryDecline("a join clause without a device form");
		b->program_steps += prog.nsteps;
		plan->join_qual_prog = DeviceExprProgramToList(&prog);
		plan->njoin_quals = list_length(b->join_quals);
	}
	foreach (lc, GpuopsGroupClause(root))
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);

		if (!AddKey(b, &in, sgc, (Expr *) get_sortgroupclause_expr(sgc, extra->targetList)))
			return false;
	}
	foreach (lc, dep.vars)
		if (!AddDependentKey(b, &in, (Var *) lfirst(lc)))
			return false;
	if (NonKeyVarWalker((Node *) output_rel->reltarget->exprs, b->key_exprs) ||
		NonKeyVarWalker(extra->havingQual, b->key_exprs))
		return GpuQueryDecline("a column outside aggregates that is not a group key");
	foreach (lc, aggrefs)
		if (!AddAggregate(b, &in, lfirst_node(Aggref, lc), &scale_exprs))
			return false;
	foreach (lc, scale_exprs)
		if (lfirst(lc) != NULL &&
			!AddScaleAgg(b, &in, foreach_current_index(lc), (Expr *) lfirst(lc),
						 (Aggref *) list_nth(aggrefs, foreach_current_index(lc))))
			return false;

	/* every column was numbered before the programs (NumberColumns) */
	if (in.nouter != plan->ncols + plan->npayload)
		return GpuQueryDecline("columns out of order");
	for (int k = 0; k < plan->nkeys; k++)
		if (plan->keys[k].kind == GPUOPS_QKEY_BYTES16 &&
			plan->forms[plan->keys[k].col] != QCOL_BPCHAR16 &&
			plan->forms[plan->keys[k].col] != QCOL_TEXT16)
			return GpuQueryDecline("a text key read as words");
	b->scan_exprs = list_concat(list_copy(b->key_exprs), aggrefs);
	GpuQueryPlanDimReads(root, b, &in);
	return true;
}
