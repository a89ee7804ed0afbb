/*
 * expr_columns.cuh
 *    One side's program columns on the device (expr_columns.hpp's layout),
 *    for the CUDA nested loop and pair filter.
 */
#ifndef GPUOPS_EXPR_COLUMNS_CUH
#define GPUOPS_EXPR_COLUMNS_CUH

#include "device_array.cuh"
#include "expr_columns.hpp"

namespace gpuops {
namespace cuda {

struct DeviceColumns
{
	DeviceArray words;
	DeviceArray nulls;
	uint64_t n = 0;

	/* copies the caller's columns in (queued on s; NULL bytes 0 where none given) */
	void upload(Runtime *rt, cudaStream_t s, const GpuopsExprColumns *cols, int want)
	{
		uint64_t rows = cols->nrows;

		check_columns(cols, want);
		words.get(rt, rows * want * 8 + 8, s);
		nulls.get(rt, rows * want + 8, s);
		for (int c = 0; c < want && rows > 0; c++)
		{
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(words.as<uint64_t>() + c * rows, cols->words[c],
											rows * 8, cudaMemcpyHostToDevice, s));
			if (cols->nulls[c])
				GPUOPS_CUDA_TRY(cudaMemcpyAsync(nulls.as<uint8_t>() + c * rows, cols->nulls[c],
												rows, cudaMemcpyHostToDevice, s));
			else
				GPUOPS_CUDA_TRY(cudaMemsetAsync(nulls.as<uint8_t>() + c * rows, 0, rows, s));
		}
		n = rows;
	}
	void reset()
	{
		words.reset();
		nulls.reset();
		n = 0;
	}
	ColumnsView view() const { return ColumnsView{words.as<uint64_t>(), nulls.as<uint8_t>(), n}; }
};

} /* namespace cuda */
} /* namespace gpuops */

#endif
