/*
 * boundary.h
 *    The C++/PostgreSQL boundary.
 *
 * PostgreSQL reports errors with longjmp; C++ unwinds with exceptions.  Two
 * rules keep them apart:
 *   1. Every function PostgreSQL calls (hooks, custom path/scan/exec
 *      callbacks, SQL functions) runs its body through GpuopsGuard(): an
 *      exception is caught, its message copied into a static buffer, and the
 *      PostgreSQL error is raised only after the try/catch scope has closed,
 *      so no C++ object is alive when longjmp runs.
 *   2. Code in src/ that calls PostgreSQL keeps no C++ object with a
 *      destructor on its stack (plain structs, palloc'd memory); the C++ that
 *      owns resources lives behind the noexcept device interface, and device
 *      resources are freed on abort by memory-context reset callbacks.
 */
#ifndef GPUOPS_BOUNDARY_H
#define GPUOPS_BOUNDARY_H

#include <exception>

extern "C" {
#include "postgres.h"
}

/* Raises the PostgreSQL error for an exception caught at the boundary. */
[[noreturn]] extern void GpuopsRaiseCppError(const char *where);
extern void GpuopsRememberCppError(const char *what) noexcept;

template <typename Func, typename... Args>
static inline auto
GpuopsGuard(const char *where, Func func, Args... args) -> decltype(func(args...))
{
	try
	{
		return func(args...);
	}
	catch (const std::exception &e)
	{
		GpuopsRememberCppError(e.what());
	}
	catch (...)
	{
		GpuopsRememberCppError("unknown C++ exception");
	}
	GpuopsRaiseCppError(where);
}

#endif
