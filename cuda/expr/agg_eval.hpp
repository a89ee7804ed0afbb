/*
 * agg_eval.hpp
 *    Aggregate inputs the device computes (GpuopsAggSpec.programs): one
 *    row's program, its value stored at the input kind's width.  Shared by
 *    the CUDA backend and its CPU twin, so both store the same bits.
 */
#ifndef GPUOPS_AGG_EVAL_HPP
#define GPUOPS_AGG_EVAL_HPP

#include "expr_columns.hpp"

namespace gpuops {

constexpr uint64_t kAggNoRecheck = GPUOPS_AGG_NO_RECHECK;

/*
 * Evaluates row i of `in` with program p into `dst` (kind's width) and
 * *isnull.  false: the program stopped (RECHECK); dst is then untouched.
 */
GPUOPS_HD bool
agg_eval_row(const GpuopsExprProgram *p, const ColumnsView &in, uint64_t i, GpuopsKeyKind kind,
			 uint8_t *dst, bool *isnull)
{
	uint64_t w;
	bool wn;
	ColumnsRow row{&in, i};

	if (expr_eval(p->steps, p->nsteps, p->consts, p->const_null, row, row, &w, &wn) ==
		GPUOPS_EXPR_RECHECK)
		return false;
	*isnull = wn;
	if (wn)
		return true;
	switch (kind)
	{
		case GPUOPS_KEY_INT2:
			{
				int16_t v = (int16_t) (int64_t) w;

				memcpy(dst, &v, sizeof(v));
				break;
			}
		case GPUOPS_KEY_INT4:
			{
				int32_t v = (int32_t) (int64_t) w;

				memcpy(dst, &v, sizeof(v));
				break;
			}
		case GPUOPS_KEY_FLOAT4:
			{
				float v = (float) expr_as_double(w); /* exact: a float4 result */

				memcpy(dst, &v, sizeof(v));
				break;
			}
		default: /* INT8 as int64, FLOAT8 as double: the word itself */
			memcpy(dst, &w, sizeof(w));
			break;
	}
	return true;
}

} /* namespace gpuops */

#endif
