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

#include "backend_tables.hpp"
#include "device_common.hpp"
#include "host_radix.hpp"
#include "join_hash.hpp"
#include "pair_window.hpp"

namespace gpuops {
namespace {

struct CpuLookup;

struct CpuJoin
{
	GpuopsSettings settings;
	int nkeys = 0;
	std::vector<uint64_t> build;	   /* per build row its hash; sorted once finished */
	std::vector<uint32_t> sorted_rows; /* build rows, in the order of build */
	uint64_t build_rows = 0;
	std::vector<uint64_t> dir;	 /* distinct hashes, sorted */
	std::vector<uint64_t> first; /* their first index in build; [ndir] = build size */
	/* the current probe: candidates counted, pairs written window by window */
	std::vector<int64_t> slot;	   /* per probe row: directory entry or -1 */
	std::vector<uint64_t> offsets; /* per probe row: its first pair */
	std::vector<uint64_t> start;   /* per probe row: its entry's first index in build */
	bool counts_only = false;	   /* the current probe's build rows are not read */
	uint64_t probe_n = 0;
	PairWindow window; /* pairs returned so far, the last window */
	GpuopsJoinStats stats = {};

	/* the entry points (backend_tables.hpp) */
	using Lookup = CpuLookup;
	CpuJoin(const GpuopsSettings *settings, int nkeys);
	GpuopsStatus join_build(const GpuopsJoinKeys *keys);
	GpuopsStatus join_build_finish();
	GpuopsStatus join_probe(const GpuopsJoinKeys *keys, GpuopsJoinPairs *pairs);
	GpuopsStatus join_next_pairs(GpuopsJoinPairs *pairs);
	uint64_t join_capacity() const;
	uint32_t join_probe_rows() const;
	void join_stats(GpuopsJoinStats *out) const;
	GpuopsStatus join_directory(uint64_t *ndir, uint64_t *checksum);
	/* gpuops_cpu_join_probe_slots and gpuops_cpu_join_probe_counts */
	GpuopsStatus probe_slots(const int64_t *slots, uint64_t nrows, GpuopsJoinPairs *pairs);
	GpuopsStatus probe_counts(const uint32_t *counts, uint64_t nrows, GpuopsJoinPairs *pairs);
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

CpuJoin::CpuJoin(const GpuopsSettings *settings, int nkeys)
{
	/* the same injected faults as the CUDA backend, where it raises them */
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	if (nkeys < 1 || nkeys > GPUOPS_MAX_JOIN_KEYS)
		fail(GPUOPS_ERR_INTERNAL, "bad number of join keys: %d", nkeys);
	this->settings = *settings;
	this->nkeys = nkeys;
	window.max_pairs = join_window_pairs_for_budget(budget(*settings));
}

GpuopsStatus
CpuJoin::join_build(const GpuopsJoinKeys *keys)
{
	auto t0 = std::chrono::steady_clock::now();

	check_keys(this, keys);
	if (build_rows + keys->nrows > UINT32_MAX)
		fail(GPUOPS_ERR_UNSUPPORTED, "build side over %u rows", UINT32_MAX);
	for (uint64_t i = 0; i < keys->nrows; i++)
		if (!join_key_null(keys->nulls, nkeys, i))
		{
			build.push_back(join_hash(keys->words, nkeys, i));
			sorted_rows.push_back(static_cast<uint32_t>(build_rows + i));
		}
	build_rows += keys->nrows;
	stats.build_rows = build_rows;
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CpuJoin::join_build_finish()
{
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings.fault);
	/* the device's limit, kept here too so that tests without a GPU catch a caller over it */
	uint64_t capacity = join_build_rows_for_budget(budget(settings), nkeys);

	if (capacity > 0 && build.size() > capacity)
		fail(GPUOPS_ERR_INTERNAL, "build of %llu rows over the capacity of %llu",
			 (unsigned long long) build.size(), (unsigned long long) capacity);
	/* stable: equal hashes keep build order, as the device's radix sort does */
	radix_sort_pairs(build, sorted_rows, 64);
	for (uint64_t i = 0; i < build.size(); i++)
	{
		if (i == 0 || build[i] != build[i - 1])
		{
			dir.push_back(build[i]);
			first.push_back(i);
		}
	}
	first.push_back(build.size());
	std::vector<uint64_t>().swap(build); /* the directory holds what probes need */
	stats.directory = dir.size();
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

/* j->offsets holds the probe's n rows' prefix sums: its windows start. */
void
start_probe(CpuJoin *j, uint64_t n)
{
	j->probe_n = n;
	j->window.start(j->offsets[n]);
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
		int64_t d = j->slot[i];

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
	uint64_t n = j->probe_n;
	const uint64_t *offsets = j->offsets.data();

	j->window.write_host(
		pairs, [&](uint64_t from, uint64_t m, uint32_t *probe_out, uint32_t *build_out) {
			uint64_t end = from + m;
			uint64_t w = 0;

			/*
		 * The same pairs as one owner search per pair (the device's way), but
		 * walking the probe rows: on the host a search per pair is most of a
		 * shared build worker's time.
		 */
			for (uint64_t p = m > 0 ? join_owner(offsets, n, from) : n; p < n && w < m; p++)
			{
				uint64_t lo = std::max(offsets[p], from);
				uint64_t hi = std::min(offsets[p + 1], end);

				if (lo >= hi)
					continue;
				if (j->counts_only)
				{
					/* nobody reads the build rows: no random read of sorted_rows */
					for (uint64_t i = lo; i < hi; i++, w++)
					{
						probe_out[w] = static_cast<uint32_t>(p);
						build_out[w] = 0;
					}
					continue;
				}
				const uint32_t *rows = j->sorted_rows.data() + j->start[p] + (lo - offsets[p]);

				for (uint64_t i = lo; i < hi; i++, w++)
				{
					probe_out[w] = static_cast<uint32_t>(p);
					build_out[w] = *rows++;
				}
			}
		});
}

GpuopsStatus
CpuJoin::join_probe(const GpuopsJoinKeys *keys, GpuopsJoinPairs *pairs)
{
	auto t0 = std::chrono::steady_clock::now();
	uint64_t n = keys->nrows;

	check_keys(this, keys);
	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	if (n > join_probe_rows_for_budget(budget(settings), nkeys))
		fail(GPUOPS_ERR_INTERNAL, "probe of %llu rows over the budget's %u", (unsigned long long) n,
			 join_probe_rows_for_budget(budget(settings), nkeys));
	slot.resize(n);
	for (uint64_t i = 0; i < n; i++)
		slot[i] = join_slot(keys->words, keys->nulls, nkeys, i, dir.data(), dir.size());
	count_slots(this, n);
	stats.kernel_ms += ms_since(t0);
	write_window(this, pairs);
	return GPUOPS_OK;
}

GpuopsStatus
CpuJoin::join_next_pairs(GpuopsJoinPairs *pairs)
{
	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	stats.windows++;
	write_window(this, pairs);
	return GPUOPS_OK;
}

uint64_t
CpuJoin::join_capacity() const
{
	return join_build_rows_for_budget(budget(settings), nkeys);
}

void
CpuJoin::join_stats(GpuopsJoinStats *out) const
{
	*out = stats;
	/* the pairs handed out (gpuops_device.h); a shared build's lookups are not counted here */
	out->bytes_from_device = window.published_bytes;
}

uint32_t
CpuJoin::join_probe_rows() const
{
	return join_probe_rows_for_budget(budget(settings), nkeys);
}

GpuopsStatus
CpuJoin::join_directory(uint64_t *ndir, uint64_t *checksum)
{
	*ndir = dir.size();
	*checksum = join_directory_checksum(dir.data(), dir.size());
	return GPUOPS_OK;
}

/* A probe whose rows' directory entries a shared build's lookup found. */
GpuopsStatus
CpuJoin::probe_slots(const int64_t *slots, uint64_t nrows, GpuopsJoinPairs *pairs)
{
	for (uint64_t i = 0; i < nrows; i++)
		if (slots[i] >= (int64_t) dir.size())
			fail(GPUOPS_ERR_INTERNAL, "directory entry %lld of %zu", (long long) slots[i],
				 dir.size());
	slot.assign(slots, slots + nrows);
	count_slots(this, nrows);
	write_window(this, pairs);
	return GPUOPS_OK;
}

/* A probe whose rows' match counts a shared build's lookup found, its build rows unread. */
GpuopsStatus
CpuJoin::probe_counts(const uint32_t *counts, uint64_t nrows, GpuopsJoinPairs *pairs)
{
	offsets.assign(nrows + 1, 0);
	for (uint64_t i = 0; i < nrows; i++)
		offsets[i + 1] = offsets[i] + counts[i];
	counts_only = true;
	start_probe(this, nrows);
	write_window(this, pairs);
	return GPUOPS_OK;
}

/* A CPU lookup only reads the finished directory: nothing of its own. */
struct CpuLookup
{
	const CpuJoin *join;
	GpuopsFault fault;

	/* the entry points (backend_tables.hpp) */
	CpuLookup(CpuJoin *j, uint32_t /* max_rows */) : join(j), fault(j->settings.fault) {}
	GpuopsStatus lookup(const GpuopsJoinKeys *keys, int64_t *slots, uint32_t *counts);
};

GpuopsStatus
CpuLookup::lookup(const GpuopsJoinKeys *keys, int64_t *slots, uint32_t *counts)
{
	const CpuJoin *j = join;

	check_keys(j, keys);
	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, fault);
	for (uint64_t i = 0; i < keys->nrows; i++)
	{
		int64_t d = join_slot(keys->words, keys->nulls, j->nkeys, i, j->dir.data(), j->dir.size());

		slots[i] = d;
		counts[i] = d < 0 ? 0 : static_cast<uint32_t>(j->first[d + 1] - j->first[d]);
	}
	return GPUOPS_OK;
}

constexpr GpuopsJoinBackend cpu_join_backend = shell::make_join_backend<CpuJoin>("cpu");

} /* namespace */
} /* namespace gpuops */

extern "C" const GpuopsJoinBackend *
gpuops_cpu_join_backend(void) noexcept
{
	return &gpuops::cpu_join_backend;
}

extern "C" GpuopsStatus
gpuops_cpu_join_probe_slots(GpuopsJoin *join, const int64_t *slots, uint64_t nrows,
							GpuopsJoinPairs *pairs) noexcept
{
	return gpuops::shell::entry<GpuopsJoin, &gpuops::CpuJoin::probe_slots>(join, slots, nrows,
																		   pairs);
}

extern "C" GpuopsStatus
gpuops_cpu_join_probe_counts(GpuopsJoin *join, const uint32_t *counts, uint64_t nrows,
							 GpuopsJoinPairs *pairs) noexcept
{
	return gpuops::shell::entry<GpuopsJoin, &gpuops::CpuJoin::probe_counts>(join, counts, nrows,
																			pairs);
}
