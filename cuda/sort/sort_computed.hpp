/*
 * sort_computed.hpp
 *    Sort keys the device computes (GpuopsSortSpec.programs): where their
 *    values sit in a batch, and the host copy of them both backends keep
 *    for sort_values.
 *
 * A batch's computed values are laid out per computed key: its values at
 * the kind's width, then its null bitmap, each segment 16-byte aligned.
 * The program columns travel in the staging buffer after the keys: every
 * column's words, then every column's null bytes.
 */
#ifndef GPUOPS_SORT_COMPUTED_HPP
#define GPUOPS_SORT_COMPUTED_HPP

#include <cstring>
#include <vector>

#include "agg_eval.hpp"

namespace gpuops {

inline size_t
align16(size_t n)
{
	return (n + 15) & ~size_t(15);
}

inline bool
sort_has_programs(const GpuopsSortSpec &spec)
{
	for (int k = 0; k < spec.nkeys; k++)
		if (spec.programs[k])
			return true;
	return false;
}

/* Offsets of the computed keys' segments in a batch of `rows`; the bytes. */
inline size_t
computed_layout(const GpuopsSortSpec &spec, uint32_t rows, size_t *values_off, size_t *nulls_off)
{
	size_t off = 0;

	for (int k = 0; k < spec.nkeys; k++)
	{
		values_off[k] = nulls_off[k] = 0;
		if (!spec.programs[k])
			continue;
		values_off[k] = off;
		off += align16(static_cast<size_t>(rows) * gpuops_key_raw_width(spec.keys[k].kind));
		nulls_off[k] = off;
		off += align16((static_cast<size_t>(rows) + 7) / 8);
	}
	return off;
}

/* The spec's programs must fit its program columns. */
inline void
check_programs(const GpuopsSortSpec &spec)
{
	if (spec.program_ncols < 0 || spec.program_ncols > GPUOPS_EXPR_MAX_COLS)
		fail(GPUOPS_ERR_INTERNAL, "bad number of program columns: %d", spec.program_ncols);
	for (int k = 0; k < spec.nkeys; k++)
	{
		const char *bad = spec.programs[k]
			? expr_validate(spec.programs[k], spec.program_ncols > 0 ? spec.program_ncols : 1, 0)
			: nullptr;

		if (bad)
			fail(GPUOPS_ERR_INTERNAL, "bad device program for sort key %d: %s", k + 1, bad);
		if (spec.programs[k] && spec.keys[k].kind != GPUOPS_KEY_INT2 &&
			spec.keys[k].kind != GPUOPS_KEY_INT4 && spec.keys[k].kind != GPUOPS_KEY_INT8 &&
			spec.keys[k].kind != GPUOPS_KEY_FLOAT4 && spec.keys[k].kind != GPUOPS_KEY_FLOAT8)
			fail(GPUOPS_ERR_INTERNAL, "sort key %d: no computed values of its kind", k + 1);
	}
}

/* Bytes per row the program columns take in a staging buffer. */
inline size_t
input_row_bytes(const GpuopsSortSpec &spec)
{
	return static_cast<size_t>(spec.program_ncols) * (sizeof(uint64_t) + 1);
}

/* Where program column c's words and null bytes start, for `rows` rows. */
inline size_t
input_words_off(uint32_t rows, int c)
{
	return static_cast<size_t>(rows) * sizeof(uint64_t) * c;
}

inline size_t
input_nulls_off(const GpuopsSortSpec &spec, uint32_t rows, int c)
{
	return align16(static_cast<size_t>(rows) * sizeof(uint64_t) * spec.program_ncols) +
		static_cast<size_t>(rows) * c;
}

inline size_t
input_bytes(const GpuopsSortSpec &spec, uint32_t rows)
{
	return spec.program_ncols > 0 ? align16(input_nulls_off(spec, rows, spec.program_ncols)) : 0;
}

/* The program columns of `rows` rows (a staging buffer's capacity) at `base`. */
inline ColumnsView
input_view(const GpuopsSortSpec &spec, const uint8_t *base, uint32_t rows)
{
	return ColumnsView{reinterpret_cast<const uint64_t *>(base),
					   base + input_nulls_off(spec, rows, 0), rows};
}

/* One submitted batch's computed values, on the host. */
struct ComputedChunk
{
	uint64_t first = 0; /* its first row, in submission order */
	uint32_t rows = 0;
	std::vector<uint8_t> bytes; /* computed_layout(rows) */
};

/* Every batch's computed values, and the first row a program stopped at. */
struct ComputedValues
{
	std::vector<ComputedChunk> chunks;
	uint64_t first_stop = GPUOPS_SORT_NO_RECHECK;

	/*
	 * Batches follow each other; bitmaps are copied a byte at a time, so
	 * every batch but the last starts and ends on a multiple of 8 rows.
	 */
	void check_next(uint64_t first) const
	{
		if (!chunks.empty() && chunks.back().rows % 8 != 0)
			fail(GPUOPS_ERR_INTERNAL, "computed sort keys: a partial batch before row %llu",
				 static_cast<unsigned long long>(first));
	}

	void copy_out(const GpuopsSortSpec &spec, int key, uint64_t first, uint32_t n, void *values,
				  uint8_t *nulls) const
	{
		size_t voff[GPUOPS_MAX_SORT_KEYS], noff[GPUOPS_MAX_SORT_KEYS];

		if (key < 0 || key >= spec.nkeys || !spec.programs[key] || first % 8 != 0)
			fail(GPUOPS_ERR_INTERNAL, "sort values asked for a key the device did not compute");
		uint32_t w = gpuops_key_raw_width(spec.keys[key].kind);
		uint64_t end = first + n;
		uint64_t copied = 0;

		for (const ComputedChunk &c : chunks)
		{
			uint64_t lo = c.first > first ? c.first : first;
			uint64_t hi = c.first + c.rows < end ? c.first + c.rows : end;

			if (lo >= hi)
				continue;
			computed_layout(spec, c.rows, voff, noff);
			uint64_t at = lo - c.first; /* multiples of 8: chunks and `first` are */
			uint64_t to = lo - first;
			uint64_t cnt = hi - lo;
			const uint8_t *bm = c.bytes.data() + noff[key];

			memcpy(static_cast<uint8_t *>(values) + to * w, c.bytes.data() + voff[key] + at * w,
				   cnt * w);
			memcpy(nulls + to / 8, bm + at / 8, cnt / 8);
			for (uint64_t i = cnt & ~uint64_t(7); i < cnt; i++)
			{
				uint64_t d = to + i;
				uint8_t bit = static_cast<uint8_t>(1 << (d & 7));
				bool isnull = (bm[(at + i) / 8] >> ((at + i) & 7)) & 1;

				nulls[d / 8] = static_cast<uint8_t>(isnull ? nulls[d / 8] | bit
														   : nulls[d / 8] & ~bit);
			}
			copied += cnt;
		}
		if (copied != n)
			fail(GPUOPS_ERR_INTERNAL, "sort values asked for rows the sort does not hold");
	}
};

} /* namespace gpuops */

#endif
