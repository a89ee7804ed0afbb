/*
 * gpuops_cuda.h
 *    The device engine's C interface, one part: the CUDA engine's process
 *    lifecycle: probe, prewarm, idle.
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_CUDA_H
#define GPUOPS_CUDA_H

#include "gpuops_base.h"

GPUOPS_C_BEGIN

/*
 * Is a usable GPU present?  Creates no CUDA context (for the planner); when
 * not, gpuops_last_error() says why.  The probe's first CUDA call starts the
 * driver, which takes over a second when many processes do so at once and
 * cannot be interrupted, so it runs on a helper thread: -1 while it runs
 * (the caller waits where a cancel can end the wait, and asks again), then
 * 1 (yes) or 0 (no).
 */
extern int gpuops_cuda_present_poll(void) GPUOPS_NOEXCEPT;

/*
 * Starts creating the process's CUDA context, streams and pinned pool on a
 * helper thread, so that a node's first device call finds them ready
 * instead of waiting for them after reading its input (about 0.5 s in a
 * backend, more when parallel workers start at once).  Does nothing once
 * started or done.  The thread makes CUDA runtime calls only; any failure
 * is left for the first device call to meet again and report.
 * gpuops_cuda_prewarm_wait joins it (each device call does first; call it
 * before the process exits).
 */
extern void gpuops_cuda_prewarm(const GpuopsSettings *settings) GPUOPS_NOEXCEPT;
extern void gpuops_cuda_prewarm_wait(void) GPUOPS_NOEXCEPT;
/*
 * Is the prewarm thread still creating the context (1)?  Creating one takes
 * seconds when many processes do at once: the caller waits for it where
 * it can be cancelled, polling this, before its first device call.
 */
extern int gpuops_cuda_prewarm_pending(void) GPUOPS_NOEXCEPT;

/*
 * Between transactions, when no query of the process holds device memory:
 * gives the stream-ordered pool's cached blocks back to the device and,
 * with release_context, everything else as well (pinned pool, streams, the
 * CUDA context itself), so that other backends can have the device; the
 * next device call starts it again.  Returns 1 when no context is left
 * (none was ever made, or it was released), 0 when one stays.  Nothing
 * happens after a sticky device failure (the session keeps reporting it),
 * or while the helper thread still makes or drops the context.  The
 * release and the pool's trim run on the helper thread (the driver takes
 * seconds when many processes make or drop contexts at once, and a trim
 * waits for the device); the next device call, or gpuops_cuda_prewarm_wait,
 * waits for them.  Nothing allocated since the last trim: nothing to do.  may_wait = 0 (at
 * an abort, where a cancelled query's kernels may still run) never waits
 * for the device: blocks freed but not yet reached on their stream stay
 * cached until a later call.
 */
extern int gpuops_cuda_idle(int release_context, int may_wait) GPUOPS_NOEXCEPT;

/*
 * Pins host memory that batches will be copied from (cudaHostRegister: a
 * parallel query's shared memory, which copies from pageable memory at
 * about 8 GB/s, pinned at 55), once the context is up (after a device
 * call); 1 when pinned, 0 when left as it was (no context yet, a failure).
 * The caller unregisters it before the memory goes away.
 */
extern int gpuops_cuda_host_register(void *p, size_t bytes) GPUOPS_NOEXCEPT;
extern void gpuops_cuda_host_unregister(void *p) GPUOPS_NOEXCEPT;

/*
 * Pins host memory and maps it into the device's address space, so that
 * kernels read it in place; 1 when mapped, 0 when not (no context yet, a
 * failure).  It stays mapped while the context lives.
 */
extern int gpuops_cuda_host_map(void *p, size_t bytes) GPUOPS_NOEXCEPT;

/*
 * The same for the process's one large region (the query's pages in shared
 * buffers), on a thread of its own: seconds for many GB, while the backend
 * goes on.  start: 1 when started (or done already), 0 when it cannot be now
 * (no context yet) or failed before.  mapped: done, for p, in the live
 * context.  pending: still mapping (the process must not tear the runtime
 * down under it at exit).  ms: how long the mapping took.
 */
extern int gpuops_cuda_host_map_start(void *p, size_t bytes) GPUOPS_NOEXCEPT;
extern int gpuops_cuda_host_mapped(const void *p) GPUOPS_NOEXCEPT;
extern int gpuops_cuda_host_map_pending(void) GPUOPS_NOEXCEPT;
extern double gpuops_cuda_host_map_ms(void) GPUOPS_NOEXCEPT;

/* The GPU's memory in bytes (0 without a usable GPU); creates no context. */
extern uint64_t gpuops_cuda_total_memory(void) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_CUDA_H */
