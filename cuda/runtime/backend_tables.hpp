/*
 * backend_tables.hpp
 *    Each operator's table of entry points (gpuops_*.h), built from a
 *    backend class by the shell's templates (backend_shell.hpp).
 *
 * The slot order of a table is written here once, for the CUDA backend and
 * its CPU twin alike; a backend names its members after the slots they
 * fill (join_build fills join_build), its constructor takes the begin's
 * arguments and its destructor is the end.  A member whose signature does
 * not match its slot does not compile.  constexpr, so that every table is
 * constant-initialized: no static-initialization order to mind.
 */
#ifndef GPUOPS_BACKEND_TABLES_HPP
#define GPUOPS_BACKEND_TABLES_HPP

#include "backend_shell.hpp"

namespace gpuops {
namespace shell {

/*
 * Sort: static probe; constructor (settings, spec); sort_stage,
 * sort_submit, sort_finish, sort_poll, sort_result, sort_ties, sort_stats
 * (const), sort_recheck, sort_values, sort_park_room, sort_park_stage,
 * sort_park_submit, sort_park_next, sort_park_rewind.
 */
template <class S>
constexpr GpuopsBackend
make_sort_backend(const char *name)
{
	using H = GpuopsSort;

	return {
		name,
		static_entry<&S::probe>,
		begin<S, H, const GpuopsSettings *, const GpuopsSortSpec *>,
		entry<H, &S::sort_stage>,
		entry<H, &S::sort_submit>,
		entry<H, &S::sort_finish>,
		entry<H, &S::sort_poll>,
		entry<H, &S::sort_result>,
		entry<H, &S::sort_ties>,
		entry<H, &S::sort_stats>,
		end<S, H>,
		entry<H, &S::sort_recheck>,
		entry<H, &S::sort_values>,
		entry<H, &S::sort_park_room>,
		entry<H, &S::sort_park_stage>,
		entry<H, &S::sort_park_submit>,
		entry<H, &S::sort_park_next>,
		entry<H, &S::sort_park_rewind>,
	};
}

/*
 * Hash join: constructor (settings, nkeys); join_build,
 * join_build_finish, join_probe, join_next_pairs, join_capacity (const),
 * join_probe_rows (const), join_stats (const), join_directory; and a
 * lookup class J::Lookup, constructed from (J *, max_rows), whose lookup
 * member is the lookup slot.
 */
template <class J>
constexpr GpuopsJoinBackend
make_join_backend(const char *name)
{
	using H = GpuopsJoin;
	using L = typename J::Lookup;
	using LH = GpuopsJoinLookup;

	return {
		name,
		begin<J, H, const GpuopsSettings *, int>,
		entry<H, &J::join_build>,
		entry<H, &J::join_build_finish>,
		entry<H, &J::join_probe>,
		entry<H, &J::join_next_pairs>,
		entry<H, &J::join_capacity>,
		entry<H, &J::join_probe_rows>,
		entry<H, &J::join_stats>,
		end<J, H>,
		entry<H, &J::join_directory>,
		begin_child<L, LH, J, H, uint32_t>,
		entry<LH, &L::lookup>,
		end<L, LH>,
	};
}

/*
 * Aggregation: static agg_capacity; constructor (settings, spec, nrows);
 * agg_add, agg_finish, agg_groups, agg_stats (const).
 */
template <class A>
constexpr GpuopsAggBackend
make_agg_backend(const char *name)
{
	using H = GpuopsAgg;

	return {
		name,
		static_entry<&A::agg_capacity>,
		begin<A, H, const GpuopsSettings *, const GpuopsAggSpec *, uint64_t>,
		entry<H, &A::agg_add>,
		entry<H, &A::agg_finish>,
		entry<H, &A::agg_groups>,
		entry<H, &A::agg_stats>,
		end<A, H>,
	};
}

/*
 * Query block: constructor (settings, spec); query_add, query_finish,
 * query_groups, query_stats (const).
 */
template <class Q>
constexpr GpuopsQueryBackend
make_query_backend(const char *name)
{
	using H = GpuopsQuery;

	return {
		name,
		begin<Q, H, const GpuopsSettings *, const GpuopsQuerySpec *>,
		entry<H, &Q::query_add>,
		entry<H, &Q::query_finish>,
		entry<H, &Q::query_groups>,
		entry<H, &Q::query_stats>,
		end<Q, H>,
	};
}

/*
 * Nested loop: constructor (settings, spec); nl_inner, nl_probe,
 * nl_next_pairs, nl_capacity (const), nl_probe_rows (const), nl_stats
 * (const).
 */
template <class N>
constexpr GpuopsNestLoopBackend
make_nestloop_backend(const char *name)
{
	using H = GpuopsNestLoop;

	return {
		name,
		begin<N, H, const GpuopsSettings *, const GpuopsNestLoopSpec *>,
		entry<H, &N::nl_inner>,
		entry<H, &N::nl_probe>,
		entry<H, &N::nl_next_pairs>,
		entry<H, &N::nl_capacity>,
		entry<H, &N::nl_probe_rows>,
		entry<H, &N::nl_stats>,
		end<N, H>,
	};
}

/* Pair filter: constructor (settings, spec); pf_side, pf_apply, pf_stats (const). */
template <class P>
constexpr GpuopsPairFilterBackend
make_pairfilter_backend(const char *name)
{
	using H = GpuopsPairFilter;

	return {
		name,
		begin<P, H, const GpuopsSettings *, const GpuopsPairFilterSpec *>,
		entry<H, &P::pf_side>,
		entry<H, &P::pf_apply>,
		entry<H, &P::pf_stats>,
		end<P, H>,
	};
}

/*
 * Merge join: constructor (settings, nkeys); mj_side, mj_join,
 * mj_next_pairs, mj_outer_order, mj_capacity (const), mj_stats (const).
 */
template <class M>
constexpr GpuopsMergeJoinBackend
make_mergejoin_backend(const char *name)
{
	using H = GpuopsMergeJoin;

	return {
		name,
		begin<M, H, const GpuopsSettings *, int>,
		entry<H, &M::mj_side>,
		entry<H, &M::mj_join>,
		entry<H, &M::mj_next_pairs>,
		entry<H, &M::mj_outer_order>,
		entry<H, &M::mj_capacity>,
		entry<H, &M::mj_stats>,
		end<M, H>,
	};
}

/* Top-N: constructor (settings, spec); topn_add, topn_finish, topn_result, topn_stats (const). */
template <class T>
constexpr GpuopsTopnBackend
make_topn_backend(const char *name)
{
	using H = GpuopsTopn;

	return {
		name,
		begin<T, H, const GpuopsSettings *, const GpuopsTopnSpec *>,
		entry<H, &T::topn_add>,
		entry<H, &T::topn_finish>,
		entry<H, &T::topn_result>,
		entry<H, &T::topn_stats>,
		end<T, H>,
	};
}

} /* namespace shell */
} /* namespace gpuops */

#endif
