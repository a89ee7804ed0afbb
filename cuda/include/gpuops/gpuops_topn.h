/*
 * gpuops_topn.h
 *    The device engine's C interface, one part: the top-N backend behind
 *    GpuTopN (ORDER BY ... LIMIT n read straight from a table's pages),
 *    which keeps the n first rows of a stream by their keys and hands back
 *    only a word per row that travels with it (the row's TID), so the
 *    rows themselves never leave the table until the n are known.
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_TOPN_H
#define GPUOPS_TOPN_H

#include "gpuops_base.h"
#include "gpuops_sort.h"

GPUOPS_C_BEGIN

/*
 * Rows arrive in batches of 64-bit words, a column per key (the query
 * reader's words: an int64 for integer-like types, a double's bits for
 * floats) and a payload word, never to be seen again.  The backend keeps
 * candidates: every row until it holds `capacity` of them, then it cuts
 * them to the `bound` first and from then on keeps only rows that come
 * strictly before the bound-th (the cut), cutting again whenever the
 * candidates fill up.  At the end it orders the candidates and returns
 * the payloads of the first min(bound, rows) in order.
 *
 * Order: each key is a null word and a value word (key_normalize.hpp), in
 * PostgreSQL's order for the type, DESC and NULLS FIRST / LAST as the spec
 * says; rows with equal keys in the order of their payloads (unsigned), so
 * the rows returned do not depend on the order they were added in.
 * GpuTopN's payload is the row's TID: among rows that tie at the bound-th,
 * the first in the table are kept, as PostgreSQL's serial bounded sort over
 * a sequential scan keeps the first it reads.
 */
#define GPUOPS_TOPN_MAX_KEYS 8

typedef struct GpuopsTopnSpec
{
	int nkeys;
	/* kind GPUOPS_KEY_INT8 (an int64 word) or GPUOPS_KEY_FLOAT8 (a double's bits) */
	GpuopsSortKey keys[GPUOPS_TOPN_MAX_KEYS];
	uint64_t bound;	   /* rows returned at most, > 0 */
	uint64_t capacity; /* candidates held before a cut: >= 2 x bound (the backend raises it) */
} GpuopsTopnSpec;

/* One batch: key k's words and null bytes (1 = NULL; nulls[k] NULL: none), and payloads. */
typedef struct GpuopsTopnBatch
{
	uint32_t nrows;
	const uint64_t *words[GPUOPS_TOPN_MAX_KEYS];
	const uint8_t *nulls[GPUOPS_TOPN_MAX_KEYS];
	const uint64_t *payload;
} GpuopsTopnBatch;

typedef struct GpuopsTopnStats
{
	uint64_t rows;	/* rows added */
	uint64_t kept;	/* rows that became candidates */
	uint32_t cuts;	/* times the candidates were cut to the bound (the final order included) */
	double copy_ms; /* host to device and back */
	double kernel_ms;
	uint64_t device_bytes;		/* peak */
	uint64_t bytes_from_device; /* copied device -> host (gpuops_device.h) */
} GpuopsTopnStats;

typedef struct GpuopsTopn GpuopsTopn;

/*
 * topn_begin -> topn_add (batches; the caller may reuse a batch's buffers
 * once it returns) -> topn_finish (*nrows: the rows returned) ->
 * topn_result (nrows payloads in order, valid until topn_end) -> topn_end
 * (always, after any failure too).
 */
typedef struct GpuopsTopnBackend
{
	const char *name;
	GpuopsStatus (*topn_begin)(const GpuopsSettings *settings, const GpuopsTopnSpec *spec,
							   GpuopsTopn **topn) GPUOPS_NOEXCEPT;
	GpuopsStatus (*topn_add)(GpuopsTopn *topn, const GpuopsTopnBatch *batch) GPUOPS_NOEXCEPT;
	GpuopsStatus (*topn_finish)(GpuopsTopn *topn, uint64_t *nrows) GPUOPS_NOEXCEPT;
	GpuopsStatus (*topn_result)(GpuopsTopn *topn, const uint64_t **payload) GPUOPS_NOEXCEPT;
	void (*topn_stats)(const GpuopsTopn *topn, GpuopsTopnStats *stats) GPUOPS_NOEXCEPT;
	void (*topn_end)(GpuopsTopn *topn) GPUOPS_NOEXCEPT;
} GpuopsTopnBackend;

extern const GpuopsTopnBackend *gpuops_cuda_topn_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsTopnBackend *gpuops_cpu_topn_backend(void) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_TOPN_H */
