/*
 * runtime_process.cuh
 *    The process-wide state of the CUDA runtime that its three files share
 *    (private to cuda/runtime/): the process's Runtime, and the helper
 *    thread that makes, trims and drops the context off the backend's own
 *    thread.
 *
 *   cuda_runtime.cu    the Runtime: probe, initialization, the pinned
 *                      staging pool, device memory, idle; CUDA errors and
 *                      interruptible waits
 *   helper_thread.cu   the helper thread's state, the backend's wait for
 *                      it, and the prewarm it runs
 *   cuda_lifecycle.cu  the extern "C" entry points of gpuops_cuda.h
 *
 * They were one file; the state that file kept in statics is declared here
 * and defined once (the_runtime in cuda_runtime.cu, the helper's state in
 * helper_thread.cu).  start_helper is a template (it takes the helper's work
 * as a lambda), so its body is here.
 */
#ifndef GPUOPS_RUNTIME_PROCESS_CUH
#define GPUOPS_RUNTIME_PROCESS_CUH

#include <atomic>
#include <cstdint>
#include <thread>

#include "cuda_runtime.cuh"
#include "thread_signals.hpp"

namespace gpuops {
namespace cuda {

/* The process's runtime (cuda_runtime.cu): null until first needed. */
extern Runtime *the_runtime;

/*
 * The helper thread: makes the context before a query needs it
 * (gpuops_cuda_prewarm) or tears it down after a transaction
 * (gpuops_cuda_idle), both of which take the driver seconds when many
 * processes do so at once, off the backend's own thread.  One at a time: a
 * new helper first joins the one before it.  The backend joins it before
 * any device call of its own (wait_for_prewarm).
 */
extern std::thread *prewarm_thread;			  /* the newest helper, until joined */
extern uint64_t helper_started;				  /* helpers started */
extern std::atomic<uint64_t> helper_finished; /* the newest one whose work is over */
extern bool helper_releases;				  /* the newest one tears the context down */

/*
 * The mapping of host memory for kernels to read in place
 * (gpuops_cuda_host_map_start): pinning a whole shared_buffers takes the
 * driver seconds (0.15-0.7 s a GB on the H100), so it runs on a thread of its
 * own, detached, while the backend's queries copy; they read in place once
 * it is done.  map_state: 0 none, 1 mapping, 2 mapped, -1 failed (not
 * tried again).  A context torn down takes the mapping with it (state 0
 * again); none is torn down while the mapping runs (Runtime::idle).
 */
extern std::atomic<int> map_state;
extern void *map_ptr;					 /* what is (being) mapped */
extern std::atomic<uint64_t> map_micros; /* how long it took */

/* Waits for the prewarm thread's work, interruptibly, then joins it (helper_thread.cu). */
void wait_for_prewarm();

/* The helper's work for gpuops_cuda_prewarm: Runtime::init (helper_thread.cu). */
void prewarm_main(GpuopsSettings settings) noexcept;

/*
 * Starts work on a new helper thread, after the previous helper (if any)
 * ends; false if no thread could be started (the caller does the work, or
 * leaves it to the first device call).  The helper blocks every signal.
 */
template <class Work>
bool
start_helper(Work work) noexcept
{
	std::thread *before = prewarm_thread;
	uint64_t gen = helper_started + 1;

	try
	{
		SignalsBlocked blocked;

		prewarm_thread = new std::thread([before, gen, work]() noexcept {
			if (before != nullptr)
			{
				before->join();
				delete before;
			}
			work();
			helper_finished.store(gen, std::memory_order_release);
		});
	}
	catch (...)
	{
		prewarm_thread = before;
		return false;
	}
	helper_started = gen;
	return true;
}

} /* namespace cuda */
} /* namespace gpuops */

#endif /* GPUOPS_RUNTIME_PROCESS_CUH */
