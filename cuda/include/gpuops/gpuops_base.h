/*
 * gpuops_base.h
 *    The device engine's C interface, one part: status codes, the interrupt
 *    check, fault injection, settings, device information and the last error:
 *    what every part of the interface uses.
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_BASE_H
#define GPUOPS_BASE_H

#include <stddef.h>
#include <stdint.h>

/* small helpers usable from host code, and from kernels when nvcc compiles */
#ifdef __CUDACC__
#define GPUOPS_INLINE static inline __host__ __device__
#else
#define GPUOPS_INLINE static inline
#endif

/* every part's declarations have C linkage; entry points never throw */
#ifdef __cplusplus
#define GPUOPS_NOEXCEPT noexcept
#define GPUOPS_C_BEGIN extern "C" {
#define GPUOPS_C_END }
#else
#define GPUOPS_NOEXCEPT
#define GPUOPS_C_BEGIN
#define GPUOPS_C_END
#endif

GPUOPS_C_BEGIN

typedef enum GpuopsStatus
{
	GPUOPS_OK = 0,
	GPUOPS_PENDING,			  /* asynchronous work not finished yet */
	GPUOPS_ERR_NO_DEVICE,	  /* no usable GPU (none present, driver missing) */
	GPUOPS_ERR_OUT_OF_MEMORY, /* device or pinned memory exhausted / over budget */
	GPUOPS_ERR_DEVICE,		  /* kernel launch/execution or copy failed */
	GPUOPS_ERR_UNSUPPORTED,	  /* the request is outside what the backend can do */
	GPUOPS_ERR_INTERNAL,	  /* a bug: bad arguments, broken invariant */
	GPUOPS_ERR_CANCELED		  /* the caller's interrupt check asked to stop */
} GpuopsStatus;

/*
 * Interrupts.  The device layer never sees PostgreSQL; instead its long
 * work (host loops of the CPU backend and of the host-side helpers, waits
 * for the device, for a staging buffer or for the CUDA context) calls
 * `check` now and then, on the thread that registered it only, and when
 * it returns nonzero stops, frees what it holds and returns
 * GPUOPS_ERR_CANCELED.  The caller then raises the pending interrupt (the
 * statement's cancel, timeout or the process's termination) once the
 * call has returned.  A kernel already launched runs to its end (work is
 * issued in batches, so that is short).  NULL: never stop.
 */
typedef int (*GpuopsInterruptCheck)(void);
extern void gpuops_set_interrupt_check(GpuopsInterruptCheck check) GPUOPS_NOEXCEPT;

/* Failures a superuser can force (gpuops.fault_injection). */
typedef enum GpuopsFault
{
	GPUOPS_FAULT_NONE = 0,
	GPUOPS_FAULT_NO_DEVICE,
	GPUOPS_FAULT_OUT_OF_MEMORY,
	GPUOPS_FAULT_KERNEL_ERROR
} GpuopsFault;

/* Per-backend-process settings, copied from GUCs before each operation. */
typedef struct GpuopsSettings
{
	size_t pinned_pool_bytes;	/* pinned staging pool, allocated once */
	size_t batch_bytes;			/* one staging buffer */
	int streams;				/* CUDA streams for copy/kernel overlap */
	size_t device_memory_limit; /* 0 = 90% of the device's memory */
	uint32_t device_share;		/* > 1: this many processes of one parallel query
								 * use the device; each gets that part of the limit */
	GpuopsFault fault;			/* injected failure, GPUOPS_FAULT_NONE normally */
} GpuopsSettings;

typedef struct GpuopsDeviceInfo
{
	int gpu_available; /* 1 when a usable GPU was found */
	char reason[256];  /* why not, when gpu_available == 0 */
	char name[256];
	int cc_major;
	int cc_minor;
	int multiprocessors;
	uint64_t total_memory;
	uint64_t free_memory;
	int driver_version; /* CUDA encoding: 1000 * major + 10 * minor */
	int runtime_version;
} GpuopsDeviceInfo;

/* Message of the last failure in this process (thread-local), never NULL. */
extern const char *gpuops_last_error(void) GPUOPS_NOEXCEPT;

/* Build description, e.g. "CUDA 13.0, sm_90". */
extern const char *gpuops_build_info(void) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_BASE_H */
