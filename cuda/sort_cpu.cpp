/*
 * sort_cpu.cpp
 *    The CPU twin of the GPU key-pointer sort.
 *
 * Same protocol and same algorithm as sort_cuda.cu: keys are normalized with
 * the shared transforms (key_normalize.hpp), the bits that actually differ are
 * found with an OR of (key XOR first key), and an LSD radix sort with 8-bit
 * digits orders (key, row number) pairs, stably.  It serves
 * gpuops.device = cpu (so the whole executor path is tested where there is no
 * GPU) and the fallback when the device fails mid-query.
 */
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "device_common.hpp"
#include "key_normalize.hpp"

namespace gpuops {
namespace {

using Clock = std::chrono::steady_clock;

double
ms_since(Clock::time_point t0)
{
	return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct CpuSort
{
	GpuopsSettings settings;
	GpuopsSortSpec spec;
	int			width = 8;
	std::vector<unsigned char> stage;
	uint32_t	stage_rows = 0;
	std::vector<uint32_t> keys32;
	std::vector<uint64_t> keys64;
	std::vector<uint32_t> order;
	bool		sorted = false;
	GpuopsStats stats = {};
};

/* Number of low key bits that differ between any two keys. */
template <class K>
unsigned
used_bits(const std::vector<K> &keys)
{
	K			diff = 0;

	if (keys.empty())
		return 0;
	for (K k : keys)
		diff |= (k ^ keys[0]);
	unsigned	bits = 0;

	while (diff)
	{
		bits++;
		diff >>= 1;
	}
	return bits;
}

/* Stable LSD radix sort of (key, row) pairs on bits [0, end_bit). */
template <class K>
void
radix_sort_pairs(std::vector<K> &keys, std::vector<uint32_t> &rows,
				 unsigned end_bit)
{
	size_t		n = keys.size();
	std::vector<K> keys_alt(n);
	std::vector<uint32_t> rows_alt(n);

	for (unsigned shift = 0; shift < end_bit; shift += 8)
	{
		size_t		count[256] = {0};

		for (size_t i = 0; i < n; i++)
			count[(keys[i] >> shift) & 0xff]++;
		bool		trivial = false;

		for (size_t c : count)
			if (c == n)
				trivial = true; /* every key has the same digit here */
		if (trivial)
			continue;
		size_t		pos = 0;

		for (size_t &c : count)
		{
			size_t		here = c;

			c = pos;
			pos += here;
		}
		for (size_t i = 0; i < n; i++)
		{
			size_t		dst = count[(keys[i] >> shift) & 0xff]++;

			keys_alt[dst] = keys[i];
			rows_alt[dst] = rows[i];
		}
		keys.swap(keys_alt);
		rows.swap(rows_alt);
	}
}

GpuopsStatus
cpu_probe(GpuopsDeviceInfo *info) noexcept
{
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "host CPU");
	snprintf(info->reason, sizeof(info->reason), "CPU backend");
	return GPUOPS_OK;
}

GpuopsStatus
cpu_sort_begin(const GpuopsSettings *settings, const GpuopsSortSpec *spec,
			   GpuopsSort **out) noexcept
{
	*out = nullptr;
	return guarded([&]() {
		maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
		auto		s = std::make_unique<CpuSort>();

		s->settings = *settings;
		s->spec = *spec;
		s->width = spec->key_type == GPUOPS_KEY_INT4 ? 4 : 8;
		s->stage_rows = static_cast<uint32_t>(settings->batch_bytes / s->width);
		if (s->stage_rows == 0)
			fail(GPUOPS_ERR_INTERNAL, "batch size too small");
		s->stage.resize(static_cast<size_t>(s->stage_rows) * s->width);
		*out = reinterpret_cast<GpuopsSort *>(s.release());
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_sort_stage(GpuopsSort *sort, GpuopsStageBuffer *buf) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	buf->values = s->stage.data();
	buf->capacity_rows = s->stage_rows;
	return GPUOPS_OK;
}

GpuopsStatus
cpu_sort_submit(GpuopsSort *sort, uint32_t nrows) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	return guarded([&]() {
		if (nrows > s->stage_rows)
			fail(GPUOPS_ERR_INTERNAL, "batch of %u rows exceeds its buffer", nrows);
		if (s->stats.batches == 0)
			maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, s->settings.fault);
		if (s->stats.rows + nrows > UINT32_MAX)
			fail(GPUOPS_ERR_UNSUPPORTED, "more than 2^32-1 rows in one sort");
		auto		t0 = Clock::now();
		bool		desc = s->spec.descending != 0;
		const unsigned char *p = s->stage.data();

		switch (s->spec.key_type)
		{
			case GPUOPS_KEY_INT4:
				for (uint32_t i = 0; i < nrows; i++)
				{
					int32_t		v;

					memcpy(&v, p + 4 * i, 4);
					s->keys32.push_back(normalize_int4(v, desc));
				}
				break;
			case GPUOPS_KEY_INT8:
				for (uint32_t i = 0; i < nrows; i++)
				{
					int64_t		v;

					memcpy(&v, p + 8 * i, 8);
					s->keys64.push_back(normalize_int8(v, desc));
				}
				break;
			case GPUOPS_KEY_FLOAT8:
				for (uint32_t i = 0; i < nrows; i++)
				{
					uint64_t	v;

					memcpy(&v, p + 8 * i, 8);
					s->keys64.push_back(normalize_float8_bits(v, desc));
				}
				break;
		}
		s->stats.rows += nrows;
		s->stats.batches++;
		s->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

template <class K>
void
sort_keys(CpuSort *s, std::vector<K> &keys)
{
	s->order.resize(keys.size());
	for (size_t i = 0; i < keys.size(); i++)
		s->order[i] = static_cast<uint32_t>(i);
	s->stats.sort_bits = used_bits(keys);
	radix_sort_pairs(keys, s->order, s->stats.sort_bits);
	std::vector<K>().swap(keys);	/* keys are not needed any more */
}

GpuopsStatus
cpu_sort_finish(GpuopsSort *sort) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	return guarded([&]() {
		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, s->settings.fault);
		auto		t0 = Clock::now();

		if (s->spec.key_type == GPUOPS_KEY_INT4)
			sort_keys(s, s->keys32);
		else
			sort_keys(s, s->keys64);
		s->sorted = true;
		s->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_sort_poll(GpuopsSort *sort) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	if (!s->sorted)
	{
		set_last_error("sort polled before it was finished");
		return GPUOPS_ERR_INTERNAL;
	}
	return GPUOPS_OK;
}

GpuopsStatus
cpu_sort_result(GpuopsSort *sort, uint32_t *order, uint64_t nrows) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	if (!s->sorted || nrows != s->order.size())
	{
		set_last_error("sort result asked for %llu rows, sort holds %zu",
					   (unsigned long long) nrows, s->order.size());
		return GPUOPS_ERR_INTERNAL;
	}
	if (nrows > 0)
		memcpy(order, s->order.data(), nrows * sizeof(uint32_t));
	return GPUOPS_OK;
}

void
cpu_sort_stats(const GpuopsSort *sort, GpuopsStats *stats) noexcept
{
	*stats = reinterpret_cast<const CpuSort *>(sort)->stats;
}

void
cpu_sort_end(GpuopsSort *sort) noexcept
{
	delete reinterpret_cast<CpuSort *>(sort);
}

const GpuopsBackend cpu_backend = {
	"cpu",
	cpu_probe,
	cpu_sort_begin,
	cpu_sort_stage,
	cpu_sort_submit,
	cpu_sort_finish,
	cpu_sort_poll,
	cpu_sort_result,
	cpu_sort_stats,
	cpu_sort_end,
};

}								/* namespace */
}								/* namespace gpuops */

extern "C" const GpuopsBackend *
gpuops_cpu_backend(void) noexcept
{
	return &gpuops::cpu_backend;
}
