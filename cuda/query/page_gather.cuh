/*
 * page_gather.cuh
 *    The gather of heap pages that lie in host memory mapped for the
 *    device (shared buffers) into device memory, by buffer number: the
 *    query engine's in-place read of its own mapping (query_cuda.cu) and
 *    the page service's (page_service.cu), which also keeps pages in its
 *    device page cache and copies them from there (page_cache.hpp).
 */
#ifndef GPUOPS_PAGE_GATHER_CUH
#define GPUOPS_PAGE_GATHER_CUH

#include <cstdint>

#include "page_cache.hpp"

namespace gpuops {
namespace cuda {
namespace { /* each file that launches it has its own */

constexpr unsigned kGatherThreads = 256;

/*
 * Page p (base + index[p] x page_size) to out + p x page_size, a block a
 * page: 16-byte loads from mapped host memory, so many pages are in flight
 * over the bus at once (a copy per 8 KB page would be an API call each).
 * With ops (the page service), ops[p] (page_cache.hpp) may instead take
 * the page from slot s of cache (kPageHit | s), or also keep it there (s).
 * With out_pos, page p goes to out + out_pos[p] x page_size instead, or
 * only to its slot (out_pos[p] all ones: a page read from the cache where
 * it lies).  base and page_size are 16-byte aligned.
 */
__global__ void __launch_bounds__(kGatherThreads)
	page_gather_kernel(const uint8_t *base, const uint32_t *index, uint32_t npages,
					   uint32_t page_size, uint8_t *out, const uint32_t *ops = nullptr,
					   uint8_t *cache = nullptr, const uint32_t *out_pos = nullptr)
{
	const uint32_t words = page_size / 16;

	for (uint32_t p = blockIdx.x; p < npages; p += gridDim.x)
	{
		uint32_t op = ops != nullptr ? ops[p] : kPageNoCache;
		uint32_t at = out_pos != nullptr ? out_pos[p] : p;
		bool hit = op != kPageNoCache && (op & kPageHit) != 0;
		const uint8_t *from = hit ? cache + (uint64_t) (op & ~kPageHit) * page_size
								  : base + (uint64_t) index[p] * page_size;
		const uint4 *src = reinterpret_cast<const uint4 *>(from);
		uint4 *dst = at != ~0u ? reinterpret_cast<uint4 *>(out + (uint64_t) at * page_size)
							   : nullptr;
		uint4 *keep = op != kPageNoCache && !hit
			? reinterpret_cast<uint4 *>(cache + (uint64_t) op * page_size)
			: nullptr;

		for (uint32_t w = threadIdx.x; w < words; w += blockDim.x)
		{
			uint4 v = src[w];

			if (dst != nullptr)
				dst[w] = v;
			if (keep != nullptr)
				keep[w] = v;
		}
	}
}

} /* namespace */
} /* namespace cuda */
} /* namespace gpuops */

#endif /* GPUOPS_PAGE_GATHER_CUH */
