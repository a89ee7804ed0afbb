/*
 * device_common.hpp
 *    Internal helpers of the device layer: the error type, the guard every
 *    noexcept entry point runs its body in, and the thread-local message.
 *
 * Inside cuda/ failures travel as C++ exceptions (DeviceError); at each entry
 * point guarded() turns them into a GpuopsStatus plus a message, so nothing
 * ever unwinds into PostgreSQL's C frames.
 */
#ifndef GPUOPS_DEVICE_COMMON_HPP
#define GPUOPS_DEVICE_COMMON_HPP

#if defined(PG_VERSION_NUM) || defined(POSTGRES_H)
#error "cuda/ must not include PostgreSQL headers"
#endif

#include <chrono>
#include <cstdint>
#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "gpuops_device.h"

namespace gpuops {

class DeviceError : public std::exception
{
  public:
	DeviceError(GpuopsStatus status, std::string msg) : status_(status), msg_(std::move(msg)) {}
	GpuopsStatus status() const noexcept { return status_; }
	const char *what() const noexcept override { return msg_.c_str(); }

  private:
	GpuopsStatus status_;
	std::string msg_;
};

/* Milliseconds since t0, for the stats every operation reports. */
inline double
ms_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/* Records the message returned by gpuops_last_error(). */
void set_last_error(const char *fmt, ...) noexcept __attribute__((format(printf, 1, 2)));

[[noreturn]] void fail(GpuopsStatus status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Throws DeviceError(GPUOPS_ERR_CANCELED) when the caller's interrupt check
 * (gpuops_set_interrupt_check) says stop; on other threads it does nothing.
 */
void check_interrupt();

/* check_interrupt() on every 64K-th step i of a loop (i = 0 included). */
inline void
check_interrupt_every(uint64_t i)
{
	if ((i & 0xffff) == 0)
		check_interrupt();
}

/* The injected failures, raised where a real one of that kind would occur. */
inline void
maybe_inject(GpuopsFault want, GpuopsFault have)
{
	if (want != have)
		return;
	switch (have)
	{
		case GPUOPS_FAULT_NO_DEVICE:
			fail(GPUOPS_ERR_NO_DEVICE, "no GPU device (injected fault)");
		case GPUOPS_FAULT_OUT_OF_MEMORY:
			fail(GPUOPS_ERR_OUT_OF_MEMORY, "out of device memory (injected fault)");
		case GPUOPS_FAULT_KERNEL_ERROR:
			fail(GPUOPS_ERR_DEVICE, "kernel failed (injected fault)");
		default:
			break;
	}
}

/*
 * A diagnostic for waits that nothing cancels.  With GPUOPS_LOG_SLOW_MS=N in
 * the server's environment, an entry point that ran N ms or more and returns
 * with an interrupt due that it did not act on writes one line to stderr
 * (the server log): its name, its time and the last CUDA call it made.  The
 * statement's cancel then came late by about that much.
 */
extern thread_local const char *last_cuda_call;

int slow_call_ms();			   /* the threshold; 0 when unset */
bool interrupt_due() noexcept; /* check_interrupt() would throw */
void report_slow_call(const char *what, double ms) noexcept;

/* The body of guarded(): any exception becomes a status. */
template <class F>
GpuopsStatus
guarded_body(F &body) noexcept
{
	try
	{
		return body();
	}
	catch (const DeviceError &e)
	{
		set_last_error("%s", e.what());
		return e.status();
	}
	catch (const std::bad_alloc &)
	{
		set_last_error("out of host memory in the device layer");
		return GPUOPS_ERR_OUT_OF_MEMORY;
	}
	catch (const std::exception &e)
	{
		set_last_error("internal error in the device layer: %s", e.what());
		return GPUOPS_ERR_INTERNAL;
	}
	catch (...)
	{
		set_last_error("unknown internal error in the device layer");
		return GPUOPS_ERR_INTERNAL;
	}
}

/*
 * Runs the body of a noexcept entry point.  The body returns a status
 * (GPUOPS_OK or GPUOPS_PENDING) or throws; any exception becomes a status.
 * what names the entry point for the slow-call diagnostic.
 */
template <class F>
GpuopsStatus
guarded(F &&body, const char *what = __builtin_FUNCTION()) noexcept
{
	if (slow_call_ms() <= 0)
		return guarded_body(body);

	auto t0 = std::chrono::steady_clock::now();
	GpuopsStatus status = guarded_body(body);
	double ms = ms_since(t0);

	if (ms >= slow_call_ms() && status != GPUOPS_ERR_CANCELED && interrupt_due())
		report_slow_call(what, ms);
	return status;
}

} /* namespace gpuops */

#endif
