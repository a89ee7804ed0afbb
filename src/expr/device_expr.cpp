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
#include "device_expr_catalog.h"
#include "expr_eval.hpp"
#include "join_plan.h"
#include "numeric_decode.h"
#include "plan_fields.h"

typedef struct Builder
{
	GpuopsExprProgram *prog;
	DeviceExprInputs *in;
	int			nlocals;
	int			case_local;		/* the innermost CASE's value, -1 outside */
} Builder;

static bool Compile(Builder *b, Node *node);

/* A builder emitting into an emptied prog, reading inputs' columns. */
static void
BeginProgram(Builder *b, GpuopsExprProgram *prog, DeviceExprInputs *inputs)
{
	memset(prog, 0, sizeof(*prog));
	b->prog = prog;
	b->in = inputs;
	b->nlocals = 0;
	b->case_local = -1;
}

static bool
Emit(Builder *b, int op, int type, int sub, int arg)
{
	GpuopsExprStep *s;

	if (b->prog->nsteps >= GPUOPS_EXPR_MAX_STEPS)
		return false;
	s = &b->prog->steps[b->prog->nsteps++];
	s->op = (uint8) op;
	s->type = (uint8) type;
	s->sub = (uint8) sub;
	s->pad = 0;
	s->arg = arg;
	return true;
}

/* Sets jump `at` to land on the next step emitted. */
static void
Land(Builder *b, int at)
{
	b->prog->steps[at].arg = b->prog->nsteps;
}

static int
AddConst(Builder *b, uint64 word, bool isnull)
{
	int			k = b->prog->nconsts;

	if (k >= GPUOPS_EXPR_MAX_CONSTS)
		return -1;
	b->prog->consts[k] = isnull ? 0 : word;
	b->prog->const_null[k] = isnull;
	b->prog->nconsts++;
	return k;
}

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
CompileColumn(Builder *b, Node *node, bool *ok)
{
	Oid			type = exprType(node);
	int			col;
	int			pc;

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

/* timestamp(tz) +/- interval: the interval must be a constant without months */
static bool
CompileTimestampInterval(Builder *b, const FuncMap *m, List *args, Oid fn)
{
	Node	   *ival = (Node *) lsecond(args);
	Interval   *span;
	int64		days;
	int			k;

	if (!IsA(ival, Const) || ((Const *) ival)->constisnull)
		return false;
	span = DatumGetIntervalP(((Const *) ival)->constvalue);
	if (span->month != 0)
		return false;
	/* a day of a timestamptz depends on the time zone's daylight saving */
	if (span->day != 0 && (fn == F_TIMESTAMPTZ_PL_INTERVAL || fn == F_TIMESTAMPTZ_MI_INTERVAL))
		return false;
	days = (int64) span->day * USECS_PER_DAY;
	k = AddConst(b, (uint64) days, false);
	if (k < 0 || AddConst(b, (uint64) span->time, false) < 0)
		return false;
	return Compile(b, (Node *) linitial(args)) &&
		((fn != F_DATE_PL_INTERVAL && fn != F_DATE_MI_INTERVAL) ||
		 Emit(b, GPUOPS_EOP_DATE_TS, GPUOPS_ET_INT, 0, 0)) &&
		Emit(b, m->op, m->type, m->sub, k);
}

/*
 * numeric(x, typmod), a cast to numeric(p, s): the typmod a constant, the
 * scale 0..18 and at most the precision (numeric.c also allows scales
 * outside that; those stay PostgreSQL's).
 */
static bool
CompileNumericTypmod(Builder *b, List *args)
{
	Const	   *tm;
	int32		typmod,
				precision,
				scale;

	if (list_length(args) != 2)
		return false;
	tm = (Const *) lsecond(args);
	if (!IsA(tm, Const) || tm->constisnull || !Compile(b, (Node *) linitial(args)))
		return false;
	typmod = DatumGetInt32(tm->constvalue);
	if (typmod < (int32) VARHDRSZ)
		return true;			/* no typmod: the value as it is */
	precision = ((typmod - VARHDRSZ) >> 16) & 0xffff;
	scale = (((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024;
	if (scale < 0 || scale > gpuops::kNumMaxScale || scale > precision || precision < 1)
		return false;
	return Emit(b, GPUOPS_EOP_NUM_ROUND, GPUOPS_ET_NUM, scale, precision);
}

/*
 * Interval comparisons.  An interval is on the device only as its span in
 * microseconds (interval_cmp_value: months as 30 days), which is all a
 * comparison looks at: a constant's, or a timestamp difference's
 * (timestamp_mi: the difference, justified into days and time).
 */
typedef struct IntervalCmp
{
	Oid			fn;
	uint8		cmp;			/* GpuopsExprCmp */
} IntervalCmp;

static const IntervalCmp interval_cmp[] = {
	{F_INTERVAL_EQ, GPUOPS_CMP_EQ}, {F_INTERVAL_NE, GPUOPS_CMP_NE},
	{F_INTERVAL_LT, GPUOPS_CMP_LT}, {F_INTERVAL_LE, GPUOPS_CMP_LE},
	{F_INTERVAL_GT, GPUOPS_CMP_GT}, {F_INTERVAL_GE, GPUOPS_CMP_GE},
};

/* An interval operand: a constant whose span fits 64 bits, or ts - ts. */
static bool
CompileIntervalSpan(Builder *b, Node *node)
{
	List	   *args = NIL;
	Oid			fn = InvalidOid;

	if (IsA(node, Const) && ((Const *) node)->consttype == INTERVALOID)
	{
		Const	   *c = (Const *) node;
		Interval   *iv;
		__int128	span;
		int			k;

		if (c->constisnull)
			k = AddConst(b, 0, true);
		else
		{
			iv = DatumGetIntervalP(c->constvalue);
			span = (__int128) iv->time +
				((__int128) iv->month * 30 + iv->day) * USECS_PER_DAY;
			if (span < PG_INT64_MIN || span > PG_INT64_MAX)
				return false;
			k = AddConst(b, (uint64) (int64) span, false);
		}
		return k >= 0 && Emit(b, GPUOPS_EOP_CONST, GPUOPS_ET_INT, 0, k);
	}
	if (IsA(node, OpExpr))
	{
		set_opfuncid((OpExpr *) node);
		fn = ((OpExpr *) node)->opfuncid;
		args = ((OpExpr *) node)->args;
	}
	else if (IsA(node, FuncExpr))
	{
		fn = ((FuncExpr *) node)->funcid;
		args = ((FuncExpr *) node)->args;
	}
	return (fn == F_TIMESTAMP_MI || fn == F_TIMESTAMPTZ_MI) && list_length(args) == 2 &&
		Compile(b, (Node *) linitial(args)) && Compile(b, (Node *) lsecond(args)) &&
		Emit(b, GPUOPS_EOP_TS_MI, GPUOPS_ET_INT, 0, 0);
}

/* interval op interval: false if fn is not one */
static bool
CompileIntervalCmp(Builder *b, Oid fn, List *args, bool *ok)
{
	for (size_t i = 0; i < lengthof(interval_cmp); i++)
	{
		if (interval_cmp[i].fn != fn)
			continue;
		*ok = list_length(args) == 2 &&
			CompileIntervalSpan(b, (Node *) linitial(args)) &&
			CompileIntervalSpan(b, (Node *) lsecond(args)) &&
			Emit(b, GPUOPS_EOP_CMP, GPUOPS_ET_INT, interval_cmp[i].cmp, 0);
		return true;
	}
	return false;
}

/* date op timestamp, or timestamp op date: false if fn is not one */
static bool
CompileDateTimestampCmp(Builder *b, Oid fn, List *args, bool *ok)
{
	const DateTimestampCmp *m = DeviceExprLookupDateTimestampCmp(fn);

	if (m != NULL)
	{
		*ok = list_length(args) == 2 &&
			Compile(b, (Node *) linitial(args)) &&
			(m->date_arg != 0 || Emit(b, GPUOPS_EOP_DATE_TS, GPUOPS_ET_INT, 1, 0)) &&
			Compile(b, (Node *) lsecond(args)) &&
			(m->date_arg != 1 || Emit(b, GPUOPS_EOP_DATE_TS, GPUOPS_ET_INT, 1, 0)) &&
			Emit(b, GPUOPS_EOP_CMP, GPUOPS_ET_INT, m->cmp, 0);
		return true;
	}
	return false;
}

/* An operator or function call of the table, arguments left to right. */
static bool
CompileCall(Builder *b, Oid fn, List *args, Oid result_type)
{
	const FuncMap *m = DeviceExprLookupFunc(fn);
	ListCell   *lc;
	int			sub;
	bool		ok;

	if (CompileDateTimestampCmp(b, fn, args, &ok) || CompileIntervalCmp(b, fn, args, &ok))
		return ok;
	if (m == NULL || DeviceExprTypeKind(result_type) < 0)
		return false;
	if (m->op == GPUOPS_EOP_TS_PL)
		return CompileTimestampInterval(b, m, args, fn);
	if (m->op == GPUOPS_EOP_NUM_ROUND)
		return CompileNumericTypmod(b, args);
	foreach(lc, args)
	{
		if (DeviceExprTypeKind(exprType((Node *) lfirst(lc))) < 0 || !Compile(b, (Node *) lfirst(lc)))
			return false;
	}
	/* arithmetic and casts: the result's width */
	sub = m->op != GPUOPS_EOP_CMP && gpuops::expr_op_reads_kind(m->op) ? DeviceExprTypeWidth(result_type)
		: m->sub;
	return Emit(b, m->op, m->type, sub, 0);
}

/* AND/OR of the args, stopping at the first that decides, as PostgreSQL does */
static bool
CompileAndOr(Builder *b, List *args, bool is_and)
{
	int			jumps[GPUOPS_EXPR_MAX_STEPS];
	int			njumps = 0;
	ListCell   *lc;

	foreach(lc, args)
	{
		if (!Compile(b, (Node *) lfirst(lc)))
			return false;
		if (lc != list_head(args) &&
			!Emit(b, is_and ? GPUOPS_EOP_AND : GPUOPS_EOP_OR, GPUOPS_ET_INT, 0, 0))
			return false;
		if (lnext(args, lc) != NULL)
		{
			jumps[njumps++] = b->prog->nsteps;
			if (!Emit(b, is_and ? GPUOPS_EOP_JUMP_IF_FALSE : GPUOPS_EOP_JUMP_IF_TRUE,
					  GPUOPS_ET_INT, 0, 0))
				return false;
		}
	}
	for (int i = 0; i < njumps; i++)
		Land(b, jumps[i]);
	return true;
}

/* x op ANY/ALL (array): an OR (AND) of comparisons with each element */
static bool
CompileArrayOp(Builder *b, ScalarArrayOpExpr *saop)
{
	Node	   *scalar = (Node *) linitial(saop->args);
	Node	   *array = (Node *) lsecond(saop->args);
	const FuncMap *m = DeviceExprLookupFunc(saop->opfuncid);
	List	   *elems = NIL;
	Oid			elemtype;
	int			local,
				jumps[GPUOPS_EXPR_MAX_STEPS],
				njumps = 0;
	ListCell   *lc;

	if (m == NULL || m->op != GPUOPS_EOP_CMP || DeviceExprTypeKind(exprType(scalar)) < 0)
		return false;
	if (IsA(array, Const))
	{
		Const	   *c = (Const *) array;
		ArrayType  *arr;
		Datum	   *values;
		bool	   *nulls;
		int			n;
		int16		typlen;
		bool		typbyval;
		char		typalign;

		if (c->constisnull)
			return false;
		arr = DatumGetArrayTypeP(c->constvalue);
		elemtype = ARR_ELEMTYPE(arr);
		if (DeviceExprTypeKind(elemtype) < 0 || ARR_NDIM(arr) > 1)
			return false;
		get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
		deconstruct_array(arr, elemtype, typlen, typbyval, typalign, &values, &nulls, &n);
		for (int i = 0; i < n; i++)
			elems = lappend(elems, makeConst(elemtype, -1, InvalidOid, typlen, values[i],
											 nulls[i], typbyval));
	}
	else if (IsA(array, ArrayExpr) && !((ArrayExpr *) array)->multidims)
		elems = ((ArrayExpr *) array)->elements;
	else
		return false;
	if (elems == NIL)
	{
		/* an empty array: ANY is false and ALL true, whatever the scalar */
		int			k = AddConst(b, saop->useOr ? 0 : 1, false);

		return k >= 0 && Emit(b, GPUOPS_EOP_CONST, GPUOPS_ET_INT, 0, k);
	}
	if (b->nlocals >= GPUOPS_EXPR_MAX_LOCALS)
		return false;
	local = b->nlocals++;
	if (!Compile(b, scalar) || !Emit(b, GPUOPS_EOP_STORE, 0, 0, local) ||
		!Emit(b, GPUOPS_EOP_POP, 0, 0, 0))
		return false;
	foreach(lc, elems)
	{
		if (DeviceExprTypeKind(exprType((Node *) lfirst(lc))) < 0 ||
			!Emit(b, GPUOPS_EOP_LOAD, 0, 0, local) || !Compile(b, (Node *) lfirst(lc)) ||
			!Emit(b, GPUOPS_EOP_CMP, m->type, m->sub, 0))
			return false;
		if (lc != list_head(elems) &&
			!Emit(b, saop->useOr ? GPUOPS_EOP_OR : GPUOPS_EOP_AND, GPUOPS_ET_INT, 0, 0))
			return false;
		if (lnext(elems, lc) != NULL)
		{
			if (njumps >= GPUOPS_EXPR_MAX_STEPS)
				return false;
			jumps[njumps++] = b->prog->nsteps;
			if (!Emit(b, saop->useOr ? GPUOPS_EOP_JUMP_IF_TRUE : GPUOPS_EOP_JUMP_IF_FALSE,
					  GPUOPS_ET_INT, 0, 0))
				return false;
		}
	}
	for (int i = 0; i < njumps; i++)
		Land(b, jumps[i]);
	return true;
}

static bool
CompileCase(Builder *b, CaseExpr *ce)
{
	int			ends[GPUOPS_EXPR_MAX_STEPS];
	int			nends = 0;
	int			saved = b->case_local;
	ListCell   *lc;

	if (DeviceExprTypeKind(ce->casetype) < 0)
		return false;
	if (ce->arg)
	{
		/* CASE x WHEN ...: x once, read by each WHEN's CaseTestExpr */
		if (b->nlocals >= GPUOPS_EXPR_MAX_LOCALS || DeviceExprTypeKind(exprType((Node *) ce->arg)) < 0)
			return false;
		b->case_local = b->nlocals++;
		if (!Compile(b, (Node *) ce->arg) || !Emit(b, GPUOPS_EOP_STORE, 0, 0, b->case_local) ||
			!Emit(b, GPUOPS_EOP_POP, 0, 0, 0))
			return false;
	}
	foreach(lc, ce->args)
	{
		CaseWhen   *w = lfirst_node(CaseWhen, lc);
		int			skip;

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
Compile(Builder *b, Node *node)
{
	bool		ok;

	if (node == NULL)
		return false;
	/* an input column (also an expression a child computes) */
	if (CompileColumn(b, node, &ok))
		return ok;
	switch (nodeTag(node))
	{
		case T_Const:
			{
				Const	   *c = (Const *) node;
				int			k;
				uint64		word;

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
				Param	   *p = (Param *) node;
				int			k;

				if ((p->paramkind != PARAM_EXTERN && p->paramkind != PARAM_EXEC) ||
					DeviceExprTypeKind(p->paramtype) < 0)
					return false;
				k = AddConst(b, 0, true);	/* bound at each scan's start */
				if (k < 0)
					return false;
				b->in->params = lappend(b->in->params, p);
				b->in->param_slots = lappend_int(b->in->param_slots, k);
				return Emit(b, GPUOPS_EOP_CONST, DeviceExprTypeKind(p->paramtype), 0, k);
			}
		case T_RelabelType:
			{
				RelabelType *r = (RelabelType *) node;
				Oid			from = exprType((Node *) r->arg);

				/* a binary-compatible relabeling keeps the representation */
				if (DeviceExprTypeKind(r->resulttype) < 0 || from != r->resulttype)
					return false;
				return Compile(b, (Node *) r->arg);
			}
		case T_OpExpr:
			{
				OpExpr	   *op = (OpExpr *) node;

				set_opfuncid(op);
				return !op->opretset && CompileCall(b, op->opfuncid, op->args, op->opresulttype);
			}
		case T_FuncExpr:
			{
				FuncExpr   *f = (FuncExpr *) node;

				return !f->funcretset && CompileCall(b, f->funcid, f->args, f->funcresulttype);
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
				return CompileArrayOp(b, saop);
			}
		case T_BoolExpr:
			{
				BoolExpr   *be = (BoolExpr *) node;

				if (be->boolop == NOT_EXPR)
					return Compile(b, (Node *) linitial(be->args)) &&
						Emit(b, GPUOPS_EOP_NOT, GPUOPS_ET_INT, 0, 0);
				return CompileAndOr(b, be->args, be->boolop == AND_EXPR);
			}
		case T_NullTest:
			{
				NullTest   *nt = (NullTest *) node;

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
DeviceExprCompile(List *quals, DeviceExprInputs *inputs, GpuopsExprProgram *prog)
{
	Builder		b;
	Node	   *expr;

	if (quals == NIL)
		return false;
	inputs->nouter = inputs->ninner = 0;
	inputs->params = inputs->param_slots = NIL;
	BeginProgram(&b, prog, inputs);
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
	return expression_tree_walker(node, (bool (*) ()) (void (*)(void)) ContainsParam, context);
}

/*
 * A value program for expr over the inputs' columns, new columns added
 * only with add_columns, every step one that stops only with an error
 * PostgreSQL raises with errors_only; the inputs are left as they were on
 * failure.  Params would need constant slots bound at run time in this
 * program too: none.
 */
static bool
CompileValueProgram(Expr *expr, DeviceExprInputs *inputs, GpuopsExprProgram *prog,
					bool add_columns, bool errors_only)
{
	DeviceExprInputs saved = *inputs;
	Builder		b;
	bool		ok;

	if (ContainsParam((Node *) expr, NULL))
		return false;
	BeginProgram(&b, prog, inputs);
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
	Oid			type = exprType((Node *) expr);

	return (type == INT2OID || type == INT4OID || type == INT8OID || type == FLOAT4OID ||
			type == FLOAT8OID) &&
		CompileValueProgram(expr, inputs, prog, true, true);
}
