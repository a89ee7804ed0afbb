/*
 * numeric_decode.h
 *    Reading a stored numeric as a scaled 64-bit integer, for the device
 *    paths that take numerics exactly (GpuAgg's sums, the expression
 *    evaluator's words).
 */
#ifndef GPUOPS_NUMERIC_DECODE_H
#define GPUOPS_NUMERIC_DECODE_H

extern "C" {
#include "postgres.h"
}

typedef enum GpuopsNumericDecoded
{
	GPUOPS_NUMERIC_OK,
	GPUOPS_NUMERIC_SPECIAL, /* NaN or an infinity */
	GPUOPS_NUMERIC_TOO_WIDE /* does not fit in 64 bits at the scale asked */
} GpuopsNumericDecoded;

/* scale: the value's own display scale, or the fewest digits that hold it */
#define GPUOPS_NUMERIC_DSCALE (-1)
#define GPUOPS_NUMERIC_TIGHT (-2)

/*
 * The stored numeric at p (a varlena, short, plain, compressed or
 * external): its display scale (*dscale_out), the scale used (*scale_out:
 * `scale`, or as GPUOPS_NUMERIC_DSCALE / _TIGHT say) and its value times
 * 10^scale in *out, when that is an integer that fits in 64 bits.  A
 * scale given below the display scale is TOO_WIDE.  A compressed or
 * external value is detoasted, so a helper thread must not pass one
 * (VARATT_IS_EXTENDED and not VARATT_IS_SHORT).
 */
extern GpuopsNumericDecoded GpuopsNumericDecode(const char *p, int scale, int *dscale_out,
												int *scale_out, int64 *out);

/*
 * The stored numeric at p as the device expressions' numeric word
 * (expr_numeric.hpp): its value at the fewest decimal places that hold it,
 * or the unknown word (NaN, infinities, too many digits).  The same rule
 * for staged columns, constants and GpuQuery's reader threads (which pass
 * no compressed or external value, as above).
 */
extern uint64 GpuopsNumericExprWord(const char *p);

#endif
