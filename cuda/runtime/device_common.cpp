/*
 * device_common.cpp
 *    The device layer's error message slot and its interrupt check.
 */
#include <pthread.h>

#include <atomic>

#include "device_common.hpp"

namespace gpuops {

static std::atomic<GpuopsInterruptCheck> interrupt_check{nullptr};
static pthread_t interrupt_thread;	/* the thread that registered it */

static thread_local char last_error[512] = "no error";

void
set_last_error(const char *fmt, ...) noexcept
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

void
fail(GpuopsStatus status, const char *fmt, ...)
{
	char		buf[512];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	throw DeviceError(status, buf);
}

void
check_interrupt()
{
	GpuopsInterruptCheck check = interrupt_check.load(std::memory_order_acquire);

	if (check != nullptr && pthread_equal(pthread_self(), interrupt_thread) && check() != 0)
		throw DeviceError(GPUOPS_ERR_CANCELED, "canceled by an interrupt");
}

}								/* namespace gpuops */

extern "C" void
gpuops_set_interrupt_check(GpuopsInterruptCheck check) noexcept
{
	gpuops::interrupt_thread = pthread_self();
	gpuops::interrupt_check.store(check, std::memory_order_release);
}

extern "C" const char *
gpuops_last_error(void) noexcept
{
	return gpuops::last_error;
}
