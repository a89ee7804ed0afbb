/*
 * cuda_runtime.cu
 *    Per-process CUDA state; see cuda_runtime.cuh.  This file: the Runtime
 *    itself (probe, initialization, the pinned staging pool, device memory
 *    under the budget, idle), and how its CUDA calls fail (throw_cuda) and
 *    wait (sync_stream, sync_event).  The helper thread is in
 *    helper_thread.cu, the extern "C" entry points in cuda_lifecycle.cu
 *    (runtime_process.cuh says what they share).
 */
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "cuda_runtime.cuh"
#include "runtime_process.cuh"

namespace gpuops {
namespace cuda {

/* Errors after which the context is unusable for the rest of the process. */
static bool
is_sticky(cudaError_t err)
{
	switch (err)
	{
		case cudaErrorIllegalAddress:
		case cudaErrorLaunchFailure:
		case cudaErrorIllegalInstruction:
		case cudaErrorMisalignedAddress:
		case cudaErrorInvalidAddressSpace:
		case cudaErrorInvalidPc:
		case cudaErrorHardwareStackError:
		case cudaErrorAssert:
		case cudaErrorLaunchTimeout:
		case cudaErrorECCUncorrectable:
			return true;
		default:
			return false;
	}
}

Runtime *the_runtime = nullptr;

/*
 * Polls query() (cudaStreamQuery or cudaEventQuery) until the work is done,
 * checking the caller's interrupt between polls: a spin of up to kSpin for
 * the usual short waits, then sleeps of 50 us.  Why a spin by time: a
 * query's leader waits twice a batch for work of ~20-60 us (its copies,
 * the batch before's kernel); after 64 polls it slept, and a 50 us sleep
 * ends ~100 us later (the timer's slack), so the H100's trace (SSB SF 20
 * Q1.1, ~500 batches) found the host ~97 us late on the median copy, ~40
 * ms of a 176 ms loop.
 */
template <class Query>
static void
poll_until_done(Query query, const char *what)
{
	constexpr auto kSpin = std::chrono::microseconds(500);
	auto start = std::chrono::steady_clock::now();
	bool spinning = true;

	for (;;)
	{
		cudaError_t err = query();

		if (err == cudaSuccess)
			return;
		if (err != cudaErrorNotReady)
			throw_cuda(err, what);
		check_interrupt();
		if (spinning)
			spinning = std::chrono::steady_clock::now() - start < kSpin;
		else
			std::this_thread::sleep_for(std::chrono::microseconds(50));
	}
}

void
sync_stream(cudaStream_t s)
{
	poll_until_done([s]() { return cudaStreamQuery(s); }, "cudaStreamSynchronize");
}

void
sync_event(cudaEvent_t e)
{
	poll_until_done([e]() { return cudaEventQuery(e); }, "cudaEventSynchronize");
}

void
copy_to_host(void *dst, const void *src, size_t bytes, cudaStream_t s, uint64_t *counted)
{
	sync_stream(s);
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
	*counted += bytes;
	sync_stream(s);
}

void
throw_cuda(cudaError_t err, const char *what)
{
	GpuopsStatus status;

	(void) cudaGetLastError(); /* clear a non-sticky error */
	switch (err)
	{
		case cudaErrorMemoryAllocation:
			status = GPUOPS_ERR_OUT_OF_MEMORY;
			break;
		case cudaErrorNoDevice:
		case cudaErrorInsufficientDriver:
		case cudaErrorInvalidDevice:
		case cudaErrorDevicesUnavailable:
		case cudaErrorSystemDriverMismatch:
		case cudaErrorCompatNotSupportedOnDevice:
		case cudaErrorNoKernelImageForDevice:
			status = GPUOPS_ERR_NO_DEVICE;
			break;
		default:
			status = GPUOPS_ERR_DEVICE;
			break;
	}
	if (is_sticky(err) && the_runtime)
		the_runtime->mark_broken(err);
	fail(status, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}

double
elapsed_ms(cudaEvent_t a, cudaEvent_t b) noexcept
{
	float ms = 0;

	if (!a || !b || cudaEventElapsedTime(&ms, a, b) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return 0;
	}
	return ms;
}

/* does the module hold code this GPU can run? (probe's question) */
__global__ void
probe_kernel()
{
}

void
Runtime::probe(GpuopsDeviceInfo *info, bool with_memory)
{
	int count = 0;
	cudaError_t err = cudaGetDeviceCount(&count);

	memset(info, 0, sizeof(*info));
	cudaRuntimeGetVersion(&info->runtime_version);
	if (cudaDriverGetVersion(&info->driver_version) != cudaSuccess)
		info->driver_version = 0;
	if (err != cudaSuccess || count == 0)
	{
		(void) cudaGetLastError();
		snprintf(info->reason, sizeof(info->reason), "%s",
				 err != cudaSuccess ? cudaGetErrorString(err) : "no CUDA device found");
		return;
	}
	if (the_runtime && the_runtime->broken_ != cudaSuccess)
	{
		snprintf(info->reason, sizeof(info->reason),
				 "the GPU failed earlier in this session (%s); reconnect to use it again",
				 cudaGetErrorName(the_runtime->broken_));
		return;
	}
	cudaDeviceProp prop;

	if ((err = cudaGetDeviceProperties(&prop, 0)) != cudaSuccess)
	{
		(void) cudaGetLastError();
		snprintf(info->reason, sizeof(info->reason), "%s", cudaGetErrorString(err));
		return;
	}
	snprintf(info->name, sizeof(info->name), "%s", prop.name);
	info->cc_major = prop.major;
	info->cc_minor = prop.minor;
	info->multiprocessors = prop.multiProcessorCount;
	info->total_memory = prop.totalGlobalMem;
	size_t free_b = 0, total_b = 0;

	if (!with_memory)
		;
	else if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
		info->free_memory = free_b;
	else
		(void) cudaGetLastError();
	/*
	 * The module carries native code for GPUOPS_CUDA_ARCHS and PTX for a
	 * later GPU (Makefile): a GPU older than the oldest has no code to run
	 * (every kernel launch would fail with "no kernel image"), so gpuops
	 * says so once here and keeps PostgreSQL's plans.
	 */
	if (cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, probe_kernel) != cudaSuccess)
	{
		(void) cudaGetLastError();
		snprintf(info->reason, sizeof(info->reason),
				 "this build of gpuops has no code for compute capability %d.%d (%s)", prop.major,
				 prop.minor, gpuops_build_info());
		return;
	}
	info->gpu_available = 1;
}

Runtime &
Runtime::get(const GpuopsSettings &settings)
{
	wait_for_prewarm();
	if (!the_runtime)
		the_runtime = new Runtime();
	Runtime &rt = *the_runtime;

	if (rt.broken_ != cudaSuccess)
		fail(GPUOPS_ERR_NO_DEVICE,
			 "the GPU failed earlier in this session (%s); reconnect to use it again",
			 cudaGetErrorName(rt.broken_));
	if (!rt.initialized_)
		rt.init(settings);
	return rt;
}

void
Runtime::init(const GpuopsSettings &settings)
{
	GpuopsDeviceInfo info;

	streams_.clear(); /* after a failed attempt */
	buffers_.clear();
	probe(&info);
	if (!info.gpu_available)
		fail(GPUOPS_ERR_NO_DEVICE, "no usable GPU: %s", info.reason);
	GPUOPS_CUDA_TRY(cudaSetDevice(0));
	GPUOPS_CUDA_TRY(cudaFree(nullptr)); /* create the context now */
	total_memory_ = info.total_memory;

	/*
	 * Keep freed device memory in the pool across queries (up to 1 GB) so a
	 * query does not pay for mapping fresh memory; the rest goes back.
	 */
	cudaMemPool_t mempool;

	GPUOPS_CUDA_TRY(cudaDeviceGetDefaultMemPool(&mempool, 0));
	uint64_t keep = 1ull << 30;

	GPUOPS_CUDA_TRY(cudaMemPoolSetAttribute(mempool, cudaMemPoolAttrReleaseThreshold, &keep));

	int nstreams = settings.streams < 1 ? 1 : settings.streams;

	for (int i = 0; i < nstreams; i++)
	{
		cudaStream_t s;

		GPUOPS_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		streams_.push_back(s);
	}

	buffer_bytes_ = settings.batch_bytes;
	size_t nbuf = settings.pinned_pool_bytes / buffer_bytes_;

	if (nbuf < 2)
		nbuf = 2; /* one filling while one is copied */
	GPUOPS_CUDA_TRY(cudaHostAlloc(&pool_, nbuf * buffer_bytes_, cudaHostAllocDefault));
	buffers_.resize(nbuf);
	for (size_t i = 0; i < nbuf; i++)
	{
		buffers_[i].host = static_cast<char *>(pool_) + i * buffer_bytes_;
		GPUOPS_CUDA_TRY(cudaEventCreateWithFlags(&buffers_[i].done, cudaEventDisableTiming));
	}
	GPUOPS_CUDA_TRY(
		cudaHostAlloc(reinterpret_cast<void **>(&scalar_), kScalarBytes, cudaHostAllocDefault));
	initialized_ = true;
	inits_++;
}

int
Runtime::try_acquire_buffer()
{
	for (size_t i = 0; i < buffers_.size(); i++)
	{
		PinnedBuffer &b = buffers_[i];

		if (b.busy && b.in_flight)
		{
			cudaError_t err = cudaEventQuery(b.done);

			if (err == cudaSuccess)
				b.busy = b.in_flight = false;
			else if (err != cudaErrorNotReady)
				throw_cuda(err, "cudaEventQuery(staging buffer)");
		}
		if (!b.busy)
		{
			b.busy = true;
			return static_cast<int>(i);
		}
	}
	return -1;
}

int
Runtime::acquire_buffer_blocking()
{
	for (;;)
	{
		int i = try_acquire_buffer();

		if (i >= 0)
			return i;
		for (PinnedBuffer &b : buffers_)
			if (b.busy && b.in_flight)
			{
				sync_event(b.done);
				break;
			}
		bool any_in_flight = false;

		for (PinnedBuffer &b : buffers_)
			any_in_flight |= b.in_flight;
		if (!any_in_flight)
			fail(GPUOPS_ERR_INTERNAL, "every staging buffer is held and none is in flight");
	}
}

void
Runtime::release_after(int i, cudaStream_t s)
{
	PinnedBuffer &b = buffers_[i];

	GPUOPS_CUDA_TRY(cudaEventRecord(b.done, s));
	b.in_flight = true;
}

void
Runtime::release_now(int i)
{
	buffers_[i].busy = buffers_[i].in_flight = false;
}

void *
Runtime::alloc(size_t bytes, cudaStream_t s)
{
	size_t limit = this->limit();

	if (used_ + bytes > limit)
		fail(GPUOPS_ERR_OUT_OF_MEMORY,
			 "device memory budget exceeded: %zu MB in use, %zu MB asked, limit %zu MB",
			 used_ >> 20, bytes >> 20, limit >> 20);
	void *p = nullptr;

	GPUOPS_CUDA_TRY(cudaMallocAsync(&p, bytes == 0 ? 1 : bytes, s));
	used_ += bytes;
	trim_due_ = true;
	return p;
}

void
Runtime::free(void *p, size_t bytes, cudaStream_t s) noexcept
{
	if (!p)
		return;
	if (cudaFreeAsync(p, s) != cudaSuccess)
		(void) cudaGetLastError();
	used_ -= bytes;
}

bool
Runtime::idle(bool release_context, bool may_wait) noexcept
{
	if (!initialized_)
		return true;
	if (broken_ != cudaSuccess || used_ != 0)
		return false; /* a failed context stays; memory in use stays */
	for (PinnedBuffer &b : buffers_)
		if (b.busy && !b.in_flight)
			return false; /* handed out: some node still holds it */
	if (!release_context)
	{
		/*
		 * The pool keeps up to 1 GB while queries run; idle, it keeps none.
		 * The wait lets the trim see the last frees on their streams; after
		 * a cancel (!may_wait) a kernel may still run, and the trim keeps
		 * what is not yet given back, for the next transaction's end.
		 * Nothing allocated since the last trim: nothing to give back (a
		 * session's SET, or a query that kept PostgreSQL's plan).
		 */
		auto trim = [](bool wait) noexcept {
			cudaMemPool_t mempool;

			if ((wait && cudaDeviceSynchronize() != cudaSuccess) ||
				cudaDeviceGetDefaultMemPool(&mempool, 0) != cudaSuccess ||
				cudaMemPoolTrimTo(mempool, 0) != cudaSuccess)
				(void) cudaGetLastError();
		};

		if (!trim_due_)
			return false;
		if (!may_wait)
		{
			trim(false);
			return false;
		}
		trim_due_ = false;

		/*
		 * On the helper thread, like a context's teardown: with many
		 * contexts on the GPU the wait and the trim took 200-870 ms at
		 * every commit (stress, 52 processes on the H200), while the
		 * client waited for its commit.  The next device call waits for
		 * it, where a cancel ends the wait.
		 */
		if (!start_helper([trim]() noexcept { trim(true); }))
			trim(true);
		else
			helper_releases = false;
		return false;
	}

	/*
	 * Everything this runtime made lives in the primary context, and
	 * nothing else in the process holds a device pointer between queries:
	 * resetting the device frees it all, and init() makes it again.  On the
	 * helper thread: the teardown takes the driver seconds when many
	 * processes make or drop contexts, and the backend is committing (its
	 * client waits).  The backend's next device call joins the helper first.
	 */
	/* the mapping thread is in the driver for this context: keep it (a later end releases) */
	if (map_state.load(std::memory_order_acquire) == 1)
		return false;

	std::vector<cudaEvent_t> events;
	std::vector<cudaStream_t> streams;
	void *pool = pool_;
	void *scalar = scalar_;

	try
	{
		for (PinnedBuffer &b : buffers_)
			if (b.done)
				events.push_back(b.done);
		streams = streams_;
	}
	catch (...)
	{
		return false; /* no memory for the lists: keep the context */
	}
	buffers_.clear();
	streams_.clear();
	pool_ = nullptr;
	scalar_ = nullptr;
	initialized_ = false;
	/* the reset takes the mapping with it: the next large read maps again */
	if (map_state.load(std::memory_order_acquire) == 2)
		map_state.store(0, std::memory_order_release);

	auto teardown = [](const std::vector<cudaEvent_t> &es, const std::vector<cudaStream_t> &ss,
					   void *p, void *sc) noexcept {
		for (cudaEvent_t e : es)
			(void) cudaEventDestroy(e);
		for (cudaStream_t st : ss)
			(void) cudaStreamDestroy(st);
		if (p)
			(void) cudaFreeHost(p);
		if (sc)
			(void) cudaFreeHost(sc);
		if (cudaDeviceReset() != cudaSuccess)
			(void) cudaGetLastError();
	};

	try
	{
		if (start_helper([=]() noexcept { teardown(events, streams, pool, scalar); }))
		{
			helper_releases = true;
			return true;
		}
	}
	catch (...)
	{
		/* the copies for the helper failed: tear down here */
	}
	teardown(events, streams, pool, scalar);
	return true;
}

void
Runtime::mark_broken(cudaError_t err)
{
	broken_ = err;
}

} /* namespace cuda */
} /* namespace gpuops */

#ifndef GPUOPS_CUDA_ARCHS /* the Makefile's GPUOPS_CUDA_ARCHS and GPUOPS_PTX_ARCH */
#error "GPUOPS_CUDA_ARCHS is not defined"
#endif
#define GPUOPS_STR2(x) #x
#define GPUOPS_STR(x) GPUOPS_STR2(x)

/* e.g. "CUDA 13.0, sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120, PTX compute_120" */
extern "C" const char *
gpuops_build_info(void) noexcept
{
	static char buf[256];
	const char *archs = GPUOPS_CUDA_ARCHS;
	int n = snprintf(buf, sizeof(buf), "CUDA %d.%d,", CUDART_VERSION / 1000,
					 (CUDART_VERSION % 1000) / 10);

	while (*archs && n < (int) sizeof(buf))
	{
		int len = (int) strcspn(archs, " ");

		if (len > 0)
			n += snprintf(buf + n, sizeof(buf) - n, " sm_%.*s", len, archs);
		archs += len + (archs[len] == ' ');
	}
	if (n < (int) sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, ", PTX compute_%s", GPUOPS_STR(GPUOPS_PTX_ARCH));
	return buf;
}
