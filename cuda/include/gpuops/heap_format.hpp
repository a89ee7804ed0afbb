/*
 * heap_format.hpp
 *    PostgreSQL's stored formats as the device engine reads them without
 *    PostgreSQL's headers: a heap page's line pointers, a heap tuple's
 *    header and null bitmap, varlena headers, and a stored numeric as the
 *    expressions' numeric word (expr_numeric.hpp).
 *
 * Why here: GpuQuery's page reader copies whole heap pages to the device,
 * which deforms them (query/page_deform.hpp); the same functions compile
 * for the CPU twin and for src/, so one copy of each rule exists.  These
 * are on-disk formats, stable across PostgreSQL 15-18 (pg_upgrade keeps
 * them); src/input/query_deform.cpp checks the page and tuple constants against
 * PostgreSQL's own macros at compile time and the line pointer's bit
 * layout once at run time.  Little-endian only (the varlena header's
 * length bits sit in the first byte's low end there); src/ does not use
 * the page reader on a big-endian build.
 */
#ifndef GPUOPS_HEAP_FORMAT_HPP
#define GPUOPS_HEAP_FORMAT_HPP

#include <stdint.h>
#include <string.h>

#include "hd.hpp"
#include "expr_numeric.hpp"

namespace gpuops {

/* bufpage.h, itemid.h */
constexpr uint32_t kPageHeaderSize = 24; /* SizeOfPageHeaderData: the line pointers follow */
constexpr uint32_t kLpNormal = 1;		 /* LP_NORMAL */

/* htup_details.h: HeapTupleHeaderData's fields */
constexpr uint32_t kTupInfomask2Off = 18; /* t_infomask2 (uint16) */
constexpr uint32_t kTupInfomaskOff = 20;  /* t_infomask (uint16) */
constexpr uint32_t kTupHoffOff = 22;	  /* t_hoff (uint8) */
constexpr uint32_t kTupBitsOff = 23;	  /* t_bits */
constexpr uint16_t kTupNattsMask = 0x07FF;
constexpr uint16_t kTupHasNull = 0x0001;

/* varatt.h (postgres.h before PostgreSQL 16) */
constexpr uint32_t kVarHdrSz = 4;
constexpr uint8_t kVarTagOnDisk = 18;
constexpr uint32_t kVarExternalOnDiskSize = 2 + 16; /* header, tag, varatt_external */

/* numeric.c's header bits */
constexpr uint16_t kNumSignMask = 0xC000;
constexpr uint16_t kNumNeg = 0x4000;
constexpr uint16_t kNumShort = 0x8000;
constexpr uint16_t kNumSpecial = 0xC000;
constexpr uint16_t kNumShortSignMask = 0x2000;
constexpr uint16_t kNumShortDscaleMask = 0x1F80;
constexpr int kNumShortDscaleShift = 7;
constexpr uint16_t kNumShortWeightSignMask = 0x0040;
constexpr uint16_t kNumShortWeightMask = 0x003F;
constexpr uint16_t kNumDscaleMask = 0x3FFF;
/* the scales taken at all (GpuAgg's sums: the text of a 128-bit sum stays short) */
constexpr int kStoredNumMaxScale = 30;

GPUOPS_HD uint16_t
heap_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

GPUOPS_HD uint32_t
heap_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A line pointer (ItemIdData: lp_off:15, lp_flags:2, lp_len:15, low bits first). */
struct HeapItem
{
	uint32_t off, flags, len;
};

GPUOPS_HD HeapItem
heap_item(const uint8_t *page, uint32_t lineno)
{
	uint32_t v = heap_u32(page + kPageHeaderSize + 4 * (lineno - 1));

	return HeapItem{v & 0x7FFFu, (v >> 15) & 0x3u, v >> 17};
}

/* TYPEALIGN */
GPUOPS_HD uint32_t
heap_align(uint32_t off, uint32_t align)
{
	return (off + align - 1) & ~(align - 1);
}

/*
 * A varlena's header at p: its whole size (VARSIZE_ANY), where its data
 * starts (VARDATA_ANY's offset) and whether it is compressed or external
 * (VARATT_IS_EXTENDED and not short: the data is not the value).  False
 * for an external pointer this reader cannot size (not on disk).
 */
struct HeapVarlena
{
	uint32_t size, hdr;
	bool extended;
};

GPUOPS_HD bool
heap_varlena(const uint8_t *p, HeapVarlena *v)
{
	uint8_t b = p[0];

	if (b == 0x01)
	{
		/* VARATT_IS_1B_E: an external pointer, sized by its tag */
		if (p[1] != kVarTagOnDisk)
			return false;
		*v = HeapVarlena{kVarExternalOnDiskSize, 2, true};
		return true;
	}
	if ((b & 0x01) == 0x01)
	{
		*v = HeapVarlena{(uint32_t) (b >> 1) & 0x7Fu, 1, false}; /* VARATT_IS_1B */
		return true;
	}
	/* 4-byte header: uncompressed (low bits 00) or compressed (10) */
	*v = HeapVarlena{(heap_u32(p) >> 2) & 0x3FFFFFFFu, kVarHdrSz, (b & 0x03) == 0x02};
	return true;
}

/*
 * A stored numeric's digits (data, len bytes after the varlena header) as
 * the expressions' numeric word: its value at the fewest decimal places
 * that hold it, or kNumUnknown (NaN, infinities, more digits than a word
 * holds).  numeric.c's NumericShort and NumericLong layouts.
 */
GPUOPS_HD uint64_t
stored_numeric_word(const uint8_t *data, uint32_t len)
{
	uint16_t header = heap_u16(data);
	int ndigits, weight, last, tz = 0, scale, e;
	bool neg;
	const uint8_t *digits;
	int16_t d = 0;
	__int128 n = 0;

	if ((header & kNumSignMask) == kNumSpecial)
		return kNumUnknown;
	if ((header & kNumSignMask) == kNumShort)
	{
		neg = (header & kNumShortSignMask) != 0;
		weight = (header & kNumShortWeightSignMask ? ~(int) kNumShortWeightMask : 0) |
			(header & kNumShortWeightMask);
		digits = data + 2;
		ndigits = (int) ((len - 2) / 2);
	}
	else
	{
		neg = (header & kNumSignMask) == kNumNeg;
		weight = (int16_t) heap_u16(data + 2);
		digits = data + 4;
		ndigits = (int) ((len - 4) / 2);
	}
	if (ndigits <= 4)
	{
		/*
		 * The common case in 64 bits (a 128-bit division is a library call):
		 * the digits as one integer m, the value m x 10^-s, trailing
		 * decimal zeros dropped while s > 0 (the tight scale).
		 */
		int64_t m = 0;
		int s = 4 * (ndigits - 1 - weight);

		for (int i = 0; i < ndigits; i++)
			m = m * 10000 + (int16_t) heap_u16(digits + 2 * i);
		if (m == 0)
			return expr_num_word(0, 0);
		while (s > 0 && m % 10 == 0)
		{
			m /= 10;
			s--;
		}
		if (s >= 0 && s <= kStoredNumMaxScale)
			return expr_num_word(neg ? -m : m, s);
		/* a large weight: the general path below multiplies it out, or finds it too wide */
	}
	/* the tight scale: the last nonzero digit's lowest nonzero decimal place */
	last = ndigits - 1;
	while (last >= 0 && (d = (int16_t) heap_u16(digits + 2 * last)) == 0)
		last--;
	if (last < 0)
		return expr_num_word(0, 0);
	while (d % 10 == 0)
	{
		d /= 10;
		tz++;
	}
	scale = -(4 * (weight - last) + tz);
	if (scale < 0)
		scale = 0;
	if (scale > kStoredNumMaxScale)
		return kNumUnknown;
	/*
	 * The digits up to the last nonzero one as one integer n; the value is
	 * n x 10^(4 (weight - last)), so value x 10^scale = n x 10^e with
	 * e >= -tz >= -3 (n then divides exactly).  Past INT64_MAX x 1000, n
	 * over 10^tz still exceeds INT64_MAX: no word holds it.
	 */
	for (int i = 0; i <= last; i++)
	{
		n = n * 10000 + (int16_t) heap_u16(digits + 2 * i);
		if (n > (__int128) INT64_MAX * 1000)
			return kNumUnknown;
	}
	e = 4 * (weight - last) + scale;
	if (e >= 0)
	{
		if (e > 18 || n > (__int128) INT64_MAX)
			return kNumUnknown;
		for (int i = 0; i < e; i++)
			n *= 10;
	}
	else if (n <= (__int128) INT64_MAX)
	{
		/* the common case (0.05: n 500, e -2), without a 128-bit division */
		int64_t v = (int64_t) n;

		for (int i = 0; i < -e; i++)
			v /= 10;
		n = v;
	}
	else
		for (int i = 0; i < -e; i++)
			n /= 10;
	if (n > (__int128) INT64_MAX)
		return kNumUnknown;
	return expr_num_word(neg ? -n : n, scale);
}

} // namespace gpuops

#endif /* GPUOPS_HEAP_FORMAT_HPP */
