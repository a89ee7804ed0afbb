/*
 * device_common.cpp
 *    The device layer's error message slot and its interrupt check.
 */
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "device_common.hpp"

namespace gpuops {

static std::atomic<GpuopsInterruptCheck> interrupt_check{nullptr};
static pthread_t interrupt_thread; /* the thread that registered it */

static thread_local char last_error[512] = "no error";

void
set_last_error(const char *fmt, ...) noexcept
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

void
fail(GpuopsStatus status, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

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

thread_local const char *last_cuda_call = "none";

int
slow_call_ms()
{
	static const int ms = []() {
		const char *v = getenv("GPUOPS_LOG_SLOW_MS");

		return v ? atoi(v) : 0;
	}();

	return ms;
}

bool
interrupt_due() noexcept
{
	GpuopsInterruptCheck check = interrupt_check.load(std::memory_order_acquire);

	return check != nullptr && pthread_equal(pthread_self(), interrupt_thread) && check() != 0;
}

/*
 * The name of an entry point the backend shell generated (backend_shell.hpp)
 * is its template's __PRETTY_FUNCTION__, e.g. "static R gpuops::shell::
 * MemberEntry<...>::call(...) [with Handle = GpuopsJoin; ...; R (Impl::*
 * Method)(A ...) = &gpuops::{anonymous}::CpuJoin::join_build]": the member
 * it runs is its last template argument, or for a begin the class (Impl).
 * Into buf: "CpuJoin::join_build", "CpuJoin::begin"; any other name as is.
 */
static const char *
entry_name(const char *what, char *buf, size_t size)
{
	const char *with = strstr(what, " [with ");
	const char *name;
	const char *stop;
	const char *suffix = "";
	const char *colon;
	int keep = 2; /* components kept: Class::member */
	int seps = 0;

	if (with == nullptr)
		return what;
	if (strstr(what, "::Begin") != nullptr && strstr(what, "::Begin") < with &&
		(name = strstr(with, "Impl = ")) != nullptr)
	{
		name += strlen("Impl = ");
		suffix = "::begin";
		keep = 1;
	}
	else
	{
		/* the value of the last argument: from its " = " to the closing ']' */
		name = nullptr;
		for (const char *p = strstr(with, " = "); p != nullptr; p = strstr(p + 3, " = "))
			name = p + 3;
		if (name == nullptr)
			return what;
		if (*name == '&')
			name++;
	}
	stop = name + strcspn(name, ";]");
	/* without the namespaces: the last `keep` components */
	for (colon = stop; colon > name; colon--)
		if (colon[-1] == ':' && colon - 1 > name && colon[-2] == ':' && ++seps == keep)
			break;
	if (seps == keep)
		name = colon;
	snprintf(buf, size, "%.*s%s", static_cast<int>(stop - name), name, suffix);
	return buf;
}

void
report_slow_call(const char *what, double ms) noexcept
{
	char buf[256];

	fprintf(
		stderr,
		"gpuops device layer [%d]: %s took %.0f ms and returned with an interrupt due; last CUDA call: %s\n",
		static_cast<int>(getpid()), entry_name(what, buf, sizeof(buf)), ms, last_cuda_call);
	fflush(stderr);
}

} /* namespace gpuops */

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
