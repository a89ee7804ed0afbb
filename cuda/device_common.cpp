/*
 * device_common.cpp
 *    The device layer's error message slot and build description.
 */
#include "device_common.hpp"

namespace gpuops {

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

}								/* namespace gpuops */

extern "C" const char *
gpuops_last_error(void) noexcept
{
	return gpuops::last_error;
}
