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

#include "expr_eval.hpp" /* expr_num_word (expr_numeric.hpp) */
#include "numeric_decode.h"
#include "pg_compat.h"

/* numeric.c's header bits */
#define NUM_SIGN_MASK 0xC000
#define NUM_NEG 0x4000
#define NUM_SHORT 0x8000
#define NUM_SPECIAL 0xC000
#define NUM_SHORT_SIGN_MASK 0x2000
#define NUM_SHORT_DSCALE_MASK 0x1F80
#define NUM_SHORT_DSCALE_SHIFT 7
#define NUM_SHORT_WEIGHT_SIGN_MASK 0x0040
#define NUM_SHORT_WEIGHT_MASK 0x003F
#define NUM_DSCALE_MASK 0x3FFF

/* scales taken at all (GpuAgg: the text of a 128-bit sum stays short) */
#define MAX_DEVICE_SCALE 30

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
	if ((header & NUM_SIGN_MASK) == NUM_SPECIAL)
		rc = GPUOPS_NUMERIC_SPECIAL;
	else
	{
		if ((header & NUM_SIGN_MASK) == NUM_SHORT)
		{
			neg = (header & NUM_SHORT_SIGN_MASK) != 0;
			dscale = (header & NUM_SHORT_DSCALE_MASK) >> NUM_SHORT_DSCALE_SHIFT;
			weight = (header & NUM_SHORT_WEIGHT_SIGN_MASK ? ~NUM_SHORT_WEIGHT_MASK : 0) |
				(header & NUM_SHORT_WEIGHT_MASK);
			digits = (const int16 *) (data + sizeof(uint16));
			ndigits = (int) ((len - sizeof(uint16)) / sizeof(int16));
		}
		else
		{
			int16 w;

			neg = (header & NUM_SIGN_MASK) == NUM_NEG;
			dscale = header & NUM_DSCALE_MASK;
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
		if (scale > MAX_DEVICE_SCALE)
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

/*
 * The common case of GpuopsNumericExprWord, without 128-bit arithmetic: a
 * short header and at most 4 base-10000 digits, in place.  The digits as
 * one integer n, its value n x 10^-s with s = 4 (ndigits - 1 - weight);
 * trailing decimal zeros dropped while s > 0 (the tight scale), a negative
 * s multiplied out.  False where the general path must decide.
 */
static inline bool
ShortNumericWord(const char *p, uint64 *word)
{
	const char *data;
	uint16 header;
	int ndigits, weight, s;
	int64 n = 0;

	if (VARATT_IS_EXTENDED(p) && !VARATT_IS_SHORT(p))
		return false;
	data = VARDATA_ANY(p);
	ndigits = (int) ((VARSIZE_ANY_EXHDR(p) - sizeof(uint16)) / sizeof(int16));
	memcpy(&header, data, sizeof(uint16));
	if ((header & NUM_SIGN_MASK) != NUM_SHORT || ndigits > 4)
		return false;
	weight = (header & NUM_SHORT_WEIGHT_SIGN_MASK ? ~NUM_SHORT_WEIGHT_MASK : 0) |
		(header & NUM_SHORT_WEIGHT_MASK);
	for (int i = 0; i < ndigits; i++)
	{
		int16 d;

		memcpy(&d, data + sizeof(uint16) + i * sizeof(int16), sizeof(int16));
		n = n * 10000 + d;
	}
	if (n == 0)
	{
		*word = gpuops::expr_num_word(0, 0);
		return true;
	}
	s = 4 * (ndigits - 1 - weight);
	while (s > 0 && n % 10 == 0)
	{
		n /= 10;
		s--;
	}
	if (s < 0)
	{
		/* n < 10^16: past 10^18 the value overflows int64, as the general path finds */
		if (-s > 18 || (__int128) n * kPow10[-s] > PG_INT64_MAX)
			return false;
		n *= kPow10[-s];
		s = 0;
	}
	if (s > MAX_DEVICE_SCALE)
		return false;
	*word = gpuops::expr_num_word((header & NUM_SHORT_SIGN_MASK) ? -n : n, s);
	return true;
}

uint64
GpuopsNumericExprWord(const char *p)
{
	int dscale, scale;
	int64 v;
	uint64 word;

	if (ShortNumericWord(p, &word))
		return word;

	if (GpuopsNumericDecode(p, GPUOPS_NUMERIC_TIGHT, &dscale, &scale, &v) != GPUOPS_NUMERIC_OK)
		return gpuops::kNumUnknown;
	return gpuops::expr_num_word(v, scale);
}
