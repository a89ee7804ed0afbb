/*
 * key_normalize.hpp
 *    Order-preserving transforms from SQL values to unsigned integer keys,
 *    shared by the CUDA kernels and the CPU twin so both sort identically.
 *
 * Comparing the unsigned keys gives PostgreSQL's order for the type:
 * signed integers flip the sign bit; float8 maps -0 to +0 and every NaN to
 * one NaN that sorts above +Infinity (PostgreSQL's float8 comparison treats
 * all NaNs as equal and larger than any number), then flips all bits of
 * negatives and the sign bit of positives.  DESC inverts every key bit.
 * NULLs never reach the key: the host keeps them apart and emits them first
 * or last.
 */
#ifndef GPUOPS_KEY_NORMALIZE_HPP
#define GPUOPS_KEY_NORMALIZE_HPP

#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define GPUOPS_HD __host__ __device__ __forceinline__
#else
#define GPUOPS_HD inline
#endif

namespace gpuops {

GPUOPS_HD uint32_t
normalize_int4(int32_t v, bool desc)
{
	uint32_t	k = static_cast<uint32_t>(v) ^ 0x80000000u;

	return desc ? ~k : k;
}

GPUOPS_HD uint64_t
normalize_int8(int64_t v, bool desc)
{
	uint64_t	k = static_cast<uint64_t>(v) ^ 0x8000000000000000ull;

	return desc ? ~k : k;
}

/* bits: the IEEE 754 representation of a float8 */
GPUOPS_HD uint64_t
normalize_float8_bits(uint64_t bits, bool desc)
{
	const uint64_t sign = 0x8000000000000000ull;
	const uint64_t exp_mask = 0x7ff0000000000000ull;
	const uint64_t frac_mask = 0x000fffffffffffffull;
	uint64_t	k;

	if ((bits & exp_mask) == exp_mask && (bits & frac_mask) != 0)
		bits = 0x7ff8000000000000ull;	/* every NaN is the same, positive */
	else if (bits == sign)
		bits = 0;				/* -0 equals +0 */
	k = (bits & sign) ? ~bits : (bits | sign);
	return desc ? ~k : k;
}

}								/* namespace gpuops */

#endif
