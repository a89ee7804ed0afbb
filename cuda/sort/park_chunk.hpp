/*
 * park_chunk.hpp
 *    Where a chunk of parked rows ends (gpuops_sort.h, sort_park_next): the
 *    one rule both backends follow, the CUDA one in a one-thread kernel.
 */
#ifndef GPUOPS_PARK_CHUNK_HPP
#define GPUOPS_PARK_CHUNK_HPP

#include <cstdint>

#include "hd.hpp"

namespace gpuops {

/* A parked row's bytes in a chunk: its length, rounded up to 8. */
GPUOPS_HD uint64_t
park_row_bytes(uint32_t len)
{
	return (static_cast<uint64_t>(len) + 7) & ~static_cast<uint64_t>(7);
}

/* Bit i of a ties bitmap (32 rows a word): sorted row i ties with row i-1. */
GPUOPS_HD bool
park_tie(const uint32_t *ties, uint64_t i)
{
	return (ties[i >> 5] >> (i & 31)) & 1u;
}

/*
 * The end (exclusive) of the chunk of sorted rows that starts at row s of
 * n: as many rows as fit `cap` bytes (at least one), where off[i] is the
 * offset of sorted row i in the laid-out output (off[n] the total).  With
 * ties, the end moves back to the start of the run of tying rows it would
 * split, so the caller can order each run within one chunk; only a run
 * longer than a whole chunk is split.
 */
GPUOPS_HD uint64_t
park_chunk_end(const uint64_t *off, uint64_t n, uint64_t s, uint64_t cap, const uint32_t *ties)
{
	uint64_t lo = s + 1, hi = n;

	if (off[lo] - off[s] > cap)
		return lo;
	while (lo < hi)
	{
		uint64_t mid = lo + (hi - lo + 1) / 2;

		if (off[mid] - off[s] <= cap)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (ties == nullptr || lo >= n)
		return lo;
	uint64_t e = lo;

	while (e > s + 1 && park_tie(ties, e))
		e--;
	return park_tie(ties, e) ? lo : e;
}

} /* namespace gpuops */

#endif
