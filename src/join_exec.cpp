/*
 * join_exec.cpp
 *    Executor helpers every gpuops join shares (join_exec.h).
 */
extern "C" {
#include "postgres.h"

#include "executor/executor.h"
}

#include "join_exec.h"

void
GpuopsJoinFillSide(TupleTableSlot *slot, int at, const GpuopsRowStore *store, int64 row)
{
	for (int c = 0; c < store->ncols; c++)
	{
		if (row < 0)
		{
			slot->tts_values[at + c] = (Datum) 0;
			slot->tts_isnull[at + c] = true;
		}
		else
			slot->tts_values[at + c] = GpuopsRowStoreDatum(store, (uint64) row, c,
														   &slot->tts_isnull[at + c]);
	}
}

bool
GpuopsJoinHolds(ExprState *qual, ExprContext *econtext, TupleTableSlot *slot)
{
	if (qual == NULL)
		return true;			/* nothing to check: the common equi-join */
	econtext->ecxt_scantuple = slot;
	ResetExprContext(econtext);
	return ExecQual(qual, econtext);
}

const char *
GpuopsJoinTypeName(JoinType jointype)
{
	switch (jointype)
	{
		case JOIN_LEFT:
			return "Left";
		case JOIN_RIGHT:
			return "Right";
		case JOIN_FULL:
			return "Full";
		case JOIN_SEMI:
			return "Semi";
		case JOIN_ANTI:
			return "Anti";
		default:
			return "Inner";
	}
}
