/*
 * gpuops_agg.h
 *    The device engine's C interface, one part: the grouped aggregation
 *    backend (GpuopsAggBackend).
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_AGG_H
#define GPUOPS_AGG_H

#include "gpuops_base.h"
#include "gpuops_expr.h"
#include "gpuops_keys.h"

GPUOPS_C_BEGIN

/*
 * Grouped aggregation (key-pointer, like the sort and the join): rows are
 * numbered in the order they are added; the group key columns and one input
 * column per aggregate go to the device raw (sort staging widths, with null
 * bitmaps); back come, per group, one representative row (its first) and
 * one state per aggregate, from which the caller builds PostgreSQL's
 * results.
 *
 * Algorithm (both backends): each row's group key becomes packed words (per
 * key a null bit and its normalized value bits, key_normalize.hpp) that are
 * equal exactly when PostgreSQL's GROUP BY equality holds; the (words, row)
 * pairs are radix sorted (stable, least significant word first), equal
 * neighbours form a group, and every aggregate is a reduce-by-key over the
 * sorted rows, so one huge group does not serialize (skew).  Groups come in
 * key-word order.
 *
 * Hash strategy (spec.hash_capacity > 0; agg_hash_capacity says when it
 * applies): for few groups, where a sort of every row costs more than the
 * aggregation itself.  Rows find their group's slot in a global-memory hash
 * table keyed by the packed words; the groups (at most hash_capacity, else
 * the aggregation is sorted instead, stats.hash_overflow) are numbered in
 * key-word order, and the states are accumulated with atomics: in each
 * block's shared memory when the groups' states fit there (few groups, where
 * global atomics on the same addresses contend), else in global memory.
 * Only exact states take this path (counts, integer sums in 128 and 192
 * bits, min/max of values up to 64 bits, the winning row found in a second
 * pass), so the results are those of the sort strategy, bit for bit, in any
 * order the atomics run.
 *
 * Ordered aggregates (count(DISTINCT x), percentile_disc, percentile_cont)
 * share one input: spec.order_agg names the aggregate whose values (and
 * null bitmap, FILTER included) order each group's rows.  Its validity and
 * normalized value are appended to the packed key as a sub-key, starting
 * on a new word, so each group's counted rows come first, sorted by value
 * (descending with order_desc): a distinct value is a row whose sub-key
 * differs from its predecessor's, a percentile is a row at a computed
 * offset from the group's start.  Their states do not combine across
 * chunks: such an aggregation is never split (agg_capacity is then a limit
 * the caller honours otherwise).
 */
typedef enum GpuopsAggKind
{
	GPUOPS_AGG_COUNT = 0,		/* inputs counted (not NULL, FILTER passed) */
	GPUOPS_AGG_SUM_INT,			/* exact 128-bit sum of int2/int4/int8 values */
	GPUOPS_AGG_FLOAT,			/* float8_accum's N, Sx, Sxx, combined as float8_combine */
	GPUOPS_AGG_MIN,				/* the row holding the least value (key order) */
	GPUOPS_AGG_MAX,				/* the row holding the greatest value */
	GPUOPS_AGG_COUNT_DISTINCT,	/* distinct values counted (ordered, below) */
	GPUOPS_AGG_PERCENTILE_DISC, /* the row at ceil(f * n) in value order */
	GPUOPS_AGG_PERCENTILE_CONT, /* the rows at floor and ceil of f * (n - 1) */
	GPUOPS_AGG_SUMSQ_INT		/* exact sums of integers (128 bits) and of their
								 * squares (192 bits) */
} GpuopsAggKind;

/* Kinds that need each group's rows in value order (spec.order_agg). */
static inline int
gpuops_agg_ordered(GpuopsAggKind kind)
{
	return kind == GPUOPS_AGG_COUNT_DISTINCT || kind == GPUOPS_AGG_PERCENTILE_DISC ||
		kind == GPUOPS_AGG_PERCENTILE_CONT;
}

#define GPUOPS_MAX_AGGS 64

typedef struct GpuopsAggSpec
{
	int nkeys; /* 0: one group of every row (no GROUP BY) */
	GpuopsKeyKind keys[GPUOPS_MAX_SORT_KEYS];
	int naggs;
	GpuopsAggKind kinds[GPUOPS_MAX_AGGS];
	GpuopsKeyKind value_kinds[GPUOPS_MAX_AGGS]; /* the input's raw kind (not COUNT) */
	double fractions[GPUOPS_MAX_AGGS];			/* PERCENTILE_*: the fraction, 0 to 1 */
	int order_agg;								/* the ordered aggregates' shared input, or -1 */
	int order_desc;								/* their values ordered descending */
	uint64_t hash_capacity; /* hash strategy: the groups the planner expects, with
								 * room; 0: sort */

	/*
	 * Inputs the device computes: for an aggregate with programs[g] set (a
	 * value program over the batches' program columns, program_ncols of
	 * them), the program's value is its input, stored at its kind's width
	 * (INT2/4/8, FLOAT4/8 only); a NULL value is a NULL input.  Rows its
	 * bitmap already marks (FILTER) are not evaluated.  The programs may
	 * stop (RECHECK) only where PostgreSQL raises an error: the first such
	 * row, in row order, is stats.recheck_row, for the caller to evaluate
	 * with PostgreSQL (the aggregation's results are then meaningless).
	 */
	const GpuopsExprProgram *programs[GPUOPS_MAX_AGGS];
	int program_ncols;
} GpuopsAggSpec;

/*
 * One batch of rows: raw values at their kind's width and null bitmaps (NULL
 * when none).  An aggregate's bitmap also marks rows its FILTER rejects;
 * COUNT reads only the bitmap.  Every batch but the last has a multiple of 8
 * rows.
 */
typedef struct GpuopsAggBatch
{
	uint32_t nrows;
	const void *keys[GPUOPS_MAX_SORT_KEYS];
	const uint8_t *key_nulls[GPUOPS_MAX_SORT_KEYS];
	const void *values[GPUOPS_MAX_AGGS]; /* NULL for a computed input */
	const uint8_t *value_nulls[GPUOPS_MAX_AGGS];
	GpuopsExprColumns inputs; /* the programs' columns (spec.program_ncols) */
} GpuopsAggBatch;

/* One aggregate's state in one group. */
typedef struct GpuopsAggResult
{
	uint64_t count;	 /* inputs counted (COUNT_DISTINCT: distinct values) */
	uint64_t sum_lo; /* SUM_INT, SUMSQ_INT: the sum's low and high 64 bits */
	int64_t sum_hi;
	uint64_t sum2_lo;  /* SUMSQ_INT: the sum of squares (unsigned), low, */
	uint64_t sum2_hi;  /* middle */
	uint64_t sum2_top; /* and high 64 bits */
	double sx;		   /* FLOAT: sum (N is count) */
	double sxx;		   /* FLOAT: sum of squared deviations */
	uint64_t row;	   /* MIN/MAX, PERCENTILE_*: the row holding the value */
	uint64_t row2;	   /* PERCENTILE_CONT: the upper row (== row when one) */
	uint32_t overflow; /* FLOAT: finite inputs gave an infinite sum */
} GpuopsAggResult;

typedef struct GpuopsAggStats
{
	uint64_t rows;
	uint64_t groups;
	uint32_t key_words;		/* 64-bit words per packed group key */
	uint32_t sort_bits;		/* key bits the radix sorts examined */
	uint32_t hashed;		/* aggregated by the hash strategy */
	uint32_t hash_overflow; /* hash strategy asked for, more groups than its
								 * capacity: sorted instead */
	uint64_t hash_capacity; /* the capacity it had */
	double copy_ms;
	double kernel_ms;
	uint64_t device_bytes;		/* peak */
	uint64_t recheck_row;		/* the first row a program stopped at, or
								 * GPUOPS_AGG_NO_RECHECK */
	uint64_t bytes_from_device; /* copied device -> host (gpuops_device.h) */
} GpuopsAggStats;

#define GPUOPS_AGG_NO_RECHECK (~(uint64_t) 0)

typedef struct GpuopsAgg GpuopsAgg;

/*
 * agg_capacity: the most rows one aggregation takes under the device budget
 * (both backends derive it alike, agg_common.hpp); larger inputs are
 * aggregated in chunks whose groups the caller merges.
 * agg_begin (total rows known) -> agg_add (batches, in row order) ->
 * agg_finish (groups formed, states computed) -> agg_groups (per group its
 * first row, and naggs results, group after group; valid until agg_end) ->
 * agg_end (always).
 */
typedef struct GpuopsAggBackend
{
	const char *name;
	GpuopsStatus (*agg_capacity)(const GpuopsSettings *settings, const GpuopsAggSpec *spec,
								 uint64_t *rows) GPUOPS_NOEXCEPT;
	GpuopsStatus (*agg_begin)(const GpuopsSettings *settings, const GpuopsAggSpec *spec,
							  uint64_t nrows, GpuopsAgg **agg) GPUOPS_NOEXCEPT;
	GpuopsStatus (*agg_add)(GpuopsAgg *agg, const GpuopsAggBatch *batch) GPUOPS_NOEXCEPT;
	GpuopsStatus (*agg_finish)(GpuopsAgg *agg, uint64_t *ngroups) GPUOPS_NOEXCEPT;
	GpuopsStatus (*agg_groups)(GpuopsAgg *agg, const uint64_t **group_rows,
							   const GpuopsAggResult **results) GPUOPS_NOEXCEPT;
	void (*agg_stats)(const GpuopsAgg *agg, GpuopsAggStats *stats) GPUOPS_NOEXCEPT;
	void (*agg_end)(GpuopsAgg *agg) GPUOPS_NOEXCEPT;
} GpuopsAggBackend;

extern const GpuopsAggBackend *gpuops_cuda_agg_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsAggBackend *gpuops_cpu_agg_backend(void) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_AGG_H */
