/*
 * topn_common.hpp
 *    What the top-N backend's CUDA kernels and its CPU twin share
 *    (gpuops_topn.h): a row's key as words whose unsigned order is the
 *    spec's order (key_normalize.hpp's null and value words), and the
 *    comparison with the cut.
 */
#ifndef GPUOPS_TOPN_COMMON_HPP
#define GPUOPS_TOPN_COMMON_HPP

#include <cstdint>

#include "gpuops_device.h"
#include "gpuops_topn.h"

#include "device_common.hpp"

#include "hd.hpp"
#include "key_normalize.hpp"

namespace gpuops {

/* Words of a row's key: a null word and a value word per key (the payload after them). */
constexpr int kTopnMaxWords = 2 * GPUOPS_TOPN_MAX_KEYS;

/* The spec's keys, as the kernels read them (by value: no pointer to host memory). */
struct TopnKeys
{
	int nkeys;
	uint8_t is_float[GPUOPS_TOPN_MAX_KEYS];
	uint8_t descending[GPUOPS_TOPN_MAX_KEYS];
	uint8_t nulls_first[GPUOPS_TOPN_MAX_KEYS];

	GPUOPS_HD_FORCE int words() const { return 2 * nkeys; }
};

/* Throws (fail) for a spec the backend does not take; else its keys. */
inline TopnKeys
topn_keys(const GpuopsTopnSpec &spec)
{
	TopnKeys k{};

	if (spec.nkeys < 1 || spec.nkeys > GPUOPS_TOPN_MAX_KEYS || spec.bound == 0)
		fail(GPUOPS_ERR_UNSUPPORTED, "top-N: %d keys, bound %llu", spec.nkeys,
			 static_cast<unsigned long long>(spec.bound));
	k.nkeys = spec.nkeys;
	for (int i = 0; i < spec.nkeys; i++)
	{
		if (spec.keys[i].kind != GPUOPS_KEY_INT8 && spec.keys[i].kind != GPUOPS_KEY_FLOAT8)
			fail(GPUOPS_ERR_UNSUPPORTED, "top-N: key %d of kind %d", i,
				 static_cast<int>(spec.keys[i].kind));
		k.is_float[i] = spec.keys[i].kind == GPUOPS_KEY_FLOAT8;
		k.descending[i] = spec.keys[i].descending != 0;
		k.nulls_first[i] = spec.keys[i].nulls_first != 0;
	}
	return k;
}

/*
 * Key k's two words for a row: the null word (0 for the rows that come
 * first: NULLs under NULLS FIRST, values under NULLS LAST) and the value
 * word (0 for a NULL; DESC inverted).
 */
GPUOPS_HD_FORCE void
topn_key_words(const TopnKeys &keys, int k, uint64_t word, bool isnull, uint64_t *w)
{
	if (isnull)
	{
		w[0] = keys.nulls_first[k] ? 0 : 1;
		w[1] = 0;
		return;
	}
	w[0] = keys.nulls_first[k] ? 1 : 0;
	w[1] = keys.is_float[k] ? float8_key(word) : (word ^ 0x8000000000000000ull);
	if (keys.descending[k])
		w[1] = ~w[1];
}

/*
 * Whether a comes strictly before b, over n words: a row's key words and
 * then its payload, so that the order is total and the rows kept do not
 * depend on the order they came in.  GpuTopN's payload is the row's TID:
 * among rows whose keys tie at the bound, those first in the table are
 * kept, as PostgreSQL's serial bounded sort keeps the first it reads.
 */
GPUOPS_HD_FORCE bool
topn_before(const uint64_t *a, const uint64_t *b, int nw)
{
	for (int i = 0; i < nw; i++)
		if (a[i] != b[i])
			return a[i] < b[i];
	return false;
}

/*
 * Candidates held before a cut: four times the bound, at least 256K rows.
 * The first cut comes early, so that the cut filters most rows before
 * they are copied; each later cut orders a few hundred thousand rows (a
 * millisecond on the device), and after the first one few rows beat the
 * cut (about bound x ln(rows / capacity) in all, on rows in no order).
 */
inline uint64_t
topn_capacity(const GpuopsTopnSpec &spec)
{
	uint64_t c = spec.capacity;

	if (c < 4 * spec.bound)
		c = 4 * spec.bound;
	if (c < (uint64_t(1) << 18))
		c = uint64_t(1) << 18;
	return c;
}

} /* namespace gpuops */

#endif
