/*
 * host_gather.cpp
 *    Multi-threaded gather of result columns into output order.
 *
 * After a key-pointer sort the host holds the rows in arrival order and the
 * device has returned the output order.  Emitting rows straight from that
 * order costs a cache and TLB miss per column per row (measured: ~6x slower
 * than sequential emission), so the columns are gathered into output order
 * first.  Each gather is independent random reads and sequential writes;
 * several threads keep more misses in flight.  The threads touch only the
 * arrays handed in: no PostgreSQL state, no allocation through PostgreSQL.
 */
#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include "device_common.hpp"

namespace gpuops {
namespace {

/* Below this many elements a helper thread costs more than it saves. */
constexpr uint64_t kMinPerThread = 1 << 18;
constexpr unsigned kMaxThreads = 8;

template <typename T>
void
gather_range(const GpuopsGatherColumn &col, const uint32_t *order, uint64_t lo,
			 uint64_t hi, unsigned shift)
{
	const uint32_t mask = (1u << shift) - 1;
	T		   *dst = reinterpret_cast<T *>(col.out);

	for (uint64_t i = lo; i < hi; i++)
	{
		uint32_t	r = order[i];

		dst[i] = reinterpret_cast<const T *>(col.batch_values[r >> shift])[r & mask];
	}
}

void
gather_any(const GpuopsGatherColumn &col, const uint32_t *order, uint64_t lo,
		   uint64_t hi, unsigned shift)
{
	switch (col.width)
	{
		case 1:
			return gather_range<uint8_t>(col, order, lo, hi, shift);
		case 2:
			return gather_range<uint16_t>(col, order, lo, hi, shift);
		case 4:
			return gather_range<uint32_t>(col, order, lo, hi, shift);
		case 8:
			return gather_range<uint64_t>(col, order, lo, hi, shift);
		default:
			{
				const uint32_t mask = (1u << shift) - 1;

				for (uint64_t i = lo; i < hi; i++)
				{
					uint32_t	r = order[i];

					memcpy(col.out + i * col.width,
						   col.batch_values[r >> shift] + static_cast<size_t>(r & mask) * col.width,
						   col.width);
				}
			}
	}
}

}								/* namespace */
}								/* namespace gpuops */

extern "C" GpuopsStatus
gpuops_host_gather(const GpuopsGatherColumn *cols, int ncols, const uint32_t *order,
				   uint64_t n, unsigned batch_shift) noexcept
{
	using namespace gpuops;

	return guarded([&]() {
		uint64_t	work = n * static_cast<uint64_t>(ncols > 0 ? ncols : 1);
		unsigned	hw = std::thread::hardware_concurrency();
		unsigned	nthreads = std::min<unsigned>({kMaxThreads, hw > 1 ? hw / 2 : 1,
			static_cast<unsigned>(std::max<uint64_t>(1, work / kMinPerThread))});
		/* work items: (column, row range) slices of about equal size */
		uint64_t	slice = std::max<uint64_t>(kMinPerThread, (n + nthreads - 1) / nthreads);
		std::vector<std::pair<int, uint64_t>> items;

		for (int c = 0; c < ncols; c++)
			for (uint64_t lo = 0; lo < n; lo += slice)
				items.emplace_back(c, lo);
		auto		run = [&](size_t first, size_t step) {
			for (size_t k = first; k < items.size(); k += step)
			{
				uint64_t	lo = items[k].second;

				gather_any(cols[items[k].first], order, lo, std::min(n, lo + slice), batch_shift);
			}
		};
		std::vector<std::thread> threads;

		try
		{
			for (unsigned t = 1; t < nthreads; t++)
				threads.emplace_back(run, t, nthreads);
		}
		catch (const std::system_error &)
		{
			/* no more threads to be had: finish the started ones, do it all here */
			for (std::thread &th : threads)
				th.join();
			threads.clear();
			run(0, 1);
			return GPUOPS_OK;
		}
		run(0, nthreads);
		for (std::thread &th : threads)
			th.join();
		return GPUOPS_OK;
	});
}
