/*
 * gpuops_keys.h
 *    The device engine's C interface, one part: sort key kinds and the widths
 *    their values are staged at.
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_KEYS_H
#define GPUOPS_KEYS_H

#include "gpuops_base.h"

GPUOPS_C_BEGIN

/*
 * Sort key kinds.  Each key column is staged raw (its values at the width
 * below, plus a null bitmap) and becomes, on the device, one null word and
 * one or two value words: 64-bit unsigned integers whose order is
 * PostgreSQL's order for the type (key_normalize.hpp).
 */
typedef enum GpuopsKeyKind
{
	GPUOPS_KEY_INT2 = 0, /* int2 */
	GPUOPS_KEY_INT4,	 /* int4, date */
	GPUOPS_KEY_INT8,	 /* int8, time, timestamp, timestamptz */
	GPUOPS_KEY_FLOAT4,	 /* NaN above +Infinity, -0 == 0 */
	GPUOPS_KEY_FLOAT8,
	GPUOPS_KEY_BOOL,
	GPUOPS_KEY_UUID,		   /* 16 bytes, compared as unsigned bytes */
	GPUOPS_KEY_INTERVAL,	   /* PostgreSQL Interval, compared by total span */
	GPUOPS_KEY_BYTES16,		   /* a 16-byte prefix, zero padded (C-collation text) */
	GPUOPS_KEY_NUMERIC_ABBREV, /* PostgreSQL's 64-bit abbreviated numeric key: its
								 * signed order is the reverse of the values' */
	GPUOPS_KEY_ABBREV_UNSIGNED /* a PostgreSQL abbreviated key compared as an
								 * unsigned integer (text under ICU collations) */
} GpuopsKeyKind;

#define GPUOPS_MAX_SORT_KEYS 32

/* Bytes one value of the kind takes in a staging buffer. */
GPUOPS_INLINE uint32_t
gpuops_key_raw_width(GpuopsKeyKind kind)
{
	switch (kind)
	{
		case GPUOPS_KEY_INT2:
			return 2;
		case GPUOPS_KEY_INT4:
		case GPUOPS_KEY_FLOAT4:
			return 4;
		case GPUOPS_KEY_BOOL:
			return 1;
		case GPUOPS_KEY_UUID:
		case GPUOPS_KEY_INTERVAL:
		case GPUOPS_KEY_BYTES16:
			return 16;
		default:
			return 8;
	}
}

/* 64-bit value words of the kind (the null word comes on top). */
GPUOPS_INLINE uint32_t
gpuops_key_value_words(GpuopsKeyKind kind)
{
	return gpuops_key_raw_width(kind) > 8 ? 2 : 1;
}

GPUOPS_C_END

#endif /* GPUOPS_KEYS_H */
