/*
 * pair_window.hpp
 *    The window a join's pairs come back in (GpuopsJoinPairs), shared by
 *    the hash, merge and nested-loop joins of both engines.
 *
 * A probe's pairs are counted first (their prefix sums give the total and
 * each pair's number), then written a window at a time, at most max_pairs
 * pairs (join_window_pairs_for_budget: both engines cut alike), so that
 * one key matching half of both sides never needs all its pairs in memory
 * at once.  The window's arrays stay valid until the next window or the
 * join's end, as the interface promises.  pair_window.cuh writes a window
 * on the device; write_host() here writes one on the host.  The CPU nested
 * loop tests pairs until a window is full instead of counting them first:
 * it fills probe_out and build_out itself and returns them with publish().
 */
#ifndef GPUOPS_PAIR_WINDOW_HPP
#define GPUOPS_PAIR_WINDOW_HPP

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpuops_device.h"

namespace gpuops {

struct PairWindow
{
	uint64_t total = 0;							/* the current probe's pairs */
	uint64_t written = 0;						/* pairs returned so far */
	uint64_t max_pairs = 0;						/* pairs per window */
	std::vector<uint32_t> probe_out, build_out; /* the last window's pairs */
	/*
	 * the bytes of every window handed out (8 a pair): the CPU twins'
	 * bytes_from_device, the figure the CUDA backends copy for the pairs
	 */
	uint64_t published_bytes = 0;

	/* A new probe of `pairs` pairs: its first window comes next. */
	void start(uint64_t pairs)
	{
		total = pairs;
		written = 0;
	}

	/* The size of the next window. */
	uint64_t next_size() const { return std::min(total - written, max_pairs); }

	/* Returns the window's pairs, probe_out and build_out, to the caller. */
	void publish(GpuopsJoinPairs *pairs, bool more)
	{
		published_bytes += probe_out.size() * 2 * sizeof(uint32_t);
		pairs->npairs = probe_out.size();
		pairs->probe_rows = probe_out.data();
		pairs->build_rows = build_out.data();
		pairs->more = more;
	}

	/* The window of m pairs just written: advances past it and returns it. */
	void hand_out(uint64_t m, GpuopsJoinPairs *pairs)
	{
		written += m;
		publish(pairs, written < total);
	}

	/*
	 * The next window on the host: fill(from, m, probe_out, build_out)
	 * writes pairs [from, from + m) of the probe.
	 */
	template <class Fill>
	void write_host(GpuopsJoinPairs *pairs, Fill fill)
	{
		uint64_t from = written;
		uint64_t m = next_size();

		probe_out.resize(m);
		build_out.resize(m);
		fill(from, m, probe_out.data(), build_out.data());
		hand_out(m, pairs);
	}
};

} /* namespace gpuops */

#endif
