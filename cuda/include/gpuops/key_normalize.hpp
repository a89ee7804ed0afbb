/*
 * key_normalize.hpp
 *    Order-preserving transforms from SQL values to unsigned 64-bit key
 *    words, shared by the CUDA kernels and the CPU twin so both sort
 *    identically, and the staging-buffer layout both backends use.
 *
 * Each key column becomes a null word followed by one or two value words;
 * comparing the words of two rows as unsigned integers, most significant
 * first, gives PostgreSQL's order:
 *   - null word: 0 for the rows that come first (NULLs with NULLS FIRST,
 *     values with NULLS LAST), 1 for the others; a NULL's value words are 0.
 *   - signed integers flip the sign bit.
 *   - floats map -0 to +0 and every NaN to one NaN that sorts above
 *     +Infinity (PostgreSQL treats all NaNs as equal and larger than any
 *     number), then flip all bits of negatives and the sign bit of positives.
 *   - uuid: its 16 bytes, big-endian, as uuid_cmp's memcmp does.
 *   - interval: the 128-bit span PostgreSQL compares, time + (month * 30 +
 *     day) * 86400000000 microseconds, sign-flipped.
 *   - a 16-byte prefix (C-collation text): its bytes big-endian, zero padded;
 *     longer values tie on the prefix and are resolved by the caller.
 *   - numeric: PostgreSQL's abbreviated key (numeric_abbrev_convert), whose
 *     signed order is reversed (NaN is INT64_MIN); lossy, so the caller
 *     resolves ties with the full comparator.
 *   - other abbreviated keys (text under ICU collations): the abbreviated
 *     Datum itself, compared unsigned as PostgreSQL does; ties likewise.
 *   - DESC inverts every value word.
 */
#ifndef GPUOPS_KEY_NORMALIZE_HPP
#define GPUOPS_KEY_NORMALIZE_HPP

#include <cstdint>
#include <cstring>

#include "gpuops_device.h"

#include "hd.hpp"

namespace gpuops {

GPUOPS_HD_FORCE uint64_t
load_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

GPUOPS_HD_FORCE uint64_t
float8_key(uint64_t bits)
{
	const uint64_t sign = 0x8000000000000000ull;

	if ((bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull &&
		(bits & 0x000fffffffffffffull) != 0)
		bits = 0x7ff8000000000000ull; /* every NaN is the same, positive */
	else if (bits == sign)
		bits = 0; /* -0 equals +0 */
	return (bits & sign) ? ~bits : (bits | sign);
}

GPUOPS_HD_FORCE uint32_t
float4_key(uint32_t bits)
{
	const uint32_t sign = 0x80000000u;

	if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0)
		bits = 0x7fc00000u;
	else if (bits == sign)
		bits = 0;
	return (bits & sign) ? ~bits : (bits | sign);
}

/*
 * The value words of one non-NULL value at `raw` (unaligned bytes, host
 * byte order as PostgreSQL stores it).  Returns the number of words.
 */
GPUOPS_HD_FORCE int
value_words(GpuopsKeyKind kind, const uint8_t *raw, uint64_t *w)
{
	switch (kind)
	{
		case GPUOPS_KEY_INT2:
			{
				int16_t v;

				memcpy(&v, raw, 2);
				w[0] = static_cast<uint16_t>(v) ^ 0x8000u;
				return 1;
			}
		case GPUOPS_KEY_INT4:
			{
				int32_t v;

				memcpy(&v, raw, 4);
				w[0] = static_cast<uint32_t>(v) ^ 0x80000000u;
				return 1;
			}
		case GPUOPS_KEY_INT8:
			{
				int64_t v;

				memcpy(&v, raw, 8);
				w[0] = static_cast<uint64_t>(v) ^ 0x8000000000000000ull;
				return 1;
			}
		case GPUOPS_KEY_FLOAT4:
			{
				uint32_t v;

				memcpy(&v, raw, 4);
				w[0] = float4_key(v);
				return 1;
			}
		case GPUOPS_KEY_FLOAT8:
			{
				uint64_t v;

				memcpy(&v, raw, 8);
				w[0] = float8_key(v);
				return 1;
			}
		case GPUOPS_KEY_BOOL:
			w[0] = raw[0] ? 1 : 0;
			return 1;
		case GPUOPS_KEY_UUID:
		case GPUOPS_KEY_BYTES16:
			w[0] = load_be64(raw);
			w[1] = load_be64(raw + 8);
			return 2;
		case GPUOPS_KEY_ABBREV_UNSIGNED:
			memcpy(&w[0], raw, 8);
			return 1;
		case GPUOPS_KEY_NUMERIC_ABBREV:
			{
				uint64_t v;

				memcpy(&v, raw, 8);
				w[0] = ~(v ^ 0x8000000000000000ull);
				return 1;
			}
		case GPUOPS_KEY_INTERVAL:
			{
				/* struct Interval { int64 time; int32 day; int32 month; } */
				int64_t time;
				int32_t day, month;

				memcpy(&time, raw, 8);
				memcpy(&day, raw + 8, 4);
				memcpy(&month, raw + 12, 4);
				__int128 span = static_cast<__int128>(time) +
					static_cast<__int128>(static_cast<int64_t>(month) * 30 + day) *
						static_cast<__int128>(86400000000ll);
				unsigned __int128 u = static_cast<unsigned __int128>(span);

				w[0] = static_cast<uint64_t>(u >> 64) ^ 0x8000000000000000ull;
				w[1] = static_cast<uint64_t>(u);
				return 2;
			}
	}
	return 0;
}

/* Total key words of a spec: per key a null word plus its value words. */
inline uint32_t
spec_words(const GpuopsSortSpec &spec)
{
	uint32_t n = 0;

	for (int k = 0; k < spec.nkeys; k++)
		n += 1 + gpuops_key_value_words(spec.keys[k].kind);
	return n;
}

/*
 * Staging layout: for capacity rows, key k's values at values_off[k] and its
 * null bitmap at nulls_off[k], each segment 16-byte aligned.  Returns the
 * bytes needed.
 */
inline size_t
stage_layout(const GpuopsSortSpec &spec, uint32_t capacity, size_t *values_off, size_t *nulls_off)
{
	size_t off = 0;

	for (int k = 0; k < spec.nkeys; k++)
	{
		values_off[k] = off;
		off += (static_cast<size_t>(capacity) * gpuops_key_raw_width(spec.keys[k].kind) + 15) &
			~size_t(15);
		nulls_off[k] = off;
		off += ((static_cast<size_t>(capacity) + 7) / 8 + 15) & ~size_t(15);
	}
	return off;
}

/*
 * Rows per staging buffer of `bytes` (keys, then any program columns): a
 * multiple of 65536 (one host batch) when that many fit, else of 8 (so null
 * bitmaps stay byte-aligned).
 */
inline uint32_t
stage_capacity(const GpuopsSortSpec &spec, size_t bytes)
{
	size_t per_row = 0;

	for (int k = 0; k < spec.nkeys; k++)
		per_row += gpuops_key_raw_width(spec.keys[k].kind);
	per_row += static_cast<size_t>(spec.nkeys); /* null bits, rounded up generously */
	/* the program columns after the keys (sort_computed.hpp): a word and a null byte each */
	per_row += static_cast<size_t>(spec.program_ncols) * (sizeof(uint64_t) + 1);
	size_t slack = static_cast<size_t>(spec.nkeys) * 32 + 64;
	size_t rows = bytes > slack ? (bytes - slack) / per_row : 0;

	if (rows > UINT32_MAX / 2)
		rows = UINT32_MAX / 2;
	if (rows >= 65536)
		rows &= ~size_t(65535);
	else
		rows &= ~size_t(7);
	return static_cast<uint32_t>(rows);
}

} /* namespace gpuops */

#endif
