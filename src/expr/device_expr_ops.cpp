/*
 * device_expr_ops.cpp
 *    The device expression compiler's operators and functions: a call of
 *    the catalog's table (device_expr_catalog.cpp), and the forms that take
 *    more than one step or a look at their arguments: timestamp +/- a
 *    constant interval, numeric(p, s), interval comparisons as spans, date
 *    against timestamp, and x op ANY/ALL (array).  Split from
 *    device_expr.cpp, which compiles the rest of an expression and calls in
 *    here for OpExpr, FuncExpr and ScalarArrayOpExpr (device_expr_builder.h).
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "datatype/timestamp.h"
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
#include "numeric_decode.h"

/* timestamp(tz) +/- interval: the interval must be a constant without months */
static bool
CompileTimestampInterval(DeviceExprBuilder *b, const FuncMap *m, List *args, Oid fn)
{
	Node *ival = (Node *) lsecond(args);
	Interval *span;
	int64 days;
	int k;

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
	return DeviceExprCompileNode(b, (Node *) linitial(args)) &&
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
CompileNumericTypmod(DeviceExprBuilder *b, List *args)
{
	Const *tm;
	int32 typmod, precision, scale;

	if (list_length(args) != 2)
		return false;
	tm = (Const *) lsecond(args);
	if (!IsA(tm, Const) || tm->constisnull || !DeviceExprCompileNode(b, (Node *) linitial(args)))
		return false;
	typmod = DatumGetInt32(tm->constvalue);
	if (typmod < (int32) VARHDRSZ)
		return true; /* no typmod: the value as it is */
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
	Oid fn;
	uint8 cmp; /* GpuopsExprCmp */
} IntervalCmp;

static const IntervalCmp interval_cmp[] = {
	{F_INTERVAL_EQ, GPUOPS_CMP_EQ}, {F_INTERVAL_NE, GPUOPS_CMP_NE}, {F_INTERVAL_LT, GPUOPS_CMP_LT},
	{F_INTERVAL_LE, GPUOPS_CMP_LE}, {F_INTERVAL_GT, GPUOPS_CMP_GT}, {F_INTERVAL_GE, GPUOPS_CMP_GE},
};

/* An interval operand: a constant whose span fits 64 bits, or ts - ts. */
static bool
CompileIntervalSpan(DeviceExprBuilder *b, Node *node)
{
	List *args = NIL;
	Oid fn = InvalidOid;

	if (IsA(node, Const) && ((Const *) node)->consttype == INTERVALOID)
	{
		Const *c = (Const *) node;
		Interval *iv;
		__int128 span;
		int k;

		if (c->constisnull)
			k = AddConst(b, 0, true);
		else
		{
			iv = DatumGetIntervalP(c->constvalue);
			span = (__int128) iv->time + ((__int128) iv->month * 30 + iv->day) * USECS_PER_DAY;
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
		DeviceExprCompileNode(b, (Node *) linitial(args)) &&
		DeviceExprCompileNode(b, (Node *) lsecond(args)) &&
		Emit(b, GPUOPS_EOP_TS_MI, GPUOPS_ET_INT, 0, 0);
}

/* interval op interval: false if fn is not one */
static bool
CompileIntervalCmp(DeviceExprBuilder *b, Oid fn, List *args, bool *ok)
{
	for (size_t i = 0; i < lengthof(interval_cmp); i++)
	{
		if (interval_cmp[i].fn != fn)
			continue;
		*ok = list_length(args) == 2 && CompileIntervalSpan(b, (Node *) linitial(args)) &&
			CompileIntervalSpan(b, (Node *) lsecond(args)) &&
			Emit(b, GPUOPS_EOP_CMP, GPUOPS_ET_INT, interval_cmp[i].cmp, 0);
		return true;
	}
	return false;
}

/* date op timestamp, or timestamp op date: false if fn is not one */
static bool
CompileDateTimestampCmp(DeviceExprBuilder *b, Oid fn, List *args, bool *ok)
{
	const DateTimestampCmp *m = DeviceExprLookupDateTimestampCmp(fn);

	if (m != NULL)
	{
		*ok = list_length(args) == 2 && DeviceExprCompileNode(b, (Node *) linitial(args)) &&
			(m->date_arg != 0 || Emit(b, GPUOPS_EOP_DATE_TS, GPUOPS_ET_INT, 1, 0)) &&
			DeviceExprCompileNode(b, (Node *) lsecond(args)) &&
			(m->date_arg != 1 || Emit(b, GPUOPS_EOP_DATE_TS, GPUOPS_ET_INT, 1, 0)) &&
			Emit(b, GPUOPS_EOP_CMP, GPUOPS_ET_INT, m->cmp, 0);
		return true;
	}
	return false;
}

/* An operator or function call of the table, arguments left to right. */
bool
DeviceExprCompileCall(DeviceExprBuilder *b, Oid fn, List *args, Oid result_type)
{
	const FuncMap *m = DeviceExprLookupFunc(fn);
	ListCell *lc;
	int sub;
	bool ok;

	if (CompileDateTimestampCmp(b, fn, args, &ok) || CompileIntervalCmp(b, fn, args, &ok))
		return ok;
	if (m == NULL || DeviceExprTypeKind(result_type) < 0)
		return false;
	if (m->op == GPUOPS_EOP_TS_PL)
		return CompileTimestampInterval(b, m, args, fn);
	if (m->op == GPUOPS_EOP_NUM_ROUND)
		return CompileNumericTypmod(b, args);
	foreach (lc, args)
	{
		if (DeviceExprTypeKind(exprType((Node *) lfirst(lc))) < 0 ||
			!DeviceExprCompileNode(b, (Node *) lfirst(lc)))
			return false;
	}
	/* arithmetic and casts: the result's width */
	sub = m->op != GPUOPS_EOP_CMP && gpuops::expr_op_reads_kind(m->op)
		? DeviceExprTypeWidth(result_type)
		: m->sub;
	return Emit(b, m->op, m->type, sub, 0);
}

/* x op ANY/ALL (array): an OR (AND) of comparisons with each element */
bool
DeviceExprCompileArrayOp(DeviceExprBuilder *b, ScalarArrayOpExpr *saop)
{
	Node *scalar = (Node *) linitial(saop->args);
	Node *array = (Node *) lsecond(saop->args);
	const FuncMap *m = DeviceExprLookupFunc(saop->opfuncid);
	List *elems = NIL;
	Oid elemtype;
	int local, jumps[GPUOPS_EXPR_MAX_STEPS], njumps = 0;
	ListCell *lc;

	if (m == NULL || m->op != GPUOPS_EOP_CMP || DeviceExprTypeKind(exprType(scalar)) < 0)
		return false;
	if (IsA(array, Const))
	{
		Const *c = (Const *) array;
		ArrayType *arr;
		Datum *values;
		bool *nulls;
		int n;
		int16 typlen;
		bool typbyval;
		char typalign;

		if (c->constisnull)
			return false;
		arr = DatumGetArrayTypeP(c->constvalue);
		elemtype = ARR_ELEMTYPE(arr);
		if (DeviceExprTypeKind(elemtype) < 0 || ARR_NDIM(arr) > 1)
			return false;
		get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
		deconstruct_array(arr, elemtype, typlen, typbyval, typalign, &values, &nulls, &n);
		for (int i = 0; i < n; i++)
			elems = lappend(
				elems, makeConst(elemtype, -1, InvalidOid, typlen, values[i], nulls[i], typbyval));
	}
	else if (IsA(array, ArrayExpr) && !((ArrayExpr *) array)->multidims)
		elems = ((ArrayExpr *) array)->elements;
	else
		return false;
	if (elems == NIL)
	{
		/* an empty array: ANY is false and ALL true, whatever the scalar */
		int k = AddConst(b, saop->useOr ? 0 : 1, false);

		return k >= 0 && Emit(b, GPUOPS_EOP_CONST, GPUOPS_ET_INT, 0, k);
	}
	if (b->nlocals >= GPUOPS_EXPR_MAX_LOCALS)
		return false;
	local = b->nlocals++;
	if (!DeviceExprCompileNode(b, scalar) || !Emit(b, GPUOPS_EOP_STORE, 0, 0, local) ||
		!Emit(b, GPUOPS_EOP_POP, 0, 0, 0))
		return false;
	foreach (lc, elems)
	{
		if (DeviceExprTypeKind(exprType((Node *) lfirst(lc))) < 0 ||
			!Emit(b, GPUOPS_EOP_LOAD, 0, 0, local) ||
			!DeviceExprCompileNode(b, (Node *) lfirst(lc)) ||
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
