/*
 * gpuops_host.h
 *    The device engine's C interface, one part: host-side helpers over staged
 *    values (gather, merge words, packing).
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_HOST_H
#define GPUOPS_HOST_H

#include "gpuops_base.h"

GPUOPS_C_BEGIN

/*
 * Host-side gather: out[i] = value of row order[i], for several columns at
 * once, on a few threads.  Rows live in batches of 2^batch_shift rows;
 * batch_values[b] points at batch b's packed values.  Used to lay result
 * columns out in output order before rows are emitted.  Pure memory work:
 * no PostgreSQL call, safe on helper threads.
 */
typedef struct GpuopsGatherColumn
{
	const char *const *batch_values;
	char *out;
	uint32_t width;
} GpuopsGatherColumn;

extern GpuopsStatus gpuops_host_gather(const GpuopsGatherColumn *cols, int ncols,
									   const uint32_t *order, uint64_t n,
									   unsigned batch_shift) GPUOPS_NOEXCEPT;

/*
 * A merge join's key words (see the merge join below): out[i] = the merge
 * word of row i of a store column whose rows lie in batches of
 * 2^batch_shift rows (every batch full but the last), batch_values[b]
 * pointing at batch b's packed values.  Integers of every width (and
 * dates, times, timestamps, bool) widen to int64 and flip the sign bit;
 * floats of either width widen to double and take float8_key's order
 * (key_normalize.hpp: every NaN one value above +Infinity, -0 as 0), so
 * keys of different widths merge.  NULL rows get a word too: the caller
 * zeroes theirs.  On a few threads: reading and writing every row is the
 * work, and fresh output pages fault in on each thread.
 */
typedef enum GpuopsMergeWordKind
{
	GPUOPS_MW_INT16,
	GPUOPS_MW_INT32,
	GPUOPS_MW_INT64,
	GPUOPS_MW_BOOL,
	GPUOPS_MW_FLOAT4,
	GPUOPS_MW_FLOAT8
} GpuopsMergeWordKind;

extern GpuopsStatus gpuops_host_merge_words(const char *const *batch_values, uint64_t n,
											unsigned batch_shift, GpuopsMergeWordKind kind,
											uint64_t *out) GPUOPS_NOEXCEPT;

/*
 * Variable-length values in output order.  After the gather, a column of
 * pointers is in output order but the values it points to are not: emitting
 * rows would read them at random, a cache and TLB miss per row on one
 * thread.  gpuops_host_value_bytes measures the n values ptrs[i] (rows whose
 * bit is set in nulls, which may be NULL, are skipped), each rounded up to
 * 8 bytes, per range of rows into pack (pack->bytes: the total);
 * gpuops_host_pack_values then copies them, in order, into `arena`
 * (pack->bytes, 8-byte aligned, allocated by the caller in between) and
 * points ptrs[i] at the copies.  value_size returns a value's size in bytes
 * from its first bytes; it must be pure (it runs on helper threads).
 */
#define GPUOPS_PACK_RANGES 64

typedef size_t (*GpuopsValueSize)(const char *value);

typedef struct GpuopsValuePack
{
	uint64_t bytes;
	uint64_t range_bytes[GPUOPS_PACK_RANGES];
} GpuopsValuePack;

extern GpuopsStatus gpuops_host_value_bytes(char *const *ptrs, const uint8_t *nulls, uint64_t n,
											GpuopsValueSize value_size,
											GpuopsValuePack *pack) GPUOPS_NOEXCEPT;
extern GpuopsStatus gpuops_host_pack_values(char **ptrs, const uint8_t *nulls, uint64_t n,
											GpuopsValueSize value_size, const GpuopsValuePack *pack,
											char *arena) GPUOPS_NOEXCEPT;

/*
 * Rows 0..n-1 of a caller's work split into ranges, fn(arg, begin, end) on
 * each, on up to 16 threads (none for less than min_per_thread rows each).
 * fn runs on helper threads with every signal blocked: it must be pure, no
 * allocation or error reporting of PostgreSQL's (GpuSort forms its parked
 * rows' tuples so, sort_park.cpp).
 */
typedef void (*GpuopsRowsFn)(void *arg, uint64_t begin, uint64_t end);

extern GpuopsStatus gpuops_host_parallel_rows(uint64_t n, uint64_t min_per_thread, GpuopsRowsFn fn,
											  void *arg) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_HOST_H */
