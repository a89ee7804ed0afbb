/*
 * numeric_decode.cpp
 *    Stored numerics as scaled 64-bit integers (numeric_decode.h).
 *
 * Numerics are read in their stored format (numeric.c's NumericShort and
 * NumericLong layouts, which pg_upgrade keeps stable): a function call per
 * row would cost more than the device work they feed.
 */
extern "C" {
#include "postgres.h"

#include "fmgr.h"
}

#include "heap_format.hpp" /* stored_numeric_word */
#include "numeric_decode.h"
#include "pg_compat.h"

/* numeric.c's header bits and the scales taken: heap_format.hpp's */

static const int64 kPow10[19] = {1LL,
								 10LL,
								 100LL,
								 1000LL,
								 10000LL,
								 100000LL,
								 1000000LL,
								 10000000LL,
								 100000000LL,
								 1000000000LL,
								 10000000000LL,
								 100000000000LL,
								 1000000000000LL,
								 10000000000000LL,
								 100000000000000LL,
								 1000000000000000LL,
								 10000000000000000LL,
								 100000000000000000LL,
								 1000000000000000000LL};

GpuopsNumericDecoded
GpuopsNumericDecode(const char *p, int scale, int *dscale_out, int *scale_out, int64 *out)
{
	/* short and plain headers are read in place; compressed or external detoasted */
	struct varlena *v = VARATT_IS_EXTENDED(p) && !VARATT_IS_SHORT(p)
		? pg_detoast_datum_packed((struct varlena *) const_cast<char *>(p))
		: (struct varlena *) const_cast<char *>(p);
	const char *data = VARDATA_ANY(v);
	Size len = VARSIZE_ANY_EXHDR(v);
	uint16 header;
	int dscale, weight, ndigits;
	bool neg;
	const int16 *digits;
	__int128 acc = 0;
	GpuopsNumericDecoded rc = GPUOPS_NUMERIC_OK;

	memcpy(&header, data, sizeof(uint16));
	if ((header & gpuops::kNumSignMask) == gpuops::kNumSpecial)
		rc = GPUOPS_NUMERIC_SPECIAL;
	else
	{
		if ((header & gpuops::kNumSignMask) == gpuops::kNumShort)
		{
			neg = (header & gpuops::kNumShortSignMask) != 0;
			dscale = (header & gpuops::kNumShortDscaleMask) >> gpuops::kNumShortDscaleShift;
			weight = (header & gpuops::kNumShortWeightSignMask ? ~gpuops::kNumShortWeightMask : 0) |
				(header & gpuops::kNumShortWeightMask);
			digits = (const int16 *) (data + sizeof(uint16));
			ndigits = (int) ((len - sizeof(uint16)) / sizeof(int16));
		}
		else
		{
			int16 w;

			neg = (header & gpuops::kNumSignMask) == gpuops::kNumNeg;
			dscale = header & gpuops::kNumDscaleMask;
			memcpy(&w, data + sizeof(uint16), sizeof(int16));
			weight = w;
			digits = (const int16 *) (data + 2 * sizeof(uint16));
			ndigits = (int) ((len - 2 * sizeof(uint16)) / sizeof(int16));
		}
		if (scale == GPUOPS_NUMERIC_TIGHT)
		{
			/* the last nonzero digit's lowest nonzero decimal place */
			int last = ndigits - 1;
			int16 d = 0;

			while (last >= 0 && (memcpy(&d, &digits[last], sizeof(int16)), d == 0))
				last--;
			scale = 0;
			if (last >= 0)
			{
				int tz = 0;

				while (d % 10 == 0)
				{
					d /= 10;
					tz++;
				}
				scale = Max(0, -(4 * (weight - last) + tz));
			}
		}
		else if (scale < 0)
			scale = dscale;
		else if (dscale > scale)
			rc = GPUOPS_NUMERIC_TOO_WIDE;
		*dscale_out = dscale;
		*scale_out = scale;
		if (scale > gpuops::kStoredNumMaxScale)
			rc = GPUOPS_NUMERIC_TOO_WIDE;
		/* value * 10^scale = sum of digit[i] * 10^(4 * (weight - i) + scale) */
		for (int i = 0; i < ndigits && rc == GPUOPS_NUMERIC_OK; i++)
		{
			int16 d;
			int e;
			__int128 term;

			memcpy(&d, &digits[i], sizeof(int16));
			e = 4 * (weight - i) + scale;
			if (d == 0)
				continue;
			if (e > 18)
			{
				rc = GPUOPS_NUMERIC_TOO_WIDE;
				break;
			}
			if (e >= 0)
				term = (__int128) d * kPow10[e];
			else if (e >= -4 && d % kPow10[-e] == 0)
				term = d / kPow10[-e];
			else
			{
				/* digits below the display scale are zero; never here unless not */
				rc = GPUOPS_NUMERIC_TOO_WIDE;
				break;
			}
			acc += term;
			if (acc > PG_INT64_MAX)
				rc = GPUOPS_NUMERIC_TOO_WIDE;
		}
		if (rc == GPUOPS_NUMERIC_OK)
			*out = (int64) (neg ? -acc : acc);
	}
	if ((const char *) v != p)
		pfree(v);
	return rc;
}

uint64
GpuopsNumericExprWord(const char *p)
{
	/* the one rule, shared with the device's page reader (heap_format.hpp) */
	struct varlena *v = VARATT_IS_EXTENDED(p) && !VARATT_IS_SHORT(p)
		? pg_detoast_datum_packed((struct varlena *) const_cast<char *>(p))
		: (struct varlena *) const_cast<char *>(p);
	uint64 word = gpuops::stored_numeric_word((const uint8 *) VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));

	if ((const char *) v != p)
		pfree(v);
	return word;
}
