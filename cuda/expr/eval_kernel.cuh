/*
 * eval_kernel.cuh
 *    A value program over a batch's program columns, on the device: the
 *    aggregates' computed inputs (agg_cuda.cu) and the sort's computed keys
 *    (sort_cuda.cu) store the same bits as their CPU twins (agg_eval.hpp).
 */
#ifndef GPUOPS_EVAL_KERNEL_CUH
#define GPUOPS_EVAL_KERNEL_CUH

#include "agg_eval.hpp"

namespace gpuops {
namespace cuda {
namespace {

/*
 * Input row i of `in` (i < n) into row at + i of values and nulls (`at` a
 * multiple of 8): a thread per 8 rows, so each owns its byte of the null
 * bitmap, which holds a mask on entry (masked rows, a FILTER's, are not
 * evaluated) and gains NULL values.  A row the program stops at is left
 * NULL, and the least recheck_base + at + i goes to *recheck.
 */
__global__ void
eval_input_kernel(const GpuopsExprProgram *p, ColumnsView in, uint64_t at, uint64_t n,
				  GpuopsKeyKind kind, uint8_t *values, uint8_t *nulls, uint64_t recheck_base,
				  unsigned long long *recheck)
{
	uint64_t byte = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;
	size_t w = gpuops_key_raw_width(kind);
	uint8_t mask, out;

	if (byte * 8 >= n)
		return;
	mask = out = nulls[at / 8 + byte];
	for (int j = 0; j < 8 && byte * 8 + j < n; j++)
	{
		uint64_t i = byte * 8 + j;
		bool isnull = true;

		if (mask & (1 << j))
			continue;
		if (!agg_eval_row(p, in, i, kind, values + (at + i) * w, &isnull))
		{
			atomicMin(recheck, (unsigned long long) (recheck_base + at + i));
			isnull = true;
		}
		if (isnull)
			out |= (uint8_t) (1 << j);
	}
	nulls[at / 8 + byte] = out;
}

} /* namespace */
} /* namespace cuda */
} /* namespace gpuops */

#endif
