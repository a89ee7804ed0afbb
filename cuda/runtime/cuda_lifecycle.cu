/*
 * cuda_lifecycle.cu
 *    The CUDA engine's process lifecycle, its extern "C" entry points
 *    (gpuops_cuda.h): the GPU probe for the planner, the prewarm and the
 *    wait for it, the release between transactions, the device's memory.
 *    Each starts, joins or asks the helper thread (helper_thread.cu), or
 *    hands over to the Runtime (cuda_runtime.cu).
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "cuda_runtime.cuh"
#include "runtime_process.cuh"

extern "C" void
gpuops_cuda_prewarm(const GpuopsSettings *settings) noexcept
{
	using gpuops::cuda::the_runtime;
	using gpuops::cuda::prewarm_thread;

	try
	{
		/* a prewarm under way or done (a release under way: make it again after) */
		if (prewarm_thread != nullptr && !gpuops::cuda::helper_releases)
			return;
		/* made, or failed */
		if (the_runtime != nullptr && (the_runtime->initialized() || the_runtime->broken()))
			return;
		if (the_runtime == nullptr)
			the_runtime = new gpuops::cuda::Runtime();
		if (gpuops::cuda::start_helper(
				[settings = *settings]() { gpuops::cuda::prewarm_main(settings); }))
			gpuops::cuda::helper_releases = false;
	}
	catch (...)
	{
		/* no thread: the first device call initializes as before */
	}
}

extern "C" void
gpuops_cuda_prewarm_wait(void) noexcept
{
	using gpuops::cuda::prewarm_thread;

	if (prewarm_thread == nullptr)
		return;
	try
	{
		prewarm_thread->join();
	}
	catch (...)
	{
	}
	delete prewarm_thread;
	prewarm_thread = nullptr;
}

extern "C" int
gpuops_cuda_prewarm_pending(void) noexcept
{
	return gpuops::cuda::prewarm_thread != nullptr &&
		gpuops::cuda::helper_finished.load(std::memory_order_acquire) !=
		gpuops::cuda::helper_started;
}

namespace gpuops {
namespace cuda {

/* gpuops_cuda_present_poll's probe: its answer (-1: none yet) and why not */
static std::atomic<int> probe_answer{-1};
static bool probe_started = false;
static bool probe_joined = false;
static char probe_reason[sizeof(((GpuopsDeviceInfo *) nullptr)->reason)];

static void
probe_main() noexcept
{
	GpuopsDeviceInfo info;
	int answer = 0;

	memset(&info, 0, sizeof(info));
	try
	{
		Runtime::probe(&info, false);
		answer = info.gpu_available ? 1 : 0;
	}
	catch (...)
	{
		snprintf(info.reason, sizeof(info.reason), "the GPU probe failed");
	}
	memcpy(probe_reason, info.reason, sizeof(probe_reason));
	probe_answer.store(answer, std::memory_order_release);
}

} /* namespace cuda */
} /* namespace gpuops */

extern "C" int
gpuops_cuda_present_poll(void) noexcept
{
	using namespace gpuops::cuda;
	int answer = probe_answer.load(std::memory_order_acquire);

	if (answer < 0 && !probe_started)
	{
		probe_started = true;
		if (start_helper([]() noexcept { probe_main(); }))
			helper_releases = false;
		else
			probe_main(); /* no thread: here, as before */
		answer = probe_answer.load(std::memory_order_acquire);
	}
	if (answer < 0)
		return -1;
	if (!probe_joined)
	{
		/* the probe's helper has done its work: join it, so a prewarm can start */
		probe_joined = true;
		if (prewarm_thread != nullptr)
			gpuops_cuda_prewarm_wait();
	}
	if (answer == 0)
		gpuops::set_last_error("%s", probe_reason);
	return answer;
}

extern "C" int
gpuops_cuda_idle(int release_context, int may_wait) noexcept
{
	using gpuops::cuda::the_runtime;

	/*
	 * A context still being made (a statement cancelled while its prewarm
	 * ran) is left to finish: joining it here, at the end of the aborted
	 * transaction, held the cancel up for as long as the driver took
	 * (seconds, while many processes made or dropped contexts).  The next
	 * transaction's end gives it back.
	 */
	if (gpuops_cuda_prewarm_pending())
		return 0;
	gpuops_cuda_prewarm_wait();
	if (the_runtime == nullptr)
		return 1;
	return the_runtime->idle(release_context != 0, may_wait != 0) ? 1 : 0;
}

extern "C" int
gpuops_cuda_host_register(void *p, size_t bytes) noexcept
{
	using gpuops::cuda::the_runtime;

	/* only on the context the runtime made (device 0), never while it is being made */
	if (p == nullptr || bytes == 0 || gpuops_cuda_prewarm_pending() || the_runtime == nullptr ||
		!the_runtime->initialized() || the_runtime->broken())
		return 0;
	if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess)
	{
		(void) cudaGetLastError(); /* not sticky: the copies just stay pageable */
		return 0;
	}
	return 1;
}

namespace {

/* Pins and maps [p, p + bytes) on the calling thread: whether it is mapped. */
bool
map_now(void *p, size_t bytes) noexcept
{
	void *dev = nullptr;

	if (cudaSetDevice(0) != cudaSuccess ||
		cudaHostRegister(p, bytes, cudaHostRegisterMapped) != cudaSuccess)
	{
		(void) cudaGetLastError(); /* not sticky: the pages are copied instead */
		return false;
	}
	if (cudaHostGetDevicePointer(&dev, p, 0) != cudaSuccess)
	{
		(void) cudaGetLastError();
		(void) cudaHostUnregister(p);
		(void) cudaGetLastError();
		return false;
	}
	return true;
}

/*
 * map_now in pieces of kMapPiece bytes, sleeping a little between them:
 * the driver holds the process's other device calls back while it pins
 * (16 GB: 2.3 s when shared buffers were touched already, 9.7 s on a
 * fresh server, whose pages it first has to fault in), so the backend's
 * queries, copying meanwhile, wait for one piece at most (with a 1 ms
 * pause they ran ~2x slower meanwhile; 4 ms adds 2 s to 16 GB).  Pieces need
 * kernels to read registered memory at its host address (UVA): elsewhere
 * the region is mapped whole.  A failure undoes the pieces made.
 */
constexpr size_t kMapPiece = 32u << 20;

bool
map_in_pieces(void *p, size_t bytes) noexcept
{
	int host_ptr = 0;
	size_t done = 0;

	if (cudaSetDevice(0) != cudaSuccess ||
		cudaDeviceGetAttribute(&host_ptr, cudaDevAttrCanUseHostPointerForRegisteredMem, 0) !=
			cudaSuccess)
	{
		(void) cudaGetLastError();
		return false;
	}
	if (!host_ptr)
		return map_now(p, bytes);
	while (done < bytes)
	{
		size_t n = std::min(kMapPiece, bytes - done);

		if (cudaHostRegister(static_cast<char *>(p) + done, n, cudaHostRegisterMapped) !=
			cudaSuccess)
			break;
		done += n;
		std::this_thread::sleep_for(std::chrono::milliseconds(4));
	}
	if (done < bytes)
	{
		(void) cudaGetLastError();
		for (size_t off = 0; off < done; off += kMapPiece)
			(void) cudaHostUnregister(static_cast<char *>(p) + off);
		(void) cudaGetLastError();
		return false;
	}
	return true;
}

bool
runtime_up() noexcept
{
	using gpuops::cuda::the_runtime;

	return !gpuops_cuda_prewarm_pending() && the_runtime != nullptr && the_runtime->initialized() &&
		!the_runtime->broken();
}

} /* namespace */

extern "C" int
gpuops_cuda_host_map(void *p, size_t bytes) noexcept
{
	if (p == nullptr || bytes == 0 || !runtime_up())
		return 0;
	return map_now(p, bytes) ? 1 : 0;
}

extern "C" int
gpuops_cuda_host_map_start(void *p, size_t bytes) noexcept
{
	using namespace gpuops::cuda;

	if (map_state.load(std::memory_order_acquire) != 0)
		return map_state.load(std::memory_order_acquire) > 0;
	if (p == nullptr || bytes == 0 || !runtime_up())
		return 0;
	map_ptr = p;
	map_state.store(1, std::memory_order_release);
	try
	{
		gpuops::SignalsBlocked blocked;

		std::thread([p, bytes]() noexcept {
			auto t0 = std::chrono::steady_clock::now();
			bool ok = map_in_pieces(p, bytes);

			map_micros.store(std::chrono::duration_cast<std::chrono::microseconds>(
								 std::chrono::steady_clock::now() - t0)
								 .count(),
							 std::memory_order_relaxed);
			map_state.store(ok ? 2 : -1, std::memory_order_release);
		}).detach();
	}
	catch (...)
	{
		map_state.store(0, std::memory_order_release); /* no thread: another time */
		return 0;
	}
	return 1;
}

extern "C" int
gpuops_cuda_host_mapped(const void *p) noexcept
{
	using namespace gpuops::cuda;

	return map_state.load(std::memory_order_acquire) == 2 && p == map_ptr && runtime_up();
}

extern "C" int
gpuops_cuda_host_map_pending(void) noexcept
{
	return gpuops::cuda::map_state.load(std::memory_order_acquire) == 1;
}

extern "C" double
gpuops_cuda_host_map_ms(void) noexcept
{
	return gpuops::cuda::map_micros.load(std::memory_order_relaxed) / 1000.0;
}

extern "C" void
gpuops_cuda_host_unregister(void *p) noexcept
{
	if (cudaHostUnregister(p) != cudaSuccess)
		(void) cudaGetLastError();
}

extern "C" uint64_t
gpuops_cuda_total_memory(void) noexcept
{
	GpuopsDeviceInfo info;

	try
	{
		gpuops::cuda::Runtime::probe(&info, false);
	}
	catch (...)
	{
		return 0;
	}
	return info.gpu_available ? info.total_memory : 0;
}
