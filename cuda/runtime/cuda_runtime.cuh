/*
 * cuda_runtime.cuh
 *    Per-process CUDA state: lazy device initialization, the pinned staging
 *    pool, the streams, and stream-ordered device memory under a budget.
 *
 * One instance per backend process, created on the first GPU operation (never
 * in the postmaster: CUDA state does not survive fork).  The pinned pool is
 * allocated once and reused by every query of the process, since pinning
 * costs about 100 ms per 256 MB.
 */
#ifndef GPUOPS_CUDA_RUNTIME_CUH
#define GPUOPS_CUDA_RUNTIME_CUH

#include <cuda_runtime.h>

#include <vector>

#include "device_common.hpp"

namespace gpuops {
namespace cuda {

[[noreturn]] void throw_cuda(cudaError_t err, const char *what);

#define GPUOPS_CUDA_STR2_(x) #x
#define GPUOPS_CUDA_STR_(x) GPUOPS_CUDA_STR2_(x)
#define GPUOPS_CUDA_TRY(call) \
	do \
	{ \
		::gpuops::last_cuda_call = __FILE__ ":" GPUOPS_CUDA_STR_(__LINE__) ": " #call; \
		cudaError_t gpuops_err_ = (call); \
		if (gpuops_err_ != cudaSuccess) \
			::gpuops::cuda::throw_cuda(gpuops_err_, #call); \
	} while (0)

/* Checks the launch of the kernel just queued. */
#define GPUOPS_CUDA_CHECK_LAUNCH(what) GPUOPS_CUDA_TRY(cudaGetLastError())

/*
 * Waits for the stream (or event) like cudaStreamSynchronize, but polls,
 * so that the caller's interrupt check can stop the wait (it throws
 * GPUOPS_ERR_CANCELED; the work in flight finishes on its own and whoever
 * frees its buffers synchronizes first).  Errors are thrown as
 * GPUOPS_CUDA_TRY does.
 */
void sync_stream(cudaStream_t s);
void sync_event(cudaEvent_t e);

/*
 * Copies device memory into pageable host memory (a std::vector, a
 * caller's buffer) after the stream's earlier work.  Such a copy blocks the
 * calling thread inside the driver until everything queued before it on
 * the stream has run, where no interrupt check can stop it (seen on the
 * H100: a cancelled aggregate's finish call went on 700 ms), so it first
 * waits with sync_stream.  Returns with the copy done, and the bytes added
 * to *counted (the operation's bytes_from_device, gpuops_device.h: every
 * device -> host copy is counted, so the counter is not optional).
 */
void copy_to_host(void *dst, const void *src, size_t bytes, cudaStream_t s, uint64_t *counted);

class Runtime
{
  public:
	/* The process's runtime, initialized on first use; throws NO_DEVICE. */
	static Runtime &get(const GpuopsSettings &settings);

	/*
	 * Probes without initializing the pool; safe to call any time.  Without
	 * with_memory it creates no CUDA context (cudaMemGetInfo would), so
	 * planning can ask whether a GPU exists without paying for one.
	 */
	static void probe(GpuopsDeviceInfo *info, bool with_memory = true);

	int stream_count() const { return static_cast<int>(streams_.size()); }
	cudaStream_t stream(int i) const { return streams_[i % streams_.size()]; }

	/* Pinned staging buffers. */
	size_t buffer_bytes() const { return buffer_bytes_; }
	int buffer_count() const { return static_cast<int>(buffers_.size()); }
	void *buffer(int i) const { return buffers_[i].host; }
	int try_acquire_buffer(); /* -1 when every buffer is in flight */
	int acquire_buffer_blocking();
	void release_after(int i, cudaStream_t s); /* free once s passes here */
	void release_now(int i);
	/* a small pinned area for values the host must read (kScalarBytes) */
	uint64_t *pinned_scalar() const { return scalar_; }
	static constexpr size_t kScalarBytes = 4096;

	/* Device memory from the stream-ordered pool, counted against the budget. */
	void *alloc(size_t bytes, cudaStream_t s);
	void free(void *p, size_t bytes, cudaStream_t s) noexcept;
	size_t used() const { return used_; }
	void set_limit(size_t bytes, uint32_t share)
	{
		limit_ = bytes;
		share_ = share > 1 ? share : 1;
	}
	/* the budget in force: the set limit, or 90% of the device's memory */
	size_t limit() const { return (limit_ ? limit_ : total_memory_ / 10 * 9) / share_; }

	/* gpuops_cuda_idle: true when no context is left */
	bool idle(bool release_context, bool may_wait) noexcept;

	void mark_broken(cudaError_t err);
	bool initialized() const { return initialized_; }
	/* contexts made so far: what a process opened in an earlier one is gone */
	uint64_t inits() const { return inits_; }
	bool broken() const { return broken_ != cudaSuccess; }

  private:
	struct PinnedBuffer
	{
		void *host = nullptr;
		bool busy = false; /* handed out, or copy in flight */
		bool in_flight = false;
		cudaEvent_t done = nullptr;
	};

	void init(const GpuopsSettings &settings);
	friend void prewarm_main(GpuopsSettings settings) noexcept;

	bool initialized_ = false;
	uint64_t inits_ = 0;
	cudaError_t broken_ = cudaSuccess;
	size_t total_memory_ = 0;
	size_t limit_ = 0;
	uint32_t share_ = 1;
	size_t used_ = 0;
	bool trim_due_ = false; /* the pool may cache blocks: allocated since the last trim */
	std::vector<cudaStream_t> streams_;
	std::vector<PinnedBuffer> buffers_;
	size_t buffer_bytes_ = 0;
	void *pool_ = nullptr;
	uint64_t *scalar_ = nullptr;
};

/* Milliseconds between two completed events; 0 when either is missing. */
double elapsed_ms(cudaEvent_t a, cudaEvent_t b) noexcept;

} /* namespace cuda */
} /* namespace gpuops */

#endif
