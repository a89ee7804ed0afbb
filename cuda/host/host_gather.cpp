/*
 * host_gather.cpp
 *    Multi-threaded gather of result columns into output order.
 *
 * After a key-pointer sort the host holds the rows in arrival order and the
 * device has returned the output order.  Emitting rows straight from that
 * order costs a cache and TLB miss per column per row (measured: ~6x slower
 * than sequential emission), so the columns are gathered into output order
 * first.  Each gather is independent random reads and sequential writes;
 * several threads keep more misses in flight.  Variable-length values are
 * then copied into output order too (pack): emission reads them one per
 * row, and at random they cost it a miss each (measured at 50M rows: 2.9 s
 * of emission packed against 4.0 s, for 0.45 s more packing on 16 threads;
 * 3.6 s against 8.6 s when sorting by the text).  The threads touch only the
 * arrays handed in: no PostgreSQL state, no allocation through PostgreSQL.
 */
#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include "device_common.hpp"
#include "key_normalize.hpp"
#include "host_threads.hpp"

namespace gpuops {
namespace {

/* Below this many elements a helper thread costs more than it saves. */
constexpr uint64_t kMinPerThread = 1 << 18;

unsigned
thread_count(uint64_t work)
{
	return host_thread_count(work, kMinPerThread);
}

/*
 * How many elements ahead the random reads are prefetched: enough to keep
 * a core's line-fill buffers busy past the reorder window, which a loop
 * with a call in it (the value sizes and copies) otherwise does not.
 * Measured at 5M rows on 2 cores: 835-1003 ms of reorder -> 445-727 ms; on
 * the H100 machine's 16 threads no change showed (787-972 ms either way).
 */
constexpr uint64_t kPrefetchAhead = 16;

template <typename T>
void
gather_range(const GpuopsGatherColumn &col, const uint32_t *order, uint64_t lo, uint64_t hi,
			 unsigned shift)
{
	const uint32_t mask = (1u << shift) - 1;
	T *dst = reinterpret_cast<T *>(col.out);

	for (uint64_t i = lo; i < hi; i++)
	{
		uint32_t r = order[i];

		if (i + kPrefetchAhead < hi)
		{
			uint32_t a = order[i + kPrefetchAhead];

			__builtin_prefetch(reinterpret_cast<const T *>(col.batch_values[a >> shift]) +
							   (a & mask));
		}
		dst[i] = reinterpret_cast<const T *>(col.batch_values[r >> shift])[r & mask];
	}
}

void
gather_any(const GpuopsGatherColumn &col, const uint32_t *order, uint64_t lo, uint64_t hi,
		   unsigned shift)
{
	switch (col.width)
	{
		case 1:
			return gather_range<uint8_t>(col, order, lo, hi, shift);
		case 2:
			return gather_range<uint16_t>(col, order, lo, hi, shift);
		case 4:
			return gather_range<uint32_t>(col, order, lo, hi, shift);
		case 8:
			return gather_range<uint64_t>(col, order, lo, hi, shift);
		default:
			{
				const uint32_t mask = (1u << shift) - 1;

				for (uint64_t i = lo; i < hi; i++)
				{
					uint32_t r = order[i];

					memcpy(col.out + i * col.width,
						   col.batch_values[r >> shift] + static_cast<size_t>(r & mask) * col.width,
						   col.width);
				}
			}
	}
}

inline bool
is_null(const uint8_t *nulls, uint64_t i)
{
	return nulls != nullptr && (nulls[i >> 3] & (1u << (i & 7))) != 0;
}

inline uint64_t
align8(uint64_t x)
{
	return (x + 7) & ~static_cast<uint64_t>(7);
}

/* Row range r of GPUOPS_PACK_RANGES equal ones. */
inline uint64_t
range_start(uint64_t n, unsigned r)
{
	return n / GPUOPS_PACK_RANGES * r + std::min<uint64_t>(r, n % GPUOPS_PACK_RANGES);
}

} /* namespace */
} /* namespace gpuops */

extern "C" GpuopsStatus
gpuops_host_gather(const GpuopsGatherColumn *cols, int ncols, const uint32_t *order, uint64_t n,
				   unsigned batch_shift) noexcept
{
	using namespace gpuops;

	return guarded([&]() {
		uint64_t work = n * static_cast<uint64_t>(ncols > 0 ? ncols : 1);
		unsigned nthreads = thread_count(work);
		/* work items: (column, row range) slices of about equal size */
		uint64_t slice = std::max<uint64_t>(kMinPerThread, (n + nthreads - 1) / nthreads);
		std::vector<std::pair<int, uint64_t>> items;

		for (int c = 0; c < ncols; c++)
			for (uint64_t lo = 0; lo < n; lo += slice)
				items.emplace_back(c, lo);
		run_threads(nthreads, [&](size_t first, size_t step) {
			for (size_t k = first; k < items.size(); k += step)
			{
				uint64_t lo = items[k].second;

				gather_any(cols[items[k].first], order, lo, std::min(n, lo + slice), batch_shift);
			}
		});
		return GPUOPS_OK;
	});
}

namespace gpuops {
namespace {

template <typename T, typename Fn>
void
merge_words_range(const char *const *batch_values, uint64_t lo, uint64_t hi, unsigned shift,
				  uint64_t *out, const Fn &word)
{
	const uint64_t mask = (uint64_t(1) << shift) - 1;

	/* batch by batch: a contiguous run of each, which the compiler vectorizes */
	for (uint64_t i = lo; i < hi;)
	{
		const T *src = reinterpret_cast<const T *>(batch_values[i >> shift]);
		uint64_t end = std::min(hi, (i | mask) + 1);

		for (; i < end; i++)
			out[i] = word(src[i & mask]);
	}
}

void
merge_words_any(const char *const *bv, uint64_t lo, uint64_t hi, unsigned shift,
				GpuopsMergeWordKind kind, uint64_t *out)
{
	const uint64_t sign = 0x8000000000000000ull;

	switch (kind)
	{
		case GPUOPS_MW_INT16:
			return merge_words_range<int16_t>(bv, lo, hi, shift, out, [&](int16_t v) {
				return static_cast<uint64_t>(static_cast<int64_t>(v)) ^ sign;
			});
		case GPUOPS_MW_INT32:
			return merge_words_range<int32_t>(bv, lo, hi, shift, out, [&](int32_t v) {
				return static_cast<uint64_t>(static_cast<int64_t>(v)) ^ sign;
			});
		case GPUOPS_MW_INT64:
			return merge_words_range<int64_t>(bv, lo, hi, shift, out, [&](int64_t v) {
				return static_cast<uint64_t>(v) ^ sign;
			});
		case GPUOPS_MW_BOOL:
			return merge_words_range<uint8_t>(bv, lo, hi, shift, out, [&](uint8_t v) {
				return static_cast<uint64_t>(v != 0) ^ sign;
			});
		case GPUOPS_MW_FLOAT4:
			return merge_words_range<float>(bv, lo, hi, shift, out, [&](float v) {
				double d = v;
				uint64_t bits;

				memcpy(&bits, &d, 8);
				return float8_key(bits);
			});
		case GPUOPS_MW_FLOAT8:
			return merge_words_range<uint64_t>(bv, lo, hi, shift, out,
											   [&](uint64_t bits) { return float8_key(bits); });
	}
}

} /* namespace */
} /* namespace gpuops */

extern "C" GpuopsStatus
gpuops_host_merge_words(const char *const *batch_values, uint64_t n, unsigned batch_shift,
						GpuopsMergeWordKind kind, uint64_t *out) noexcept
{
	using namespace gpuops;

	return guarded([&]() {
		unsigned nthreads = thread_count(n);
		uint64_t per = (n + nthreads - 1) / nthreads;

		run_threads(nthreads, [&](size_t first, size_t step) {
			for (size_t t = first; t < nthreads; t += step)
				merge_words_any(batch_values, std::min(n, t * per), std::min(n, (t + 1) * per),
								batch_shift, kind, out);
		});
		return GPUOPS_OK;
	});
}

extern "C" GpuopsStatus
gpuops_host_value_bytes(char *const *ptrs, const uint8_t *nulls, uint64_t n,
						GpuopsValueSize value_size, GpuopsValuePack *pack) noexcept
{
	using namespace gpuops;

	return guarded([&]() {
		run_threads(thread_count(n), [&](size_t first, size_t step) {
			for (size_t r = first; r < GPUOPS_PACK_RANGES; r += step)
			{
				uint64_t bytes = 0;

				uint64_t end = range_start(n, r + 1);

				for (uint64_t i = range_start(n, r); i < end; i++)
				{
					if (i + kPrefetchAhead < end)
						__builtin_prefetch(ptrs[i + kPrefetchAhead]);
					if (!is_null(nulls, i))
						bytes += align8(value_size(ptrs[i]));
				}
				pack->range_bytes[r] = bytes;
			}
		});
		pack->bytes = 0;
		for (unsigned r = 0; r < GPUOPS_PACK_RANGES; r++)
			pack->bytes += pack->range_bytes[r];
		return GPUOPS_OK;
	});
}

extern "C" GpuopsStatus
gpuops_host_pack_values(char **ptrs, const uint8_t *nulls, uint64_t n, GpuopsValueSize value_size,
						const GpuopsValuePack *pack, char *arena) noexcept
{
	using namespace gpuops;

	return guarded([&]() {
		uint64_t offsets[GPUOPS_PACK_RANGES];
		uint64_t at = 0;

		for (unsigned r = 0; r < GPUOPS_PACK_RANGES; r++)
		{
			offsets[r] = at;
			at += pack->range_bytes[r];
		}
		run_threads(thread_count(n), [&](size_t first, size_t step) {
			for (size_t r = first; r < GPUOPS_PACK_RANGES; r += step)
			{
				char *dst = arena + offsets[r];
				uint64_t end = range_start(n, r + 1);

				for (uint64_t i = range_start(n, r); i < end; i++)
				{
					size_t len;

					if (i + kPrefetchAhead < end)
						__builtin_prefetch(ptrs[i + kPrefetchAhead]);
					if (is_null(nulls, i))
						continue;
					len = value_size(ptrs[i]);
					memcpy(dst, ptrs[i], len);
					ptrs[i] = dst;
					dst += align8(len);
				}
			}
		});
		return GPUOPS_OK;
	});
}
