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
#include "gpuops_query.h"

namespace gpuops {
namespace cuda {

struct PageServiceTimes
{
	uint64_t requests = 0;
	uint64_t pages = 0;	 /* gathered by them */
	uint64_t cached = 0; /* ... from the service's device cache */
	double wait_ms = 0;	 /* the caller's waits for the answers */
};

/*
 * A request, in two calls: page_service_ask lists pages [off, off + n) of
 * P (read in place from shared buffers, n up to GPUOPS_PAGE_SERVICE_PAGES,
 * with their names for the device cache) for the channel's staging area
 * `area` (0 or 1) and returns at once with the request's number;
 * page_service_await waits for that answer (it returns how many of the
 * pages the answer put in the staging area: all, unless direct), after which
 * page_service_area(area) holds the pages (n x page_size of device
 * memory, the service's) until the next request for that area.  A request
 * still unanswered when ask is called (an earlier engine's, left at a
 * cancel) is waited for first: a channel has one request in flight.  The
 * caller's pins on the pages must last until the answer.
 *
 * Both throw DeviceError: GPUOPS_ERR_DEVICE when the service stopped,
 * failed or did not answer, GPUOPS_ERR_CANCELED on the caller's interrupt
 * (the request in flight is left to the service: releasing the channel
 * then abandons it).
 */
uint64_t page_service_ask(Runtime &rt, const GpuopsPageLink &link, const GpuopsQueryPages &P,
						  uint32_t off, uint32_t n, uint32_t area, bool direct);
uint32_t page_service_await(const GpuopsPageLink &link, uint64_t seq, PageServiceTimes *times);
const uint8_t *page_service_area(Runtime &rt, const GpuopsPageLink &link, uint32_t area);

/*
 * Direct requests (ask's `direct`): the pages stay where they lie.  After
 * the answer, page_service_loc(link)[p] says where page p is until the
 * next answer: a slot of page_service_cache (this context's mapping of the
 * service's device cache; nullptr when it has none or the device refuses
 * the mapping: then ask for no direct request), or, with
 * GPUOPS_PAGE_LOC_STAGING set, a page of the request's staging area.  The
 * caller says, through page_service_read, once its reads of every answer
 * up to seq are done (after each deforming, and after its last; a caller
 * that made no direct request says it too, with its last seq, so that its
 * channel is freed at once when released): until then the service keeps
 * the slots they read.  page_service_read throws GPUOPS_ERR_DEVICE when
 * the service stopped meanwhile (its memory may have gone under the reads).
 */
const uint8_t *page_service_cache(Runtime &rt, const GpuopsPageLink &link);
const uint32_t *page_service_loc(const GpuopsPageLink &link);
void page_service_read(const GpuopsPageLink &link, uint64_t seq, bool check = true);

/*
 * All of P's pages into dst (device memory, npages x page_size),
 * in requests of up to GPUOPS_PAGE_SERVICE_PAGES for area 0, each copied
 * from the staging area on cs and waited for (`copied`) before the next;
 * returns with every page in dst, and its last request's number (read).
 * Throws as above.
 */
uint64_t page_service_gather(Runtime &rt, const GpuopsPageLink &link, const GpuopsQueryPages &P,
							 uint8_t *dst, cudaStream_t cs, cudaEvent_t copied,
							 PageServiceTimes *times);

} /* namespace cuda */
} /* namespace gpuops */

#endif /* GPUOPS_PAGE_SERVICE_CUH */
