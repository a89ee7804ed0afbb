/*
 * device_expr_values.cpp
 *    Values as the device programs' 64-bit words: constants and Params
 *    (bound per scan), the input columns staged for a program, and a
 *    program's form in a plan.
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
#include "expr_eval.hpp"
#include "join_plan.h"
#include "numeric_decode.h"
#include "plan_fields.h"

uint64
DeviceExprWord(Datum value, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return (uint64) (int64) DatumGetInt16(value);
		case INT4OID:
		case DATEOID:
			return (uint64) (int64) DatumGetInt32(value);
		case BOOLOID:
			return DatumGetBool(value) ? 1 : 0;
		case FLOAT4OID:
			return gpuops::expr_from_double((double) DatumGetFloat4(value));
		case FLOAT8OID:
			return gpuops::expr_from_double(DatumGetFloat8(value));
		case NUMERICOID:
			return GpuopsNumericExprWord(DatumGetPointer(value));
		default:
			return (uint64) DatumGetInt64(value);
	}
}

/*
 * Plan storage: nsteps, nconsts, each step as (op | type << 8 | sub << 16)
 * and arg, each constant as its low and high 32 bits and null flag.
 */
List *
DeviceExprProgramToList(const GpuopsExprProgram *prog)
{
	List *l = list_make2_int(prog->nsteps, prog->nconsts);

	for (int i = 0; i < prog->nsteps; i++)
	{
		const GpuopsExprStep *s = &prog->steps[i];

		l = lappend_int(l, s->op | (s->type << 8) | (s->sub << 16));
		l = lappend_int(l, s->arg);
	}
	for (int i = 0; i < prog->nconsts; i++)
	{
		l = lappend_int(l, (int) (uint32) prog->consts[i]);
		l = lappend_int(l, (int) (uint32) (prog->consts[i] >> 32));
		l = lappend_int(l, prog->const_null[i]);
	}
	return l;
}

void
DeviceExprProgramFromList(List *l, GpuopsExprProgram *prog)
{
	int at = 2;

	memset(prog, 0, sizeof(*prog));
	prog->nsteps = linitial_int(l);
	prog->nconsts = lsecond_int(l);
	if (prog->nsteps < 0 || prog->nsteps > GPUOPS_EXPR_MAX_STEPS || prog->nconsts < 0 ||
		prog->nconsts > GPUOPS_EXPR_MAX_CONSTS ||
		list_length(l) != 2 + 2 * prog->nsteps + 3 * prog->nconsts)
		elog(ERROR, "gpuops: malformed device program in plan");
	for (int i = 0; i < prog->nsteps; i++)
	{
		uint32 w = (uint32) list_nth_int(l, at++);

		prog->steps[i].op = (uint8) (w & 0xff);
		prog->steps[i].type = (uint8) ((w >> 8) & 0xff);
		prog->steps[i].sub = (uint8) ((w >> 16) & 0xff);
		prog->steps[i].arg = list_nth_int(l, at++);
	}
	for (int i = 0; i < prog->nconsts; i++)
	{
		uint64 lo = (uint32) list_nth_int(l, at++);
		uint64 hi = (uint32) list_nth_int(l, at++);

		prog->consts[i] = lo | (hi << 32);
		prog->const_null[i] = (uint8) list_nth_int(l, at++);
	}
}

/* Rows [at, at + n) of one batch's column as device words. */
static void
ColumnWords(const GpuopsRowStore *store, const GpuopsBatch *batch, int col, Oid type, uint32 at,
			uint32 n, uint64 *d)
{
	const char *v = batch->values[col] + (Size) at * store->cols[col].width;

	switch (type)
	{
		case INT2OID:
			for (uint32 i = 0; i < n; i++)
				d[i] = (uint64) (int64) ((const int16 *) v)[i];
			break;
		case INT4OID:
		case DATEOID:
			for (uint32 i = 0; i < n; i++)
				d[i] = (uint64) (int64) ((const int32 *) v)[i];
			break;
		case BOOLOID:
			for (uint32 i = 0; i < n; i++)
				d[i] = ((const bool *) v)[i] ? 1 : 0;
			break;
		case FLOAT4OID:
			for (uint32 i = 0; i < n; i++)
				d[i] = gpuops::expr_from_double((double) ((const float4 *) v)[i]);
			break;
		case NUMERICOID:
			/* stored numerics (by pointer), decoded in place */
			for (uint32 i = 0; i < n; i++)
			{
				const char *p;

				memcpy(&p, v + (Size) i * sizeof(p), sizeof(p));
				d[i] = GpuopsBatchIsNull(batch, col, at + i) ? 0 : GpuopsNumericExprWord(p);
			}
			break;
		default: /* 8-byte values: the words themselves */
			memcpy(d, v, (Size) n * sizeof(uint64));
			break;
	}
}

void
DeviceExprStageRows(const GpuopsRowStore *store, uint64 first, uint64 n, const int *cols,
					const Oid *types, int ncols, MemoryContext cxt, GpuopsExprColumns *out)
{
	memset(out, 0, sizeof(*out));
	out->ncols = ncols;
	out->nrows = n;
	for (int c = 0; c < ncols; c++)
	{
		uint64 *w = (uint64 *) MemoryContextAllocHuge(cxt, Max(n, 1) * sizeof(uint64));
		uint8 *nulls = NULL;

		/* the range batch by batch, each part converted straight into place */
		for (uint64 done = 0; done < n;)
		{
			uint64 row = first + done;
			const GpuopsBatch *batch = store->batches[row >> GPUOPS_BATCH_SHIFT];
			uint32 at = (uint32) (row & (GPUOPS_BATCH_ROWS - 1));
			uint32 take = (uint32) Min((uint64) (batch->nrows - at), n - done);

			if (batch->nulls[cols[c]])
			{
				if (nulls == NULL)
					nulls = (uint8 *) MemoryContextAllocZero(cxt, Max(n, 1));
				for (uint32 i = 0; i < take; i++)
					nulls[done + i] = GpuopsBatchIsNull(batch, cols[c], at + i);
			}
			ColumnWords(store, batch, cols[c], types[c], at, take, w + done);
			done += take;
		}
		out->words[c] = w;
		out->nulls[c] = nulls;
	}
}

void
DeviceExprStageInto(const GpuopsRowStore *store, const GpuopsBatch *batch, uint32 from, uint32 n,
					const int *cols, const Oid *types, int ncols, uint64 *const *words,
					uint8 *const *nulls, uint32 at)
{
	for (int c = 0; c < ncols; c++)
	{
		uint8 *nb = nulls[c] + at;

		if (batch->nulls[cols[c]] == NULL)
			memset(nb, 0, n);
		else
			for (uint32 i = 0; i < n; i++)
				nb[i] = GpuopsBatchIsNull(batch, cols[c], from + i);
		ColumnWords(store, batch, cols[c], types[c], from, n, words[c] + at);
	}
}

void
DeviceExprBindParams(GpuopsExprProgram *prog, List *param_states, List *param_slots,
					 List *param_types, ExprContext *econtext)
{
	ListCell *ls, *lk, *lt;

	forthree (ls, param_states, lk, param_slots, lt, param_types)
	{
		bool isnull;
		Datum d = ExecEvalExpr((ExprState *) lfirst(ls), econtext, &isnull);
		int k = lfirst_int(lk);

		prog->consts[k] = isnull ? 0 : DeviceExprWord(d, (Oid) lfirst_oid(lt));
		prog->const_null[k] = isnull;
	}
}

void
DeviceExprProgramField(PlanFields &f, GpuopsExprProgram *prog)
{
	List *l = f.reading() ? NIL : DeviceExprProgramToList(prog);

	f.field(&l);
	if (f.reading())
		DeviceExprProgramFromList(l, prog);
}
