/*
 * gpuops_nestloop.h
 *    The device engine's C interface, one part: the nested-loop join backend
 *    (GpuopsNestLoopBackend).
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_NESTLOOP_H
#define GPUOPS_NESTLOOP_H

#include "gpuops_base.h"
#include "gpuops_expr.h"
#include "gpuops_hashjoin.h"

GPUOPS_C_BEGIN

/*
 * Nested-loop join (He et al.'s blocked nested loop): every (outer, inner)
 * pair of rows is tested by a device program.  The inner side's columns
 * are loaded once (nl_inner, a block at a time when it is larger than the
 * budget: nl_capacity rows each); each batch of outer rows (at most
 * nl_probe_rows) is probed against it.  Pairs come back in nested-loop
 * order, outer row by outer row, each one's inner rows ascending, counted
 * then written exactly, in windows like the hash join's; an inner row
 * number with GPUOPS_NL_RECHECK set is a pair the program could not decide
 * (the caller evaluates it).  With first_only (SEMI and ANTI joins whose
 * every clause is in the program, so that a TRUE pair is final) an outer
 * row's pairs stop at its first TRUE pair (within each chunk of
 * nl_chunk_rows inner rows; the caller stops at the first overall).  Both
 * backends return the same pairs in the same order.
 */
#define GPUOPS_NL_RECHECK 0x80000000u

/*
 * Indexed nested loop (He et al.): when the predicate bounds one inner
 * column by values of the outer row (`i.x BETWEEN o.lo AND o.hi`, `i.t >=
 * o.t - 10`), each inner block is sorted on that column, and each outer
 * row tests only the inner rows between its bounds, found by binary
 * search.  The bounds are one-sided programs over the outer columns whose
 * value (top of stack) is compared with the column's words: integer order
 * for is_float 0, PostgreSQL's float order (NaN above everything, -0 ==
 * 0) for 1.  A NULL bound leaves no candidate (the comparison is NULL); a
 * bound the program cannot compute (RECHECK) makes every inner row of the
 * block a candidate, so the full program and PostgreSQL decide as without
 * the index.  Inner rows whose column is NULL are never in a range.  The
 * planner guarantees that no other clause can raise an error on the pairs
 * the range leaves out.  Candidates of an outer row come in the column's
 * order (ties in row order), in chunks of nl_chunk_rows; first_only stops
 * within each chunk as in the blocked loop.
 */
typedef struct GpuopsNestLoopIndex
{
	int column; /* inner program column; -1: no index */
	int is_float;
	int has_lower; /* column > lower (lower_strict) or >= lower */
	int lower_strict;
	int has_upper; /* column < upper (upper_strict) or <= upper */
	int upper_strict;
	GpuopsExprProgram lower;
	GpuopsExprProgram upper;
} GpuopsNestLoopIndex;

typedef struct GpuopsNestLoopSpec
{
	GpuopsExprProgram program;
	int outer_ncols;
	int inner_ncols;
	int first_only;
	GpuopsNestLoopIndex index;
} GpuopsNestLoopSpec;

typedef struct GpuopsNestLoopStats
{
	uint64_t inner_rows;
	uint64_t outer_rows;
	uint64_t pairs_tested;
	uint64_t pairs; /* pairs returned (TRUE or RECHECK) */
	uint64_t rechecks;
	uint32_t probes;
	uint32_t blocks;  /* inner blocks loaded */
	uint32_t windows; /* pair windows beyond each probe's first */
	double copy_ms;
	double kernel_ms;
	uint64_t device_bytes;		/* peak */
	uint64_t bytes_from_device; /* copied device -> host (gpuops_device.h) */
} GpuopsNestLoopStats;

typedef struct GpuopsNestLoop GpuopsNestLoop;

/*
 * nl_begin -> (nl_inner -> (nl_probe -> nl_next_pairs while more)*)* ->
 * nl_end (always).  nl_inner replaces the inner block.
 */
typedef struct GpuopsNestLoopBackend
{
	const char *name;
	GpuopsStatus (*nl_begin)(const GpuopsSettings *settings, const GpuopsNestLoopSpec *spec,
							 GpuopsNestLoop **nl) GPUOPS_NOEXCEPT;
	GpuopsStatus (*nl_inner)(GpuopsNestLoop *nl, const GpuopsExprColumns *cols) GPUOPS_NOEXCEPT;
	GpuopsStatus (*nl_probe)(GpuopsNestLoop *nl, const GpuopsExprColumns *outer,
							 GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	GpuopsStatus (*nl_next_pairs)(GpuopsNestLoop *nl, GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	uint64_t (*nl_capacity)(const GpuopsNestLoop *nl) GPUOPS_NOEXCEPT;
	uint32_t (*nl_probe_rows)(const GpuopsNestLoop *nl) GPUOPS_NOEXCEPT;
	void (*nl_stats)(const GpuopsNestLoop *nl, GpuopsNestLoopStats *stats) GPUOPS_NOEXCEPT;
	void (*nl_end)(GpuopsNestLoop *nl) GPUOPS_NOEXCEPT;
} GpuopsNestLoopBackend;

extern const GpuopsNestLoopBackend *gpuops_cuda_nestloop_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsNestLoopBackend *gpuops_cpu_nestloop_backend(void) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_NESTLOOP_H */
