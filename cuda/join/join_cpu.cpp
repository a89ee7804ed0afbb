/*
 * join_cpu.cpp
 *    The CPU twin of the hash join (gpuops_device.h): the same directory
 *    build, probe, count-then-write and pair expansion as the CUDA backend,
 *    on the host.  Serves gpuops.device = cpu and the fallback.
 */
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "device_common.hpp"
#include "host_radix.hpp"
#include "join_hash.hpp"

namespace gpuops {
namespace {

struct CpuJoin
{
	GpuopsSettings settings;
	int			nkeys = 0;
	std::vector<uint64_t> build;	/* per build row its hash; sorted once finished */
	std::vector<uint32_t> sorted_rows;	/* build rows, in the order of build */
	uint64_t	build_rows = 0;
	std::vector<uint64_t> dir;		/* distinct hashes, sorted */
	std::vector<uint64_t> first;	/* their first index in build; [ndir] = build size */
	/* the current probe: candidates counted, pairs written window by window */
	std::vector<int64_t> slot;		/* per probe row: directory entry or -1 */
	std::vector<uint64_t> offsets;	/* per probe row: its first pair */
	std::vector<uint64_t> start;	/* per probe row: its entry's first index in build */
	bool		counts_only = false;	/* the current probe's build rows are not read */
	uint64_t	probe_n = 0;
	uint64_t	written = 0;		/* pairs returned so far */
	std::vector<uint32_t> probe_out, build_out;
	GpuopsJoinStats stats = {};
};

uint64_t
budget(const GpuopsSettings &s)
{
	return s.device_memory_limit / (s.device_share ? s.device_share : 1);
}

void
check_keys(const CpuJoin *j, const GpuopsJoinKeys *keys)
{
	if (keys->nkeys != j->nkeys)
		fail(GPUOPS_ERR_INTERNAL, "join keys: %d given, %d expected", keys->nkeys, j->nkeys);
	if (keys->nrows > UINT32_MAX)
		fail(GPUOPS_ERR_UNSUPPORTED, "too many rows in one join batch");
}

GpuopsStatus
cpu_join_begin(const GpuopsSettings *settings, int nkeys, GpuopsJoin **out) noexcept
{
	*out = nullptr;
	return guarded([&]() {
		/* the same injected faults as the CUDA backend, where it raises them */
		maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
		if (nkeys < 1 || nkeys > GPUOPS_MAX_JOIN_KEYS)
			fail(GPUOPS_ERR_INTERNAL, "bad number of join keys: %d", nkeys);
		auto		j = std::make_unique<CpuJoin>();

		j->settings = *settings;
		j->nkeys = nkeys;
		*out = reinterpret_cast<GpuopsJoin *>(j.release());
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_join_build(GpuopsJoin *join, const GpuopsJoinKeys *keys) noexcept
{
	return guarded([&]() {
		auto	   *j = reinterpret_cast<CpuJoin *>(join);
		auto		t0 = std::chrono::steady_clock::now();

		check_keys(j, keys);
		if (j->build_rows + keys->nrows > UINT32_MAX)
			fail(GPUOPS_ERR_UNSUPPORTED, "build side over %u rows", UINT32_MAX);
		for (uint64_t i = 0; i < keys->nrows; i++)
			if (!join_key_null(keys->nulls, j->nkeys, i))
			{
				j->build.push_back(join_hash(keys->words, j->nkeys, i));
				j->sorted_rows.push_back(static_cast<uint32_t>(j->build_rows + i));
			}
		j->build_rows += keys->nrows;
		j->stats.build_rows = j->build_rows;
		j->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_join_build_finish(GpuopsJoin *join) noexcept
{
	return guarded([&]() {
		auto	   *j = reinterpret_cast<CpuJoin *>(join);
		auto		t0 = std::chrono::steady_clock::now();

		maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, j->settings.fault);
		/* the device's limit, kept here too so that tests without a GPU catch a caller over it */
		uint64_t	capacity = join_build_rows_for_budget(budget(j->settings), j->nkeys);

		if (capacity > 0 && j->build.size() > capacity)
			fail(GPUOPS_ERR_INTERNAL, "build of %llu rows over the capacity of %llu",
				 (unsigned long long) j->build.size(), (unsigned long long) capacity);
		/* stable: equal hashes keep build order, as the device's radix sort does */
		radix_sort_pairs(j->build, j->sorted_rows, 64);
		for (uint64_t i = 0; i < j->build.size(); i++)
		{
			if (i == 0 || j->build[i] != j->build[i - 1])
			{
				j->dir.push_back(j->build[i]);
				j->first.push_back(i);
			}
		}
		j->first.push_back(j->build.size());
		std::vector<uint64_t>().swap(j->build);	/* the directory holds what probes need */
		j->stats.directory = j->dir.size();
		j->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

/* j->offsets holds the probe's n rows' prefix sums: its windows start. */
void
start_probe(CpuJoin *j, uint64_t n)
{
	j->probe_n = n;
	j->written = 0;
	j->stats.probe_rows += n;
	j->stats.pairs += j->offsets[n];
	j->stats.probe_batches++;
}

/* Counts the pairs of probe rows whose directory entries are in j->slot. */
void
count_slots(CpuJoin *j, uint64_t n)
{
	j->offsets.assign(n + 1, 0);
	j->start.resize(n);
	for (uint64_t i = 0; i < n; i++)
	{
		int64_t		d = j->slot[i];

		/* the entry's rows, read here once: the window walk reads start[] in order */
		j->start[i] = d < 0 ? 0 : j->first[d];
		j->offsets[i + 1] = j->offsets[i] + (d < 0 ? 0 : j->first[d + 1] - j->first[d]);
	}
	j->counts_only = false;
	start_probe(j, n);
}

/*
 * The next window of the current probe's pairs, each pair found from the
 * prefix sums as the device does.
 */
void
write_window(CpuJoin *j, GpuopsJoinPairs *pairs)
{
	uint64_t	n = j->probe_n;
	uint64_t	total = j->offsets[n];
	uint64_t	from = j->written;
	uint64_t	m = std::min(total - from, join_window_pairs_for_budget(budget(j->settings)));

	const uint64_t *offsets = j->offsets.data();
	uint64_t	end = from + m;
	uint64_t	w = 0;

	j->probe_out.resize(m);
	j->build_out.resize(m);
	/*
	 * The same pairs as one owner search per pair (the device's way), but
	 * walking the probe rows: on the host a search per pair is most of a
	 * shared build worker's time.
	 */
	for (uint64_t p = m > 0 ? join_owner(offsets, n, from) : n; p < n && w < m; p++)
	{
		uint64_t	lo = std::max(offsets[p], from);
		uint64_t	hi = std::min(offsets[p + 1], end);

		if (lo >= hi)
			continue;
		if (j->counts_only)
		{
			/* nobody reads the build rows: no random read of sorted_rows */
			for (uint64_t i = lo; i < hi; i++, w++)
			{
				j->probe_out[w] = static_cast<uint32_t>(p);
				j->build_out[w] = 0;
			}
			continue;
		}
		const uint32_t *rows = j->sorted_rows.data() + j->start[p] + (lo - offsets[p]);

		for (uint64_t i = lo; i < hi; i++, w++)
		{
			j->probe_out[w] = static_cast<uint32_t>(p);
			j->build_out[w] = *rows++;
		}
	}
	j->written = end;
	pairs->npairs = m;
	pairs->probe_rows = j->probe_out.data();
	pairs->build_rows = j->build_out.data();
	pairs->more = j->written < total;
}

GpuopsStatus
cpu_join_probe(GpuopsJoin *join, const GpuopsJoinKeys *keys, GpuopsJoinPairs *pairs) noexcept
{
	return guarded([&]() {
		auto	   *j = reinterpret_cast<CpuJoin *>(join);
		auto		t0 = std::chrono::steady_clock::now();
		uint64_t	n = keys->nrows;
		std::vector<int64_t> &slot = j->slot;

		check_keys(j, keys);
		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, j->settings.fault);
		if (n > join_probe_rows_for_budget(budget(j->settings), j->nkeys))
			fail(GPUOPS_ERR_INTERNAL, "probe of %llu rows over the budget's %u",
				 (unsigned long long) n, join_probe_rows_for_budget(budget(j->settings), j->nkeys));
		slot.resize(n);
		for (uint64_t i = 0; i < n; i++)
			slot[i] = join_slot(keys->words, keys->nulls, j->nkeys, i, j->dir.data(), j->dir.size());
		count_slots(j, n);
		j->stats.kernel_ms += ms_since(t0);
		write_window(j, pairs);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_join_next_pairs(GpuopsJoin *join, GpuopsJoinPairs *pairs) noexcept
{
	return guarded([&]() {
		auto	   *j = reinterpret_cast<CpuJoin *>(join);

		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, j->settings.fault);
		j->stats.windows++;
		write_window(j, pairs);
		return GPUOPS_OK;
	});
}

uint64_t
cpu_join_capacity(const GpuopsJoin *join) noexcept
{
	auto	   *j = reinterpret_cast<const CpuJoin *>(join);

	return join_build_rows_for_budget(budget(j->settings), j->nkeys);
}

void
cpu_join_stats(const GpuopsJoin *join, GpuopsJoinStats *stats) noexcept
{
	*stats = reinterpret_cast<const CpuJoin *>(join)->stats;
}

void
cpu_join_end(GpuopsJoin *join) noexcept
{
	delete reinterpret_cast<CpuJoin *>(join);
}

uint32_t
cpu_join_probe_rows(const GpuopsJoin *join) noexcept
{
	auto	   *j = reinterpret_cast<const CpuJoin *>(join);

	return join_probe_rows_for_budget(budget(j->settings), j->nkeys);
}

GpuopsStatus
cpu_join_directory(GpuopsJoin *join, uint64_t *ndir, uint64_t *checksum) noexcept
{
	auto	   *j = reinterpret_cast<CpuJoin *>(join);

	*ndir = j->dir.size();
	*checksum = join_directory_checksum(j->dir.data(), j->dir.size());
	return GPUOPS_OK;
}

/* A CPU lookup only reads the finished directory: nothing of its own. */
struct CpuLookup
{
	const CpuJoin *join;
	GpuopsFault fault;
};

GpuopsStatus
cpu_lookup_begin(GpuopsJoin *join, uint32_t max_rows, GpuopsJoinLookup **out) noexcept
{
	*out = nullptr;
	return guarded([&]() {
		auto	   *j = reinterpret_cast<CpuJoin *>(join);

		*out = reinterpret_cast<GpuopsJoinLookup *>(new CpuLookup{j, j->settings.fault});
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_lookup(GpuopsJoinLookup *lookup, const GpuopsJoinKeys *keys, int64_t *slots,
		   uint32_t *counts) noexcept
{
	return guarded([&]() {
		auto	   *l = reinterpret_cast<CpuLookup *>(lookup);
		const CpuJoin *j = l->join;

		check_keys(j, keys);
		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, l->fault);
		for (uint64_t i = 0; i < keys->nrows; i++)
		{
			int64_t		d = join_slot(keys->words, keys->nulls, j->nkeys, i, j->dir.data(),
									  j->dir.size());

			slots[i] = d;
			counts[i] = d < 0 ? 0 : static_cast<uint32_t>(j->first[d + 1] - j->first[d]);
		}
		return GPUOPS_OK;
	});
}

void
cpu_lookup_end(GpuopsJoinLookup *lookup) noexcept
{
	delete reinterpret_cast<CpuLookup *>(lookup);
}

const GpuopsJoinBackend cpu_join_backend = {
	"cpu",
	cpu_join_begin,
	cpu_join_build,
	cpu_join_build_finish,
	cpu_join_probe,
	cpu_join_next_pairs,
	cpu_join_capacity,
	cpu_join_probe_rows,
	cpu_join_stats,
	cpu_join_end,
	cpu_join_directory,
	cpu_lookup_begin,
	cpu_lookup,
	cpu_lookup_end,
};

}								/* namespace */
}								/* namespace gpuops */

extern "C" const GpuopsJoinBackend *
gpuops_cpu_join_backend(void) noexcept
{
	return &gpuops::cpu_join_backend;
}

extern "C" GpuopsStatus
gpuops_cpu_join_probe_slots(GpuopsJoin *join, const int64_t *slots, uint64_t nrows,
							GpuopsJoinPairs *pairs) noexcept
{
	return gpuops::guarded([&]() {
		auto	   *j = reinterpret_cast<gpuops::CpuJoin *>(join);

		for (uint64_t i = 0; i < nrows; i++)
			if (slots[i] >= (int64_t) j->dir.size())
				gpuops::fail(GPUOPS_ERR_INTERNAL, "directory entry %lld of %zu",
							 (long long) slots[i], j->dir.size());
		j->slot.assign(slots, slots + nrows);
		gpuops::count_slots(j, nrows);
		gpuops::write_window(j, pairs);
		return GPUOPS_OK;
	});
}

extern "C" GpuopsStatus
gpuops_cpu_join_probe_counts(GpuopsJoin *join, const uint32_t *counts, uint64_t nrows,
							 GpuopsJoinPairs *pairs) noexcept
{
	return gpuops::guarded([&]() {
		auto	   *j = reinterpret_cast<gpuops::CpuJoin *>(join);

		j->offsets.assign(nrows + 1, 0);
		for (uint64_t i = 0; i < nrows; i++)
			j->offsets[i + 1] = j->offsets[i] + counts[i];
		j->counts_only = true;
		gpuops::start_probe(j, nrows);
		gpuops::write_window(j, pairs);
		return GPUOPS_OK;
	});
}
