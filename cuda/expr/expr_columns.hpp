/*
 * expr_columns.hpp
 *    One side's program columns as the device programs read them, column
 *    by column (column c of row i at c * n + i, a null byte per value), on
 *    the host (the CPU twins) and on the device (CUDA), so the nested loop
 *    and the pair filter stage them the same way.
 */
#ifndef GPUOPS_EXPR_COLUMNS_HPP
#define GPUOPS_EXPR_COLUMNS_HPP

#include <vector>

#include "device_common.hpp"
#include "expr_eval.hpp"

namespace gpuops {

/* A view the interpreter reads a row of (word(c), null(c)). */
struct ColumnsView
{
	const uint64_t *words;
	const uint8_t *nulls;
	uint64_t n;
};

struct ColumnsRow
{
	const ColumnsView *side;
	uint64_t i;

	GPUOPS_HD uint64_t word(int c) const { return side->words[c * side->n + i]; }
	GPUOPS_HD bool null(int c) const { return side->nulls[c * side->n + i] != 0; }
};

/* The caller's columns must be the `want` the program reads. */
inline void
check_columns(const GpuopsExprColumns *cols, int want)
{
	if (cols->ncols != want)
		fail(GPUOPS_ERR_INTERNAL, "device program: %d columns given, %d expected", cols->ncols,
			 want);
}

/* Host copy of one side's columns (the CPU twins). */
struct HostColumns
{
	std::vector<uint64_t> words;
	std::vector<uint8_t> nulls;
	uint64_t n = 0;

	void load(const GpuopsExprColumns *cols, int want)
	{
		check_columns(cols, want);
		n = cols->nrows;
		words.assign(n * want, 0);
		nulls.assign(n * want, 0);
		for (int c = 0; c < want; c++)
			for (uint64_t i = 0; i < n; i++)
			{
				words[c * n + i] = cols->words[c][i];
				nulls[c * n + i] = cols->nulls[c] ? cols->nulls[c][i] : 0;
			}
	}
	ColumnsView view() const { return ColumnsView{words.data(), nulls.data(), n}; }
};

} /* namespace gpuops */

#endif
