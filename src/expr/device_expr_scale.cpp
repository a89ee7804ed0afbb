/*
 * device_expr_scale.cpp
 *    The display scale of a numeric expression, where the plan alone fixes
 *    it (device_expr.h, NumericDisplayScale).
 *
 * Why: a device sums numeric words as integers scaled to one scale S, and
 * the sum's result is that integer divided by 10^S, shown with S decimals.
 * PostgreSQL's sum(numeric) shows the largest display scale among its
 * inputs, and avg(numeric) divides that sum (numeric_div, whose result
 * scale depends on it).  So the device's sum is PostgreSQL's only when
 * every input has display scale S: true where each operation's result
 * scale follows from its operands' scales alone, as numeric.c computes
 * them:
 *  - a column numeric(p, s): every stored value has display scale s
 *    (apply_typmod rounds to s and sets it);
 *  - a constant: its own display scale;
 *  - an integer cast to numeric: 0 (int64_to_numeric);
 *  - + and - (add_var, sub_var): the larger of the two;
 *  - * (numeric_mul: mul_var with rscale d1 + d2): the sum;
 *  - unary minus and abs: the operand's;
 *  - numeric(x, typmod), a cast to numeric(p, s): s.
 * Anything else (division, whose scale depends on the operands' digits; an
 * unconstrained column; CASE, whose branches may differ; a Param) has no
 * static scale: -1.  NaN and infinities have no scale either, but they
 * have no device word: a row holding one escapes (gpuops_query.h).
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"
}

#include "device_expr.h"

/* numeric.c's NUMERIC_DSCALE_MAX */
#define SCALE_MAX 1000

/* The scale of numeric(p, s) from its typmod (PostgreSQL 15: s may be negative), or -1. */
static int
TypmodScale(int32 typmod)
{
	int scale;

	if (typmod < (int32) VARHDRSZ)
		return -1;
	scale = ((((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024);
	/* a negative scale rounds to tens, hundreds...: display scale 0, but keep it simple */
	return scale >= 0 ? scale : -1;
}

static int
ConstScale(Const *c)
{
	Numeric n;

	if (c->constisnull)
		return -1;
	n = DatumGetNumeric(c->constvalue);
	if (numeric_is_nan(n) || numeric_is_inf(n))
		return -1;
	return DatumGetInt32(DirectFunctionCall1(numeric_scale, NumericGetDatum(n)));
}

static int
Combine(int a, int b, bool sum)
{
	if (a < 0 || b < 0)
		return -1;
	return sum ? Min(a + b, SCALE_MAX) : Max(a, b);
}

static int
CallScale(Oid fn, List *args)
{
	switch (fn)
	{
		case F_NUMERIC_INT2:
		case F_NUMERIC_INT4:
		case F_NUMERIC_INT8:
			return 0;
		case F_NUMERIC_ADD:
		case F_NUMERIC_SUB:
			return list_length(args) == 2
				? Combine(NumericDisplayScale((Node *) linitial(args)),
						  NumericDisplayScale((Node *) lsecond(args)), false)
				: -1;
		case F_NUMERIC_MUL:
			return list_length(args) == 2
				? Combine(NumericDisplayScale((Node *) linitial(args)),
						  NumericDisplayScale((Node *) lsecond(args)), true)
				: -1;
		case F_NUMERIC_UMINUS:
		case F_NUMERIC_ABS:
		case F_ABS_NUMERIC:
			return list_length(args) == 1 ? NumericDisplayScale((Node *) linitial(args)) : -1;
		case F_NUMERIC_NUMERIC_INT4:
			{
				Const *tm = list_length(args) == 2 ? (Const *) lsecond(args) : NULL;

				/* numeric(x, typmod): the typmod a constant */
				if (tm == NULL || !IsA(tm, Const) || tm->constisnull ||
					NumericDisplayScale((Node *) linitial(args)) < 0)
					return -1;
				return TypmodScale(DatumGetInt32(tm->constvalue));
			}
		default:
			return -1;
	}
}

int
NumericDisplayScale(Node *node)
{
	if (node == NULL || exprType(node) != NUMERICOID)
		return -1;
	switch (nodeTag(node))
	{
		case T_Var:
			return TypmodScale(((Var *) node)->vartypmod);
		case T_Const:
			return ConstScale((Const *) node);
		case T_RelabelType:
			return NumericDisplayScale((Node *) ((RelabelType *) node)->arg);
		case T_OpExpr:
			{
				OpExpr *op = (OpExpr *) node;

				set_opfuncid(op);
				return CallScale(op->opfuncid, op->args);
			}
		case T_FuncExpr:
			{
				FuncExpr *f = (FuncExpr *) node;

				return CallScale(f->funcid, f->args);
			}
		default:
			return -1;
	}
}
