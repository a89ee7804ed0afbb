/*
 * merge_common.hpp
 *    The merge join's comparisons, merge-path walk and budget, one source
 *    for the CUDA backend and the CPU twin so both return the same pairs.
 */
#ifndef GPUOPS_MERGE_COMMON_HPP
#define GPUOPS_MERGE_COMMON_HPP

#include "join_hash.hpp"

namespace gpuops {

/*
 * One side's keys: per key a word array, and per row a byte whose bit k
 * says key k is NULL (GPUOPS_MAX_JOIN_KEYS is 8).
 */
struct MjKeys
{
	const uint64_t *words[GPUOPS_MAX_JOIN_KEYS];
	const uint8_t *nullmask;
	int nkeys;
};

/* Row i of a against row j of b: key by key, NULL after every value. */
GPUOPS_HD int
mj_cmp(const MjKeys &a, uint64_t i, const MjKeys &b, uint64_t j)
{
	for (int k = 0; k < a.nkeys; k++)
	{
		int na = (a.nullmask[i] >> k) & 1, nb = (b.nullmask[j] >> k) & 1;

		if (na != nb)
			return na ? 1 : -1;
		if (na)
			continue;
		if (a.words[k][i] != b.words[k][j])
			return a.words[k][i] < b.words[k][j] ? -1 : 1;
	}
	return 0;
}

/*
 * Merge path over sorted outer keys o[0..m) and inner keys in[0..n): the
 * merged sequence takes outer row i before inner row j when o[i] <= in[j]
 * (kUpper false) or o[i] < in[j] (kUpper true), so when outer row i is
 * taken, j is the first inner row not below it (not above it, kUpper): the
 * start (end) of its equal run.  Walks the merged positions [d0, d1),
 * recording that j in at[i] for each outer row taken there.  The start is
 * found by binary search on the diagonal d0, so any split of [0, m + n)
 * into segments gives the same result: the CUDA backend gives each thread
 * one segment, the CPU twin walks it whole.
 */
template <bool kUpper>
GPUOPS_HD void
mj_merge_segment(const MjKeys &o, uint64_t m, const MjKeys &in, uint64_t n, uint64_t d0,
				 uint64_t d1, uint64_t *at)
{
	uint64_t lo = d0 > n ? d0 - n : 0;
	uint64_t hi = d0 < m ? d0 : m;

	while (lo < hi)
	{
		uint64_t mid = lo + (hi - lo) / 2;
		int c = mj_cmp(o, mid, in, d0 - 1 - mid);

		if (kUpper ? c < 0 : c <= 0)
			lo = mid + 1; /* outer row mid comes before that inner row */
		else
			hi = mid;
	}

	uint64_t i = lo, j = d0 - lo;

	for (uint64_t d = d0; d < d1; d++)
	{
		bool take_outer = j >= n;

		if (!take_outer && i < m)
		{
			int c = mj_cmp(o, i, in, j);

			take_outer = kUpper ? c < 0 : c <= 0;
		}
		if (take_outer)
			at[i++] = j;
		else
			j++;
	}
}

/*
 * Budget: per row of either side, the key words twice (sorting), the null
 * byte, the row order twice, and per outer row its run's start, end, count
 * and offset: about 16 * nkeys + 48 bytes; half the budget, the other half
 * for pair windows.  0: no limit.
 */
inline uint64_t
mj_rows_for_budget(uint64_t budget, int nkeys)
{
	if (budget == 0)
		return 0;
	uint64_t rows = budget / 2 / (16ull * nkeys + 48);

	return rows < 1024 ? 1024 : rows;
}

} /* namespace gpuops */

#endif
