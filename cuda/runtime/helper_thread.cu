/*
 * helper_thread.cu
 *    The CUDA runtime's helper thread (runtime_process.cuh declares it and
 *    holds start_helper): its state, the backend's wait for it before a
 *    device call of its own, and the prewarm, the work gpuops_cuda_prewarm
 *    gives it.  What the helper is for is said where its state is declared.
 */
#include <atomic>
#include <chrono>
#include <thread>

#include "cuda_runtime.cuh"
#include "runtime_process.cuh"

namespace gpuops {
namespace cuda {

std::thread *prewarm_thread = nullptr;
uint64_t helper_started = 0;
std::atomic<uint64_t> helper_finished{0};
bool helper_releases = false;
std::atomic<int> map_state{0};
void *map_ptr = nullptr;
std::atomic<uint64_t> map_micros{0};

/* Waits for the prewarm thread's work, interruptibly, then joins it. */
void
wait_for_prewarm()
{
	while (gpuops_cuda_prewarm_pending())
	{
		check_interrupt();
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	gpuops_cuda_prewarm_wait();
}

/*
 * The prewarm: the whole initialization, or nothing.  A failure leaves
 * initialized_ false, and the first device call initializes again and
 * reports it (what the failed attempt created stays allocated).
 */
void
prewarm_main(GpuopsSettings settings) noexcept
{
	try
	{
		the_runtime->init(settings);
	}
	catch (...)
	{
		(void) cudaGetLastError();
	}
}

} /* namespace cuda */
} /* namespace gpuops */
