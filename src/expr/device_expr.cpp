/*
 * device_expr.cpp
 *    PostgreSQL expressions -> device programs (device_expr.h).
 *
 * What compiles: input columns and constants of int2, int4, int8, float4,
 * float8, numeric, bool, date, time, timestamp and timestamptz; Params of
 * those types (bound once per scan); the comparison operators within each
 * family (integers across widths, floats across widths, numeric, date,
 * time, timestamp, timestamptz, bool); + - * / % and unary minus and abs
 * of integers and floats, and of numerics all but / (whose result scale
 * depends on the operands' digits); the casts among integers and floats,
 * integers to numeric, numeric to integers and floats, and numeric to
 * numeric(p, s); date +/- integer and date - date; timestamp +/- a
 * constant interval without months (timestamptz: without days either,
 * which depend on the time zone); AND, OR, NOT; IS [NOT] NULL; IS [NOT]
 * TRUE/FALSE/UNKNOWN; IS [NOT] DISTINCT FROM; IN and NOT IN lists (= ANY /
 * <> ALL of a constant array or an ARRAY[...]); CASE in both forms.
 * Functions are recognized by their OIDs in pg_catalog (fmgroids.h), never
 * by name, so a user's function of the same name is not mistaken for one.
 * BETWEEN arrives as an AND of two comparisons.
 *
 * This file compiles columns, constants, Params, boolean logic, CASE and
 * the tests, and holds the entry points; device_expr_ops.cpp the operators
 * and functions (device_expr_builder.h: the builder they share).
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "datatype/timestamp.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
}

#include "device_expr.h"
#include "device_expr_builder.h"
#include "device_expr_catalog.h"
#include "expr_eval.hpp"
#include "join_plan.h"
#include "numeric_decode.h"
#include "plan_fields.h"

static bool Compile(DeviceExprBuilder *b, Node *node);

/* A program column for input column `col` of a side, added once. */
static int
UseColumn(int *cols, Oid *types, int *n, int col, Oid type)
{
	for (int i = 0; i < *n; i++)
		if (cols[i] == col)
			return i;
	if (*n >= GPUOPS_EXPR_MAX_COLS)
		return -1;
	cols[*n] = col;
	types[*n] = type;
	return (*n)++;
}

/* An input column of either side, if node is one; *ok false on failure. */
static bool
CompileColumn(DeviceExprBuilder *b, Node *node, bool *ok)
{
	Oid type = exprType(node);
	int col;
	int pc;

	*ok = false;
	col = GpuopsFindColumn(b->in->outer_exprs, node);
	if (col >= 0)
	{
		if (DeviceExprTypeKind(type) < 0)
			return true;
		pc = UseColumn(b->in->outer_cols, b->in->outer_types, &b->in->nouter, col, type);
		*ok = pc >= 0 && Emit(b, GPUOPS_EOP_OUTER, DeviceExprTypeKind(type), 0, pc);
		return true;
	}
	col = GpuopsFindColumn(b->in->inner_exprs, node);
	if (col >= 0)
	{
		if (DeviceExprTypeKind(type) < 0)
			return true;
		pc = UseColumn(b->in->inner_cols, b->in->inner_types, &b->in->ninner, col, type);
		*ok = pc >= 0 && Emit(b, GPUOPS_EOP_INNER, DeviceExprTypeKind(type), 0, pc);
		return true;
	}
	return false;
}


/* AND/OR of the args, stopping at the first that decides, as PostgreSQL does */
static bool
CompileAndOr(DeviceExprBuilder *b, List *args, bool is_and)
{
	int jumps[GPUOPS_EXPR_MAX_STEPS];
	int njumps = 0;
	ListCell *lc;

	foreach (lc, args)
	{
		if (!Compile(b, (Node *) lfirst(lc)))
			return false;
		if (lc != list_head(args) &&
			!Emit(b, is_and ? GPUOPS_EOP_AND : GPUOPS_EOP_OR, GPUOPS_ET_INT, 0, 0))
			return false;
		if (lnext(args, lc) != NULL)
		{
			jumps[njumps++] = b->prog->nsteps;
			if (!Emit(b, is_and ? GPUOPS_EOP_JUMP_IF_FALSE : GPUOPS_EOP_JUMP_IF_TRUE, GPUOPS_ET_INT,
					  0, 0))
				return false;
		}
	}
	for (int i = 0; i < njumps; i++)
		Land(b, jumps[i]);
	return true;
}


static bool
CompileCase(DeviceExprBuilder *b, CaseExpr *ce)
{
	int ends[GPUOPS_EXPR_MAX_STEPS];
	int nends = 0;
	int saved = b->case_local;
	ListCell *lc;

	if (DeviceExprTypeKind(ce->casetype) < 0)
		return false;
	if (ce->arg)
	{
		/* CASE x WHEN ...: x once, read by each WHEN's CaseTestExpr */
		if (b->nlocals >= GPUOPS_EXPR_MAX_LOCALS ||
			DeviceExprTypeKind(exprType((Node *) ce->arg)) < 0)
			return false;
		b->case_local = b->nlocals++;
		if (!Compile(b, (Node *) ce->arg) || !Emit(b, GPUOPS_EOP_STORE, 0, 0, b->case_local) ||
			!Emit(b, GPUOPS_EOP_POP, 0, 0, 0))
			return false;
	}
	foreach (lc, ce->args)
	{
		CaseWhen *w = lfirst_node(CaseWhen, lc);
		int skip;

		if (!Compile(b, (Node *) w->expr))
			return false;
		skip = b->prog->nsteps;
		if (!Emit(b, GPUOPS_EOP_JUMP_UNLESS_TRUE, 0, 0, 0) || !Compile(b, (Node *) w->result))
			return false;
		ends[nends++] = b->prog->nsteps;
		if (!Emit(b, GPUOPS_EOP_JUMP, 0, 0, 0))
			return false;
		Land(b, skip);
	}
	if (ce->defresult ? !Compile(b, (Node *) ce->defresult)
					  : !Emit(b, GPUOPS_EOP_PUSH_NULL, 0, 0, 0))
		return false;
	for (int i = 0; i < nends; i++)
		Land(b, ends[i]);
	b->case_local = saved;
	return true;
}

static bool
Compile(DeviceExprBuilder *b, Node *node)
{
	bool ok;

	if (node == NULL)
		return false;
	/* an input column (also an expression a child computes) */
	if (CompileColumn(b, node, &ok))
		return ok;
	switch (nodeTag(node))
	{
		case T_Const:
			{
				Const *c = (Const *) node;
				int k;
				uint64 word;

				if (DeviceExprTypeKind(c->consttype) < 0)
					return false;
				word = c->constisnull ? 0 : DeviceExprWord(c->constvalue, c->consttype);
				/* a numeric constant the device does not hold would recheck every row */
				if (!c->constisnull && c->consttype == NUMERICOID && !gpuops::expr_num_known(word))
					return false;
				k = AddConst(b, word, c->constisnull);
				return k >= 0 && Emit(b, GPUOPS_EOP_CONST, DeviceExprTypeKind(c->consttype), 0, k);
			}
		case T_Param:
			{
				Param *p = (Param *) node;
				int k;

				if ((p->paramkind != PARAM_EXTERN && p->paramkind != PARAM_EXEC) ||
					DeviceExprTypeKind(p->paramtype) < 0)
					return false;
				k = AddConst(b, 0, true); /* bound at each scan's start */
				if (k < 0)
					return false;
				b->in->params = lappend(b->in->params, p);
				b->in->param_slots = lappend_int(b->in->param_slots, k);
				return Emit(b, GPUOPS_EOP_CONST, DeviceExprTypeKind(p->paramtype), 0, k);
			}
		case T_RelabelType:
			{
				RelabelType *r = (RelabelType *) node;
				Oid from = exprType((Node *) r->arg);

				/* a binary-compatible relabeling keeps the representation */
				if (DeviceExprTypeKind(r->resulttype) < 0 || from != r->resulttype)
					return false;
				return Compile(b, (Node *) r->arg);
			}
		case T_OpExpr:
			{
				OpExpr *op = (OpExpr *) node;

				set_opfuncid(op);
				return !op->opretset &&
					DeviceExprCompileCall(b, op->opfuncid, op->args, op->opresulttype);
			}
		case T_FuncExpr:
			{
				FuncExpr *f = (FuncExpr *) node;

				return !f->funcretset &&
					DeviceExprCompileCall(b, f->funcid, f->args, f->funcresulttype);
			}
		case T_DistinctExpr:
			{
				DistinctExpr *d = (DistinctExpr *) node;
				const FuncMap *m;

				set_opfuncid((OpExpr *) d);
				m = DeviceExprLookupFunc(d->opfuncid);
				if (m == NULL || m->op != GPUOPS_EOP_CMP || m->sub != GPUOPS_CMP_EQ ||
					list_length(d->args) != 2)
					return false;
				return Compile(b, (Node *) linitial(d->args)) &&
					Compile(b, (Node *) lsecond(d->args)) &&
					Emit(b, GPUOPS_EOP_CMP, m->type, GPUOPS_CMP_DISTINCT, 0);
			}
		case T_ScalarArrayOpExpr:
			{
				ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) node;

				set_sa_opfuncid(saop);
				return DeviceExprCompileArrayOp(b, saop);
			}
		case T_BoolExpr:
			{
				BoolExpr *be = (BoolExpr *) node;

				if (be->boolop == NOT_EXPR)
					return Compile(b, (Node *) linitial(be->args)) &&
						Emit(b, GPUOPS_EOP_NOT, GPUOPS_ET_INT, 0, 0);
				return CompileAndOr(b, be->args, be->boolop == AND_EXPR);
			}
		case T_NullTest:
			{
				NullTest *nt = (NullTest *) node;

				if (nt->argisrow || DeviceExprTypeKind(exprType((Node *) nt->arg)) < 0)
					return false;
				return Compile(b, (Node *) nt->arg) &&
					Emit(b, GPUOPS_EOP_IS_NULL, 0, nt->nulltesttype == IS_NOT_NULL, 0);
			}
		case T_BooleanTest:
			{
				BooleanTest *bt = (BooleanTest *) node;

				if (!Compile(b, (Node *) bt->arg))
					return false;
				switch (bt->booltesttype)
				{
					case IS_TRUE:
						return Emit(b, GPUOPS_EOP_BOOL_TEST, 0, GPUOPS_BT_IS_TRUE, 0);
					case IS_NOT_TRUE:
						return Emit(b, GPUOPS_EOP_BOOL_TEST, 0, GPUOPS_BT_IS_NOT_TRUE, 0);
					case IS_FALSE:
						return Emit(b, GPUOPS_EOP_BOOL_TEST, 0, GPUOPS_BT_IS_FALSE, 0);
					case IS_NOT_FALSE:
						return Emit(b, GPUOPS_EOP_BOOL_TEST, 0, GPUOPS_BT_IS_NOT_FALSE, 0);
					case IS_UNKNOWN:
						return Emit(b, GPUOPS_EOP_IS_NULL, 0, 0, 0);
					default:
						return Emit(b, GPUOPS_EOP_IS_NULL, 0, 1, 0);
				}
			}
		case T_CaseExpr:
			return CompileCase(b, (CaseExpr *) node);
		case T_CaseTestExpr:
			return b->case_local >= 0 && Emit(b, GPUOPS_EOP_LOAD, 0, 0, b->case_local);
		default:
			return false;
	}
}

bool
DeviceExprCompileNode(DeviceExprBuilder *b, Node *node)
{
	return Compile(b, node);
}

bool
DeviceExprCompile(List *quals, DeviceExprInputs *inputs, GpuopsExprProgram *prog)
{
	DeviceExprBuilder b;
	Node *expr;

	if (quals == NIL)
		return false;
	inputs->nouter = inputs->ninner = 0;
	inputs->params = inputs->param_slots = NIL;
	DeviceExprBeginProgram(&b, prog, inputs);
	expr = list_length(quals) == 1 ? (Node *) linitial(quals)
								   : (Node *) makeBoolExpr(AND_EXPR, quals, -1);
	if (exprType(expr) != BOOLOID || !Compile(&b, expr))
		return false;
	return gpuops::expr_validate(prog, Max(inputs->nouter, 1), Max(inputs->ninner, 1)) == NULL;
}

static bool
ContainsParam(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return true;
	return expression_tree_walker(node, (bool (*)())(void (*)(void)) ContainsParam, context);
}

/*
 * A value program for expr over the inputs' columns, new columns added
 * only with add_columns, every step one that stops only with an error
 * PostgreSQL raises with errors_only; the inputs are left as they were on
 * failure.  Params would need constant slots bound at run time in this
 * program too: none.
 */
static bool
CompileValueProgram(Expr *expr, DeviceExprInputs *inputs, GpuopsExprProgram *prog, bool add_columns,
					bool errors_only)
{
	DeviceExprInputs saved = *inputs;
	DeviceExprBuilder b;
	bool ok;

	if (ContainsParam((Node *) expr, NULL))
		return false;
	DeviceExprBeginProgram(&b, prog, inputs);
	ok = Compile(&b, (Node *) expr) && inputs->ninner == saved.ninner &&
		(add_columns || inputs->nouter == saved.nouter) &&
		gpuops::expr_validate(prog, Max(inputs->nouter, 1), 0) == NULL;
	for (int pc = 0; ok && errors_only && pc < prog->nsteps; pc++)
		ok = gpuops::expr_step_stops_with_error(&prog->steps[pc]);
	if (!ok)
		*inputs = saved;
	return ok;
}

bool
DeviceExprCompileValue(Expr *expr, DeviceExprInputs *inputs, GpuopsExprProgram *prog)
{
	return DeviceExprWordsOrdered(exprType((Node *) expr)) &&
		CompileValueProgram(expr, inputs, prog, false, false);
}

bool
DeviceExprCompileInput(Expr *expr, DeviceExprInputs *inputs, GpuopsExprProgram *prog)
{
	Oid type = exprType((Node *) expr);

	return (type == INT2OID || type == INT4OID || type == INT8OID || type == FLOAT4OID ||
			type == FLOAT8OID) &&
		CompileValueProgram(expr, inputs, prog, true, true);
}

bool
DeviceExprCompileAggInput(Expr *expr, DeviceExprInputs *inputs, GpuopsExprProgram *prog,
						  int *num_scale)
{
	Oid type = exprType((Node *) expr);

	if (num_scale != NULL)
		*num_scale = -1;
	if (DeviceExprTypeKind(type) < 0)
		return false;
	if (type == NUMERICOID && num_scale != NULL)
	{
		*num_scale = NumericDisplayScale((Node *) expr);
		if (*num_scale < 0 || *num_scale > 38)
			return false;
	}
	/* any stop: the caller's escape (PostgreSQL decides the row) */
	return CompileValueProgram(expr, inputs, prog, true, false);
}
