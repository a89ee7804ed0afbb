/*
 * page_service.cuh
 *    A backend's request to the page service (gpuops_page_service.h), for
 *    the CUDA query engine's pages read in place.
 */
#ifndef GPUOPS_PAGE_SERVICE_CUH
#define GPUOPS_PAGE_SERVICE_CUH

#include <cuda_runtime.h>

#include "cuda_runtime.cuh"
#include "gpuops_page_service.h"

namespace gpuops {
namespace cuda {

struct PageServiceTimes
{
	uint64_t requests = 0;
	double wait_ms = 0; /* from each request to its answer */
};

/*
 * Pages index[0 .. npages) of shared buffers (buffer numbers) into dst
 * (device memory, npages x page_size), gathered by the service through
 * link's channel in parts of GPUOPS_PAGE_SERVICE_PAGES; each part is copied
 * from the staging area on cs, and waited for (`copied`) before the next
 * request reuses it.  Returns with every page in dst.  Throws DeviceError:
 * GPUOPS_ERR_DEVICE when the service stopped, failed or did not answer,
 * GPUOPS_ERR_CANCELED on the caller's interrupt (the request in flight is
 * left to the service: releasing the channel then abandons it).  The
 * caller's pins on the pages must last until this returns.
 */
void page_service_gather(Runtime &rt, const GpuopsPageLink &link, const uint32_t *index,
						 uint32_t npages, uint32_t page_size, uint8_t *dst, cudaStream_t cs,
						 cudaEvent_t copied, PageServiceTimes *times);

} /* namespace cuda */
} /* namespace gpuops */

#endif /* GPUOPS_PAGE_SERVICE_CUH */
