/*
 * page_gather.cuh
 *    The gather of heap pages that lie in host memory mapped for the
 *    device (shared buffers) into device memory, by buffer number: the
 *    query engine's in-place read of its own mapping (query_cuda.cu) and
 *    the page service's (page_service.cu).
 */
#ifndef GPUOPS_PAGE_GATHER_CUH
#define GPUOPS_PAGE_GATHER_CUH

#include <cstdint>

namespace gpuops {
namespace cuda {
namespace { /* each file that launches it has its own */

constexpr unsigned kGatherThreads = 256;

/*
 * Page p (base + index[p] x page_size) to out + p x page_size, a block a
 * page: 16-byte loads from mapped host memory, so many pages are in flight
 * over the bus at once (a copy per 8 KB page would be an API call each).
 * base and page_size are 16-byte aligned.
 */
__global__ void __launch_bounds__(kGatherThreads)
	page_gather_kernel(const uint8_t *base, const uint32_t *index, uint32_t npages,
					   uint32_t page_size, uint8_t *out)
{
	const uint32_t words = page_size / 16;

	for (uint32_t p = blockIdx.x; p < npages; p += gridDim.x)
	{
		const uint4 *src = reinterpret_cast<const uint4 *>(base + (uint64_t) index[p] * page_size);
		uint4 *dst = reinterpret_cast<uint4 *>(out + (uint64_t) p * page_size);

		for (uint32_t w = threadIdx.x; w < words; w += blockDim.x)
			dst[w] = src[w];
	}
}

} /* namespace */
} /* namespace cuda */
} /* namespace gpuops */

#endif /* GPUOPS_PAGE_GATHER_CUH */
