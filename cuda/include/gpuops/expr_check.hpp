/*
 * expr_check.hpp
 *    What can be known of a device expression program before it runs: its
 *    validation (expr_validate), and which of its steps may stop it with
 *    RECHECK, and why.
 *
 * One part of the interpreter (expr_eval.hpp includes every part; include
 * that).  Host code only (plain inline, not GPUOPS_HD): the backends
 * validate a program before they run it; src/ validates what it compiles,
 * and asks which steps may stop a program (an indexed nested loop's
 * bounds, an aggregate's inputs) and which read their operands' kind.  The
 * step lists here must follow the interpreter's switch (expr_eval.hpp)
 * when an operation is added.
 */
#ifndef GPUOPS_EXPR_CHECK_HPP
#define GPUOPS_EXPR_CHECK_HPP

#include "gpuops_device.h"
#include "expr_numeric.hpp"

namespace gpuops {

/*
 * Can this step stop a program with RECHECK (an operation PostgreSQL may
 * fail)?  Conservative: only reading, comparing and the logic are sure not
 * to.  The planner of the indexed nested loop uses it.
 */
inline bool
expr_step_may_recheck(const GpuopsExprStep *s)
{
	switch (s->op)
	{
		case GPUOPS_EOP_OUTER:
		case GPUOPS_EOP_INNER:
		case GPUOPS_EOP_CONST:
		case GPUOPS_EOP_CMP:
		case GPUOPS_EOP_NOT:
		case GPUOPS_EOP_AND:
		case GPUOPS_EOP_OR:
		case GPUOPS_EOP_JUMP_IF_FALSE:
		case GPUOPS_EOP_JUMP_IF_TRUE:
		case GPUOPS_EOP_JUMP_UNLESS_TRUE:
		case GPUOPS_EOP_JUMP:
		case GPUOPS_EOP_IS_NULL:
		case GPUOPS_EOP_BOOL_TEST:
		case GPUOPS_EOP_STORE:
		case GPUOPS_EOP_LOAD:
		case GPUOPS_EOP_POP:
		case GPUOPS_EOP_PUSH_NULL:
			return false;
		default:
			return true;
	}
}

/*
 * Operations whose `type` is their operands' kind (INT, FLOAT or NUM):
 * comparisons, arithmetic, and the casts to integers and floats.
 */
inline bool
expr_op_reads_kind(int op)
{
	switch (op)
	{
		case GPUOPS_EOP_CMP:
		case GPUOPS_EOP_ADD:
		case GPUOPS_EOP_SUB:
		case GPUOPS_EOP_MUL:
		case GPUOPS_EOP_DIV:
		case GPUOPS_EOP_MOD:
		case GPUOPS_EOP_NEG:
		case GPUOPS_EOP_ABS:
		case GPUOPS_EOP_TO_INT:
		case GPUOPS_EOP_TO_FLOAT:
			return true;
		default:
			return false;
	}
}

/*
 * Does this step stop a program (RECHECK) only where PostgreSQL raises an
 * error?  Not numeric steps (a value the device does not hold), nor a
 * timestamp difference past 64 bits (PostgreSQL's wraps).  A program all
 * of whose steps do can compute a value whose rows are never decided by
 * PostgreSQL but to raise that error (an aggregate's input).
 */
inline bool
expr_step_stops_with_error(const GpuopsExprStep *s)
{
	if (s->op == GPUOPS_EOP_TO_NUM || s->op == GPUOPS_EOP_NUM_ROUND || s->op == GPUOPS_EOP_TS_MI)
		return false;
	return !expr_op_reads_kind(s->op) || s->type != GPUOPS_ET_NUM;
}

/*
 * Checks a program before it runs: known operations, arguments in range,
 * forward jumps, and a stack that stays within GPUOPS_EXPR_MAX_STACK when
 * counted in program order (which never undercounts: every jump skips
 * code that leaves one value more).  Returns NULL or what is wrong.
 */
inline const char *
expr_validate(const GpuopsExprProgram *p, int outer_ncols, int inner_ncols)
{
	int depth = 0;

	if (p->nsteps < 1 || p->nsteps > GPUOPS_EXPR_MAX_STEPS || p->nconsts < 0 ||
		p->nconsts > GPUOPS_EXPR_MAX_CONSTS)
		return "program size out of range";
	for (int pc = 0; pc < p->nsteps; pc++)
	{
		const GpuopsExprStep *s = &p->steps[pc];
		int pops = 0, pushes = 0;

		switch (s->op)
		{
			case GPUOPS_EOP_OUTER:
				if (s->arg < 0 || s->arg >= outer_ncols)
					return "outer column out of range";
				pushes = 1;
				break;
			case GPUOPS_EOP_INNER:
				if (s->arg < 0 || s->arg >= inner_ncols)
					return "inner column out of range";
				pushes = 1;
				break;
			case GPUOPS_EOP_CONST:
				if (s->arg < 0 || s->arg >= p->nconsts)
					return "constant out of range";
				pushes = 1;
				break;
			case GPUOPS_EOP_TS_PL:
				if (s->arg < 0 || s->arg + 1 >= p->nconsts)
					return "constant out of range";
				pops = pushes = 1;
				break;
			case GPUOPS_EOP_PUSH_NULL:
				pushes = 1;
				break;
			case GPUOPS_EOP_CMP:
			case GPUOPS_EOP_ADD:
			case GPUOPS_EOP_SUB:
			case GPUOPS_EOP_MUL:
			case GPUOPS_EOP_DIV:
			case GPUOPS_EOP_MOD:
			case GPUOPS_EOP_DATE_PLI:
			case GPUOPS_EOP_DATE_MI:
			case GPUOPS_EOP_TS_MI:
			case GPUOPS_EOP_AND:
			case GPUOPS_EOP_OR:
				pops = 2;
				pushes = 1;
				break;
			case GPUOPS_EOP_NEG:
			case GPUOPS_EOP_ABS:
			case GPUOPS_EOP_TO_INT:
			case GPUOPS_EOP_TO_FLOAT:
			case GPUOPS_EOP_TO_NUM:
			case GPUOPS_EOP_DATE_TS:
			case GPUOPS_EOP_NOT:
			case GPUOPS_EOP_IS_NULL:
			case GPUOPS_EOP_BOOL_TEST:
			case GPUOPS_EOP_JUMP_IF_FALSE:
			case GPUOPS_EOP_JUMP_IF_TRUE:
				pops = pushes = 1;
				break;
			case GPUOPS_EOP_JUMP_UNLESS_TRUE:
			case GPUOPS_EOP_POP:
				pops = 1;
				break;
			case GPUOPS_EOP_JUMP:
				break;
			case GPUOPS_EOP_STORE:
				if (s->arg < 0 || s->arg >= GPUOPS_EXPR_MAX_LOCALS)
					return "local out of range";
				pops = pushes = 1;
				break;
			case GPUOPS_EOP_NUM_ROUND:
				if (s->sub > kNumMaxScale || s->arg < 1)
					return "numeric typmod out of range";
				pops = pushes = 1;
				break;
			case GPUOPS_EOP_LOAD:
				if (s->arg < 0 || s->arg >= GPUOPS_EXPR_MAX_LOCALS)
					return "local out of range";
				pushes = 1;
				break;
			default:
				return "unknown operation";
		}
		if (s->op == GPUOPS_EOP_JUMP || s->op == GPUOPS_EOP_JUMP_IF_FALSE ||
			s->op == GPUOPS_EOP_JUMP_IF_TRUE || s->op == GPUOPS_EOP_JUMP_UNLESS_TRUE)
		{
			if (s->arg <= pc || s->arg > p->nsteps)
				return "jump out of range";
		}
		if (depth < pops)
			return "stack underflow";
		depth += pushes - pops;
		if (depth > GPUOPS_EXPR_MAX_STACK)
			return "stack overflow";
	}
	return depth < 1 ? "no result" : nullptr;
}

} /* namespace gpuops */

#endif /* GPUOPS_EXPR_CHECK_HPP */
