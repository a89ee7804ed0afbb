/*
 * host_threads.hpp
 *    The host helpers' threads: how many, and running them with every
 *    signal blocked (thread_signals.hpp).
 */
#ifndef GPUOPS_HOST_THREADS_HPP
#define GPUOPS_HOST_THREADS_HPP

#include <algorithm>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

#include "thread_signals.hpp"

namespace gpuops {

constexpr unsigned kMaxHostThreads = 16;

/*
 * Threads for `work` elements of memory work: the process's other work
 * (parallel workers, the device) is done by the time these run, so up to
 * every hardware thread, but none for less than min_per_thread elements.
 */
inline unsigned
host_thread_count(uint64_t work, uint64_t min_per_thread)
{
	unsigned hw = std::thread::hardware_concurrency();

	return std::min<unsigned>(
		{kMaxHostThreads, std::max(hw, 1u),
		 static_cast<unsigned>(std::max<uint64_t>(1, work / min_per_thread))});
}

/*
 * Runs fn(first, step) on nthreads threads (this one included), each taking
 * every step-th work item from `first`; if no more threads can be had, the
 * started ones finish and this thread does everything.
 */
template <typename Fn>
void
run_threads(unsigned nthreads, const Fn &fn)
{
	std::vector<std::thread> threads;

	try
	{
		SignalsBlocked blocked;

		for (unsigned t = 1; t < nthreads; t++)
			threads.emplace_back(fn, t, nthreads);
	}
	catch (const std::system_error &)
	{
		for (std::thread &th : threads)
			th.join();
		fn(0, 1);
		return;
	}
	fn(0, nthreads);
	for (std::thread &th : threads)
		th.join();
}

} /* namespace gpuops */

#endif
