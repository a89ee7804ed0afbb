/*
 * device_expr_builder.h
 *    The device expression compiler's program builder, shared by its two
 *    files: device_expr.cpp (columns, constants, Params, boolean logic,
 *    CASE, the tests, and the entry points) and device_expr_ops.cpp
 *    (operators and functions, with the date, time, interval and numeric
 *    forms that take more than one step, and x op ANY/ALL (array)).  The
 *    two call each other: an operator's arguments are expressions.
 *    Used by those two files only.
 */
#ifndef GPUOPS_DEVICE_EXPR_BUILDER_H
#define GPUOPS_DEVICE_EXPR_BUILDER_H

extern "C" {
#include "postgres.h"

#include "nodes/primnodes.h"
}

#include "device_expr.h"

/* A program being compiled, and the inputs whose columns it reads. */
typedef struct DeviceExprBuilder
{
	GpuopsExprProgram *prog;
	DeviceExprInputs *in;
	int nlocals;
	int case_local; /* the innermost CASE's value, -1 outside */
} DeviceExprBuilder;

/*
 * The steps and constants a program is made of.  Short names: this header
 * is private to the compiler's two files.
 */

/* A builder emitting into an emptied prog, reading inputs' columns. */
static inline void
DeviceExprBeginProgram(DeviceExprBuilder *b, GpuopsExprProgram *prog, DeviceExprInputs *inputs)
{
	memset(prog, 0, sizeof(*prog));
	b->prog = prog;
	b->in = inputs;
	b->nlocals = 0;
	b->case_local = -1;
}

static inline bool
Emit(DeviceExprBuilder *b, int op, int type, int sub, int arg)
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
static inline void
Land(DeviceExprBuilder *b, int at)
{
	b->prog->steps[at].arg = b->prog->nsteps;
}

static inline int
AddConst(DeviceExprBuilder *b, uint64 word, bool isnull)
{
	int k = b->prog->nconsts;

	if (k >= GPUOPS_EXPR_MAX_CONSTS)
		return -1;
	b->prog->consts[k] = isnull ? 0 : word;
	b->prog->const_null[k] = isnull;
	b->prog->nconsts++;
	return k;
}

/* device_expr.cpp: any expression, as steps that push its value */
extern bool DeviceExprCompileNode(DeviceExprBuilder *b, Node *node);

/* device_expr_ops.cpp: an operator or function call; x op ANY/ALL (array) */
extern bool DeviceExprCompileCall(DeviceExprBuilder *b, Oid fn, List *args, Oid result_type);
extern bool DeviceExprCompileArrayOp(DeviceExprBuilder *b, ScalarArrayOpExpr *saop);

#endif /* GPUOPS_DEVICE_EXPR_BUILDER_H */
