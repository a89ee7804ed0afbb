/*
 * device_expr.h
 *    Compiling PostgreSQL expressions into device programs
 *    (gpuops_device.h, GpuopsExprProgram), and staging the columns they
 *    read.
 *
 * The planner compiles a node's clauses against the output columns of its
 * two inputs (their path targets, which become the child plans' target
 * lists): a subexpression equal to an input column is read from it, the
 * rest must be operations the interpreter has (device_expr.cpp lists
 * them).  Anything else leaves the clause to PostgreSQL's own evaluator.
 * The program goes into the plan as an integer list; the Params it reads
 * go along as expressions, evaluated once per scan by the executor.
 */
#ifndef GPUOPS_DEVICE_EXPR_H
#define GPUOPS_DEVICE_EXPR_H

extern "C" {
#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/pg_list.h"
#include "nodes/primnodes.h"
}

#include "batch.h"
#include "gpuops_device.h"

/* What a compiled program reads: columns of each side, and Params. */
typedef struct DeviceExprInputs
{
	List *outer_exprs; /* the outer input's output expressions */
	List *inner_exprs; /* the inner one's (NIL: a one-sided program) */
	int nouter;
	int ninner;
	int outer_cols[GPUOPS_EXPR_MAX_COLS]; /* program column -> input column */
	int inner_cols[GPUOPS_EXPR_MAX_COLS];
	Oid outer_types[GPUOPS_EXPR_MAX_COLS];
	Oid inner_types[GPUOPS_EXPR_MAX_COLS];
	List *params;	   /* Param nodes read, in constant-slot order */
	List *param_slots; /* their constant slots (int) */
} DeviceExprInputs;

/*
 * Compiles the implicit AND of `quals` into *prog; false (and *prog
 * undefined) when some part has no device form or the program would be too
 * large.  inputs->outer_exprs/inner_exprs must be set; the rest is filled.
 */
extern bool DeviceExprCompile(List *quals, DeviceExprInputs *inputs, GpuopsExprProgram *prog);

/*
 * Compiles a value expression over the columns `inputs` already has (from
 * an earlier DeviceExprCompile of the same inputs, which it leaves as they
 * are) into *prog, whose final value is the expression's word: an indexed
 * nested loop's bound.  false when some part has no device form, reads a
 * column or Param the inputs do not have, or the program would be too
 * large.
 */
extern bool DeviceExprCompileValue(Expr *expr, DeviceExprInputs *inputs, GpuopsExprProgram *prog);

/* Does the type have a device representation? */
extern bool DeviceExprTypeSupported(Oid type);

/*
 * Compiles a value expression of type int2, int4, int8, float4 or float8
 * (an aggregate's argument) over the outer input's columns, adding those
 * it reads to `inputs` (left as they were on failure), into *prog.  Only
 * programs whose every stop (RECHECK) is an error PostgreSQL raises: the
 * caller hands such a row to PostgreSQL, which must raise it.  false when
 * some part has no device form, reads a Param, or could stop otherwise.
 */
extern bool DeviceExprCompileInput(Expr *expr, DeviceExprInputs *inputs, GpuopsExprProgram *prog);

/*
 * Compiles a value expression of any device type (an aggregate's argument
 * or FILTER, a group key of GpuQuery) over the outer input's columns,
 * adding those it reads to `inputs` (left as they were on failure), into
 * *prog.  Its stops (RECHECK: an error PostgreSQL would raise, a value the
 * device does not hold) are the caller's to handle: GpuQuery escapes to
 * PostgreSQL's plan.  A numeric result needs a display scale the plan fixes
 * (NumericDisplayScale, 0..38), returned in *num_scale (else -1).  false
 * when some part has no device form, reads a Param, or a numeric has no
 * static scale.  With num_scale NULL a numeric's scale may vary from row
 * to row, and the caller accounts for it (GpuQuery: a hidden aggregate).
 */
extern bool DeviceExprCompileAggInput(Expr *expr, DeviceExprInputs *inputs, GpuopsExprProgram *prog,
									  int *num_scale);

/*
 * The display scale every value of a numeric expression has, from the
 * plan alone (column typmods, constants, + - * and casts:
 * device_expr_scale.cpp), or -1 when the values' own digits decide it.
 */
extern int NumericDisplayScale(Node *node);

/*
 * Do a type's device words order as its values do (so they can be sorted
 * and searched)?  Not numeric's: its words carry their own scales.
 */
extern bool DeviceExprWordsOrdered(Oid type);

/* A datum of a supported type as its device word. */
extern uint64 DeviceExprWord(Datum value, Oid type);

/* Plan storage: the program as integers, and back. */
extern List *DeviceExprProgramToList(const GpuopsExprProgram *prog);
extern void DeviceExprProgramFromList(List *list, GpuopsExprProgram *prog);

/* A program as one field of a node's plan struct (plan_fields.h). */
class PlanFields;
extern void DeviceExprProgramField(PlanFields &f, GpuopsExprProgram *prog);

/*
 * Rows [first, first + n) of a row store (across its batches), columns
 * cols[0..ncols) of types types[], as device words and null bytes (none
 * for a column without NULLs there) allocated in cxt.
 */
extern void DeviceExprStageRows(const GpuopsRowStore *store, uint64 first, uint64 n,
								const int *cols, const Oid *types, int ncols, MemoryContext cxt,
								GpuopsExprColumns *out);

/*
 * Rows [from, from + n) of one batch, columns cols[0..ncols) of types
 * types[], as device words and null bytes written at row `at` of the
 * caller's per-column arrays (a sort's staging buffer).
 */
extern void DeviceExprStageInto(const GpuopsRowStore *store, const GpuopsBatch *batch, uint32 from,
								uint32 n, const int *cols, const Oid *types, int ncols,
								uint64 *const *words, uint8 *const *nulls, uint32 at);

/*
 * Executor side: sets the constant slots of the program's Params from
 * their current values (param_states: ExprStates of the Param nodes).
 */
extern void DeviceExprBindParams(GpuopsExprProgram *prog, List *param_states, List *param_slots,
								 List *param_types, ExprContext *econtext);

#endif
