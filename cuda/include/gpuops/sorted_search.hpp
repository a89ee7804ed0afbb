/*
 * sorted_search.hpp
 *    The one binary search that maps an item to the run it falls in, by
 *    the runs' first items (a join's output pairs to their probe row, a
 *    pages batch's rows to their page), for the kernels and the twins.
 */
#ifndef GPUOPS_SORTED_SEARCH_HPP
#define GPUOPS_SORTED_SEARCH_HPP

#include <stdint.h>

#include "hd.hpp"

namespace gpuops {

/*
 * The last p in [0, n) with starts[p] <= x, where starts is sorted and
 * starts[0] <= x (n >= 1).
 */
template <typename T>
GPUOPS_HD uint64_t
run_of(const T *starts, uint64_t n, uint64_t x)
{
	uint64_t lo = 0, hi = n; /* starts[lo] <= x < starts[hi] (hi = n: past the end) */

	while (hi - lo > 1)
	{
		uint64_t mid = lo + (hi - lo) / 2;

		if (starts[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

} // namespace gpuops

#endif /* GPUOPS_SORTED_SEARCH_HPP */
