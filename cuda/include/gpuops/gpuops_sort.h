/*
 * gpuops_sort.h
 *    The device engine's C interface, one part: the sort backend
 *    (GpuopsBackend).
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_SORT_H
#define GPUOPS_SORT_H

#include "gpuops_base.h"
#include "gpuops_expr.h"
#include "gpuops_keys.h"

GPUOPS_C_BEGIN

typedef struct GpuopsSortKey
{
	GpuopsKeyKind kind;
	int descending;
	int nulls_first;
} GpuopsSortKey;

typedef struct GpuopsSortSpec
{
	int nkeys;
	GpuopsSortKey keys[GPUOPS_MAX_SORT_KEYS];
	/*
	 * > 0: report which sorted rows equal their predecessor in the first
	 * tie_words key words (through the first key the device sees only a
	 * prefix of; the caller re-sorts those runs)
	 */
	uint32_t tie_words;

	/*
	 * Keys the device computes (expressions as sort keys): for a key with
	 * programs[k] set (a value program over the staged program columns,
	 * program_ncols of them), the caller stages nothing in values[k] and
	 * nulls[k]; the program's value is the key, at its kind's width (INT2/4/8,
	 * FLOAT4/8 only), and a NULL value a NULL key.  The programs may stop
	 * (RECHECK) only where PostgreSQL raises an error: sort_recheck gives
	 * the first such row, for the caller to evaluate with PostgreSQL (the
	 * order is then meaningless).  sort_values returns the computed values,
	 * which the caller's rows need too.
	 */
	const GpuopsExprProgram *programs[GPUOPS_MAX_SORT_KEYS];
	int program_ncols;
} GpuopsSortSpec;

#define GPUOPS_SORT_NO_RECHECK (~(uint64_t) 0)

/*
 * Timings and counters one operation reports for EXPLAIN ANALYZE.
 * Milliseconds; copy time covers host<->device transfers, kernel time the
 * device-side work (normalize, sort); both are 0 on the CPU backend except
 * kernel_ms, which then is the time of the host implementation.
 */
typedef struct GpuopsStats
{
	uint64_t rows;
	uint32_t batches;
	uint32_t key_words;	  /* 64-bit words per normalized key */
	uint32_t runs;		  /* sorted runs merged (over the memory budget: > 1) */
	uint32_t sort_passes; /* radix sort passes (words whose values differ) */
	uint32_t sort_bits;	  /* key bits the radix sorts actually examined */
	double copy_ms;
	double kernel_ms;
	uint64_t device_bytes;		/* peak device memory held by the operation */
	uint64_t bytes_from_device; /* copied device -> host (gpuops_device.h) */
} GpuopsStats;

/*
 * A staging buffer handed out by a backend for the caller to fill: per key,
 * capacity_rows values at the kind's raw width and a null bitmap (bit i of
 * byte i/8 set = row i is NULL; a NULL row's value bytes are ignored).
 * capacity_rows is a multiple of 8.
 */
typedef struct GpuopsStageBuffer
{
	void *values[GPUOPS_MAX_SORT_KEYS];
	uint8_t *nulls[GPUOPS_MAX_SORT_KEYS];
	/* the program columns (spec.program_ncols): a word and a null byte per row */
	uint64_t *input_words[GPUOPS_EXPR_MAX_COLS];
	uint8_t *input_nulls[GPUOPS_EXPR_MAX_COLS];
	uint32_t capacity_rows;
} GpuopsStageBuffer;

typedef struct GpuopsSort GpuopsSort; /* opaque, owned by the backend */

/*
 * Parked rows (sort_park_*): a sort may also keep the rows themselves, so
 * that its caller holds none of them.  A row is opaque bytes whose first 4
 * bytes are its length (a uint32, the whole row's bytes: a PostgreSQL
 * MinimalTuple's t_len); rows are parked in the order of their keys, row i
 * with key row i.  After the sort they come back in sorted order, in chunks.
 *
 * A park buffer (pinned on the GPU) for the caller to fill: rows at 8-byte
 * aligned offsets of data (capacity bytes), and per row its offset in
 * offsets (capacity_rows of them).
 */
typedef struct GpuopsParkBuffer
{
	uint8_t *data;
	size_t capacity;
	uint32_t *offsets;
	uint32_t capacity_rows;
} GpuopsParkBuffer;

/*
 * A chunk of sorted rows: `rows` rows laid out one after another in `bytes`
 * bytes, each at an 8-byte aligned offset (a row's length rounded up to 8
 * leads to the next).  With spec.tie_words, bit (ties_bit0 + i) of ties is
 * set when the chunk's row i has the same first tie_words key words as the
 * row before it (for i = 0, the previous chunk's last row); the chunk ends
 * between two such rows only when their run of equal words does not fit
 * one chunk.  Valid until the next sort_park_next, sort_park_rewind or
 * sort_end.
 */
typedef struct GpuopsParkChunk
{
	const uint8_t *data;
	size_t bytes;
	uint32_t rows;
	const uint32_t *ties; /* NULL without tie_words */
	uint32_t ties_bit0;
} GpuopsParkChunk;

/*
 * A backend: the same operations on the GPU or on the host.
 *
 * Sort protocol (key-pointer sort; rows are numbered 0..n-1 in the order their
 * keys were submitted, the tuples themselves never leave the host):
 *   sort_begin
 *   repeat: sort_stage (may return GPUOPS_PENDING while every staging buffer
 *           is in flight; call again) -> fill values -> sort_submit(nrows)
 *   sort_finish   (queues the sort; returns at once)
 *   repeat sort_poll until it returns GPUOPS_OK (GPUOPS_PENDING meanwhile)
 *   sort_result   (row numbers in sorted order; stable: ties keep input order)
 *   sort_ties     (with spec.tie_words: bit i set = sorted row i has the
 *                  same first tie_words key words as sorted row i-1)
 *   sort_recheck, sort_values (with computed keys, any time after sort_poll)
 *   sort_end      (always, also after any failure; frees everything)
 * With parked rows, beside each batch's keys: sort_park_room (whether rows
 * of so many bytes still fit the device budget with their keys), then
 * sort_park_stage (GPUOPS_PENDING as sort_stage) -> fill -> sort_park_submit,
 * as many times as the rows take; after sort_poll, sort_park_next until a
 * chunk of 0 rows, sort_park_rewind to read them again.
 * Every function except sort_end returns a status; after a failure the
 * message is available from last_error() until the next call.
 */
typedef struct GpuopsBackend
{
	const char *name; /* "cuda" or "cpu" */
	GpuopsStatus (*probe)(GpuopsDeviceInfo *info) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_begin)(const GpuopsSettings *settings, const GpuopsSortSpec *spec,
							   GpuopsSort **sort) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_stage)(GpuopsSort *sort, GpuopsStageBuffer *buf) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_submit)(GpuopsSort *sort, uint32_t nrows) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_finish)(GpuopsSort *sort) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_poll)(GpuopsSort *sort) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_result)(GpuopsSort *sort, uint32_t *order, uint64_t nrows) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_ties)(GpuopsSort *sort, uint8_t *ties, uint64_t nrows) GPUOPS_NOEXCEPT;
	void (*sort_stats)(const GpuopsSort *sort, GpuopsStats *stats) GPUOPS_NOEXCEPT;
	void (*sort_end)(GpuopsSort *sort) GPUOPS_NOEXCEPT;
	/* the first row (in submission order) a key program stopped at, or GPUOPS_SORT_NO_RECHECK */
	GpuopsStatus (*sort_recheck)(GpuopsSort *sort, uint64_t *row) GPUOPS_NOEXCEPT;
	/*
	 * Computed key `key`'s values of rows [first, first + n) in submission
	 * order (first a multiple of 8): at its kind's width into values, and
	 * as bits 0..n-1 of the bitmap nulls (its other bits are kept).
	 */
	GpuopsStatus (*sort_values)(GpuopsSort *sort, int key, uint64_t first, uint32_t n, void *values,
								uint8_t *nulls) GPUOPS_NOEXCEPT;
	/* *fits = 1 when `nrows` more rows of `bytes` more bytes fit beside those parked */
	GpuopsStatus (*sort_park_room)(GpuopsSort *sort, uint64_t bytes, uint32_t nrows,
								   int *fits) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_park_stage)(GpuopsSort *sort, GpuopsParkBuffer *buf) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_park_submit)(GpuopsSort *sort, uint64_t bytes,
									 uint32_t nrows) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_park_next)(GpuopsSort *sort, GpuopsParkChunk *chunk) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_park_rewind)(GpuopsSort *sort) GPUOPS_NOEXCEPT;
} GpuopsBackend;

extern const GpuopsBackend *gpuops_cuda_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsBackend *gpuops_cpu_backend(void) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_SORT_H */
