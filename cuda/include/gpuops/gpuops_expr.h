/*
 * gpuops_expr.h
 *    The device engine's C interface, one part: device expressions: the
 *    program format src/ compiles PostgreSQL expressions into, interpreted
 *    alike by the kernels and the CPU twin.
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_EXPR_H
#define GPUOPS_EXPR_H

#include "gpuops_base.h"

GPUOPS_C_BEGIN

/*
 * Device expressions: a PostgreSQL expression compiled (src/expr/device_expr.cpp)
 * into a short program that the CUDA kernels and the CPU twin interpret
 * alike (expr_eval.hpp), so no code is generated at run time.
 *
 * Values are 64-bit words with a null flag: integers, date, time and the
 * timestamps as sign-extended int64, bool as 0/1, float4 and float8 as
 * double (a float4 is exact as a double; float4 arithmetic rounds to float
 * after each step, as PostgreSQL's does), a numeric as an integer and the
 * power of ten it is scaled by (expr_numeric.hpp), or as "a value the device
 * does not hold" (NaN, the infinities, too many digits).  The program is
 * postfix over a small stack, with jumps for AND/OR short-circuits and
 * CASE, in the order PostgreSQL's executor evaluates.  An operation PostgreSQL would raise an
 * error for (overflow, division by zero, a date out of range) or that the
 * program cannot decide exactly stops the evaluation with
 * GPUOPS_EXPR_RECHECK: the caller then evaluates that row with
 * PostgreSQL's own expression, which raises PostgreSQL's own error (or not,
 * where its evaluation never reaches it).
 */
#define GPUOPS_EXPR_MAX_STEPS 256
#define GPUOPS_EXPR_MAX_CONSTS 128
#define GPUOPS_EXPR_MAX_STACK 16
#define GPUOPS_EXPR_MAX_LOCALS 8
#define GPUOPS_EXPR_MAX_COLS 16 /* columns read, per side */

typedef enum GpuopsExprOp
{
	GPUOPS_EOP_OUTER = 0, /* push outer column `arg` */
	GPUOPS_EOP_INNER,	  /* push inner column `arg` */
	GPUOPS_EOP_CONST,	  /* push constant `arg` */
	GPUOPS_EOP_CMP,		  /* b, a -> bool; sub: GpuopsExprCmp; type: INT or FLOAT */
	GPUOPS_EOP_ADD,		  /* b, a -> a op b; type: INT (width: sub) or FLOAT (sub 4/8) */
	GPUOPS_EOP_SUB,
	GPUOPS_EOP_MUL,
	GPUOPS_EOP_DIV,
	GPUOPS_EOP_MOD, /* INT and NUM */
	GPUOPS_EOP_NEG, /* a -> -a */
	GPUOPS_EOP_ABS,
	GPUOPS_EOP_TO_INT,	 /* a (type: its kind) -> integer of width sub */
	GPUOPS_EOP_TO_FLOAT, /* a (type: its kind) -> float of width sub (4/8) */
	GPUOPS_EOP_DATE_PLI, /* date, int4 -> date (date_pli); sub 1: minus (date_mii) */
	GPUOPS_EOP_DATE_MI,	 /* date, date -> int4 (date_mi) */
	GPUOPS_EOP_TS_PL,	 /* timestamp, int64 microseconds -> timestamp; sub 1: minus */
	GPUOPS_EOP_TS_MI,	 /* timestamp, timestamp -> their difference in microseconds:
								 * an interval's span (interval_cmp_value) */
	GPUOPS_EOP_DATE_TS,	 /* date -> timestamp (date2timestamp); sub 1: for a
								 * comparison, where a date past the timestamps' range
								 * sorts above every finite timestamp, below infinity */
	GPUOPS_EOP_NOT,
	GPUOPS_EOP_AND, /* b, a -> a AND b (three-valued) */
	GPUOPS_EOP_OR,
	GPUOPS_EOP_JUMP_IF_FALSE,	 /* top is FALSE: jump to arg, keeping it */
	GPUOPS_EOP_JUMP_IF_TRUE,	 /* top is TRUE: jump to arg, keeping it */
	GPUOPS_EOP_JUMP_UNLESS_TRUE, /* pop; not TRUE (FALSE or NULL): jump to arg */
	GPUOPS_EOP_JUMP,
	GPUOPS_EOP_IS_NULL,	  /* sub 1: IS NOT NULL */
	GPUOPS_EOP_BOOL_TEST, /* sub: GpuopsExprBoolTest */
	GPUOPS_EOP_STORE,	  /* local `arg` = top (kept) */
	GPUOPS_EOP_LOAD,	  /* push local `arg` */
	GPUOPS_EOP_POP,
	GPUOPS_EOP_PUSH_NULL,
	GPUOPS_EOP_TO_NUM,	 /* integer -> numeric (int4_numeric and kin) */
	GPUOPS_EOP_NUM_ROUND /* numeric -> numeric(arg, sub): apply_typmod's rounding
								 * to scale sub, and its precision check */
} GpuopsExprOp;

typedef enum GpuopsExprCmp
{
	GPUOPS_CMP_EQ = 0,
	GPUOPS_CMP_NE,
	GPUOPS_CMP_LT,
	GPUOPS_CMP_LE,
	GPUOPS_CMP_GT,
	GPUOPS_CMP_GE,
	GPUOPS_CMP_DISTINCT /* IS DISTINCT FROM: NULLs compare, result never NULL */
} GpuopsExprCmp;

typedef enum GpuopsExprBoolTest
{
	GPUOPS_BT_IS_TRUE = 0,
	GPUOPS_BT_IS_NOT_TRUE,
	GPUOPS_BT_IS_FALSE,
	GPUOPS_BT_IS_NOT_FALSE
} GpuopsExprBoolTest;

typedef enum GpuopsExprType
{
	GPUOPS_ET_INT = 0, /* int2/int4/int8, date, time, timestamp(tz), bool */
	GPUOPS_ET_FLOAT,   /* float4, float8 */
	GPUOPS_ET_NUM	   /* numeric (expr_numeric.hpp: a scaled integer) */
} GpuopsExprType;

typedef struct GpuopsExprStep
{
	uint8_t op;	  /* GpuopsExprOp */
	uint8_t type; /* GpuopsExprType of the operands */
	uint8_t sub;  /* comparison, width (2/4/8) or variant */
	uint8_t pad;
	int32_t arg; /* column, constant, local or jump target */
} GpuopsExprStep;

typedef struct GpuopsExprProgram
{
	int32_t nsteps;
	int32_t nconsts;
	GpuopsExprStep steps[GPUOPS_EXPR_MAX_STEPS];
	uint64_t consts[GPUOPS_EXPR_MAX_CONSTS];
	uint8_t const_null[GPUOPS_EXPR_MAX_CONSTS];
} GpuopsExprProgram;

/* What a program says about a row (or a pair of rows). */
typedef enum GpuopsExprResult
{
	GPUOPS_EXPR_FALSE = 0, /* FALSE or NULL */
	GPUOPS_EXPR_TRUE,
	GPUOPS_EXPR_RECHECK /* PostgreSQL must evaluate this one */
} GpuopsExprResult;

/*
 * Columns a program reads, one side's: per column, nrows words and a null
 * byte per row (1 = NULL), or no null array when none is NULL.
 */
typedef struct GpuopsExprColumns
{
	int ncols;
	uint64_t nrows;
	const uint64_t *words[GPUOPS_EXPR_MAX_COLS];
	const uint8_t *nulls[GPUOPS_EXPR_MAX_COLS];
} GpuopsExprColumns;

GPUOPS_C_END

#endif /* GPUOPS_EXPR_H */
