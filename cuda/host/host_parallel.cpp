/*
 * host_parallel.cpp
 *    gpuops_host_parallel_rows (gpuops_host.h): a caller's pure per-row work
 *    on the host helpers' threads.
 */
#include "device_common.hpp"
#include "gpuops_host.h"
#include "host_threads.hpp"

extern "C" GpuopsStatus
gpuops_host_parallel_rows(uint64_t n, uint64_t min_per_thread, GpuopsRowsFn fn, void *arg) noexcept
{
	using namespace gpuops;

	return guarded([&]() {
		unsigned nthreads = host_thread_count(n, min_per_thread > 0 ? min_per_thread : 1);

		/* contiguous ranges: each thread writes its own stretch of the output */
		run_threads(nthreads, [&](size_t first, size_t step) {
			for (size_t t = first; t < nthreads; t += step)
				fn(arg, n * t / nthreads, n * (t + 1) / nthreads);
		});
		return GPUOPS_OK;
	});
}
