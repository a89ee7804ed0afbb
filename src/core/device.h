/*
 * device.h
 *    The PostgreSQL side's view of the device layer: which backend runs, and
 *    the one place where a device status turns into an ereport.
 */
#ifndef GPUOPS_DEVICE_FACADE_H
#define GPUOPS_DEVICE_FACADE_H

extern "C" {
#include "postgres.h"
}

#include "gpuops_device.h"

/* May the planner offer gpuops paths now (gpuops.enabled, gpuops.device)? */
extern bool GpuopsPlanningAllowed(void);

/* Is a usable GPU present?  Probed once per backend process, lazily. */
extern bool GpuopsGpuPresent(void);

/*
 * Does this transaction run on CUDA: gpuops.device is not cpu, and (with a
 * GPU) the process holds a device session (device_sessions.cpp), waiting
 * for one if needed; without one it runs on the CPU twin.
 */
extern bool GpuopsUseCuda(void);

/*
 * Pins host memory the CUDA engine will copy batches from, when the
 * primary engine is CUDA and its context is up (after a device call);
 * false: left pageable.  Unpin before the memory goes away.
 */
extern bool GpuopsPinHostMemory(void *p, Size bytes);
extern void GpuopsUnpinHostMemory(void *p);
/*
 * Pins and maps host memory for the device to read in place, on a thread
 * of the CUDA runtime's (gpuops_cuda_host_map_start): Start is false when
 * it cannot start now; Mapped says it is done (in the live context);
 * MapMs how long it took.
 */
extern bool GpuopsMapHostMemoryStart(void *p, Size bytes);
extern bool GpuopsHostMemoryMapped(const void *p);
extern bool GpuopsHostMemoryMapPending(void);
extern double GpuopsHostMemoryMapMs(void);

/*
 * Device sessions (device_sessions.cpp): the shared-memory count of the
 * processes that hold a CUDA context.  Init from _PG_init; Acquire counts
 * this process in, waiting up to gpuops.device_session_wait; false (after a
 * NOTICE per gpuops.cpu_fallback, or an ERROR with it off) when none was free.
 */
extern void GpuopsDeviceSessionsInit(void);
extern bool GpuopsDeviceSessionAcquire(void);

/*
 * The engine a query runs on first: CUDA (GpuopsUseCuda), else the CPU twin
 * (gpuops_cpu_device(), also every node's fallback).
 */
extern const GpuopsDevice *GpuopsPrimaryDevice(void);

/*
 * Handles a failed device call of operator `node`.  Returns when the caller
 * should finish on the CPU backend (after a NOTICE or DEBUG1 message, per
 * gpuops.cpu_fallback); otherwise raises the ERROR with the status's SQLSTATE.
 * `fallback_possible` is false when the failing backend already was the
 * fallback.
 */
extern void GpuopsDeviceFailed(const char *node, GpuopsStatus status, bool fallback_possible);

/* Raises the ERROR for a failed device-layer call that has no fallback. */
[[noreturn]] extern void GpuopsRaiseStatus(const char *what, GpuopsStatus status);

/* Waits a moment for asynchronous device work, staying cancellable. */
extern void GpuopsWaitForDevice(void);

/* Lets long device-layer calls stop for a pending interrupt (this process). */
extern void GpuopsRegisterInterruptCheck(void);

/*
 * At a node's executor start: begin starting the GPU while the input is
 * read, with the settings of GpuopsSettingsFor(shared).
 */
extern void GpuopsPrewarmDeviceFor(int eflags, bool shared);

#endif
