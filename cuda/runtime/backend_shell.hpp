/*
 * backend_shell.hpp
 *    The C entry points of a backend, generated from a class.
 *
 * Every operator reaches src/ through a table of noexcept C functions
 * (gpuops_*.h) taking an opaque handle.  Behind each entry point is the
 * same shell: cast the handle to the backend's class, run the body inside
 * guarded() so that no exception unwinds into PostgreSQL's C frames, and
 * for a begin, new the object and hand its pointer out as the handle.
 * These templates write that shell once: a backend is a class whose
 * constructor is its begin, whose destructor is its end, and whose member
 * functions are the other entry points; backend_tables.hpp builds each
 * operator's table from such a class, for the CUDA backend and its CPU twin
 * alike.
 *
 * The entry for member M of class C (any arguments, const or not):
 *   entry<Handle, &C::M>        R (*)(Handle *, Args...) noexcept, or
 *                               R (*)(const Handle *, Args...) for a const M
 *   static_entry<&C::F>         R (*)(Args...) noexcept, for a static F
 *   begin<C, Handle, Args...>   GpuopsStatus (*)(Args..., Handle **out):
 *                               *out = new C(Args...), NULL on failure
 *   begin_child<C, Handle, Parent, ParentHandle, Args...>
 *                               GpuopsStatus (*)(ParentHandle *, Args...,
 *                               Handle **out): *out = new C(parent, Args...)
 *   end<C, Handle>              void (*)(Handle *): delete (NULL is fine)
 * A member returning GpuopsStatus runs inside guarded(), which turns an
 * exception into its status and message; so does one returning anything
 * else (void, a count), which returns R() after a failure, with the message
 * set.  A constructor that throws leaves nothing behind (the members built
 * so far are destroyed, the destructor's body does not run), as a begin
 * that failed always has; the destructor runs for begun objects only.
 *
 * Internal to the engine (cuda/): compiled by nvcc and g++ alike, never
 * seen by src/.
 */
#ifndef GPUOPS_BACKEND_SHELL_HPP
#define GPUOPS_BACKEND_SHELL_HPP

#include <memory>
#include <type_traits>

#include "device_common.hpp"

namespace gpuops {
namespace shell {

/*
 * Runs body inside guarded().  what names the entry point for the
 * slow-call diagnostic: the generated entry's __PRETTY_FUNCTION__, which
 * report_slow_call() shortens to "Class::member".
 */
template <class R, class F>
R
run(F &&body, const char *what) noexcept
{
	if constexpr (std::is_same_v<R, GpuopsStatus>)
		return guarded(body, what);
	else if constexpr (std::is_void_v<R>)
		(void) guarded(
			[&]() {
				body();
				return GPUOPS_OK;
			},
			what);
	else
	{
		R result{};

		(void) guarded(
			[&]() {
				result = body();
				return GPUOPS_OK;
			},
			what);
		return result;
	}
}

template <class Handle, class Sig, Sig Method>
struct MemberEntry;

template <class Handle, class Impl, class R, class... Args, R (Impl::*Method)(Args...)>
struct MemberEntry<Handle, R (Impl::*)(Args...), Method>
{
	static R call(Handle *h, Args... args) noexcept
	{
		return run<R>([&]() -> R { return (reinterpret_cast<Impl *>(h)->*Method)(args...); },
					  __PRETTY_FUNCTION__);
	}
};

template <class Handle, class Impl, class R, class... Args, R (Impl::*Method)(Args...) const>
struct MemberEntry<Handle, R (Impl::*)(Args...) const, Method>
{
	static R call(const Handle *h, Args... args) noexcept
	{
		return run<R>([&]() -> R { return (reinterpret_cast<const Impl *>(h)->*Method)(args...); },
					  __PRETTY_FUNCTION__);
	}
};

template <class Sig, Sig Fn>
struct StaticEntry;

template <class R, class... Args, R (*Fn)(Args...)>
struct StaticEntry<R (*)(Args...), Fn>
{
	static R call(Args... args) noexcept
	{
		return run<R>([&]() -> R { return Fn(args...); }, __PRETTY_FUNCTION__);
	}
};

template <class Impl, class Handle, class... Args>
struct Begin
{
	static GpuopsStatus call(Args... args, Handle **out) noexcept
	{
		*out = nullptr;
		return guarded(
			[&]() {
				auto impl = std::make_unique<Impl>(args...);

				*out = reinterpret_cast<Handle *>(impl.release());
				return GPUOPS_OK;
			},
			__PRETTY_FUNCTION__);
	}
};

template <class Impl, class Handle, class Parent, class ParentHandle, class... Args>
struct BeginChild
{
	static GpuopsStatus call(ParentHandle *parent, Args... args, Handle **out) noexcept
	{
		*out = nullptr;
		return guarded(
			[&]() {
				auto impl = std::make_unique<Impl>(reinterpret_cast<Parent *>(parent), args...);

				*out = reinterpret_cast<Handle *>(impl.release());
				return GPUOPS_OK;
			},
			__PRETTY_FUNCTION__);
	}
};

template <class Impl, class Handle>
void
end_call(Handle *h) noexcept
{
	delete reinterpret_cast<Impl *>(h);
}

template <class Handle, auto Method>
constexpr auto entry = &MemberEntry<Handle, decltype(Method), Method>::call;

template <auto Fn>
constexpr auto static_entry = &StaticEntry<decltype(Fn), Fn>::call;

template <class Impl, class Handle, class... Args>
constexpr auto begin = &Begin<Impl, Handle, Args...>::call;

template <class Impl, class Handle, class Parent, class ParentHandle, class... Args>
constexpr auto begin_child = &BeginChild<Impl, Handle, Parent, ParentHandle, Args...>::call;

template <class Impl, class Handle>
constexpr auto end = &end_call<Impl, Handle>;

} /* namespace shell */
} /* namespace gpuops */

#endif
