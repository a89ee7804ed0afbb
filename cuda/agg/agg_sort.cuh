/*
 * agg_sort.cuh
 *    The word-by-word radix sort both aggregation strategies order by: the
 *    sort strategy sorts rows by their packed keys, the hash strategy sorts
 *    its groups by theirs (agg_cuda.cu, agg_hash_cuda.cu).
 */
#ifndef GPUOPS_AGG_SORT_CUH
#define GPUOPS_AGG_SORT_CUH

#include <cub/device/device_radix_sort.cuh>

#include "agg_common.hpp"
#include "device_array.cuh"

namespace gpuops {
namespace cuda {

/*
 * Sorts perm (n item numbers, the identity on entry) stably by nwords
 * 64-bit key words, least significant word first, so each pass keeps the
 * order of the later words; a pass examines only the bits agg_word_bits
 * says word w uses.  keys(w, perm, out) launches what writes word w of the
 * items, in perm's current order, to out.  Returns the bits examined.
 */
template <typename Keys>
uint32_t
sort_by_words(Runtime *rt, cudaStream_t s, const GpuopsAggSpec &spec, int nwords, uint64_t n,
			  DeviceArray &perm, Keys keys)
{
	DeviceArray kin, kout, perm2, temp;
	size_t temp_bytes = 0;
	uint32_t bits = 0;

	kin.get(rt, n * 8 + 8, s);
	kout.get(rt, n * 8 + 8, s);
	perm2.get(rt, n * 4 + 4, s);
	GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, kin.as<uint64_t>(),
													kout.as<uint64_t>(), perm.as<uint32_t>(),
													perm2.as<uint32_t>(), n, 0, 64, s));
	temp.get(rt, temp_bytes + 8, s);
	for (int w = nwords - 1; w >= 0; w--)
	{
		int wb = agg_word_bits(spec, w);

		keys(w, perm.as<uint32_t>(), kin.as<uint64_t>());
		GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.as<void>(), temp_bytes,
														kin.as<uint64_t>(), kout.as<uint64_t>(),
														perm.as<uint32_t>(), perm2.as<uint32_t>(),
														n, 0, wb, s));
		perm.swap(perm2);
		bits += wb;
	}
	return bits;
}

} /* namespace cuda */
} /* namespace gpuops */

#endif
