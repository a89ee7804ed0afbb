/*
 * gpuops_query.h
 *    The device engine's C interface, one part: the query block backend
 *    (GpuopsQueryBackend) behind GpuQuery, the node that runs a whole
 *    scan -> filter -> GROUP BY aggregation on the device and hands back
 *    only the groups (doc/gpuquery.md).
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_QUERY_H
#define GPUOPS_QUERY_H

#include "gpuops_base.h"
#include "gpuops_expr.h"
#include "gpuops_agg.h"

GPUOPS_C_BEGIN

/*
 * A streaming aggregation: rows arrive in batches of expression columns
 * (gpuops_expr.h's words and null bytes, as the host decoded them from heap
 * pages), never to be seen again.  For each row the backend evaluates the
 * qual program; a row it passes finds its group in a table keyed by the
 * packed group key (below), which persists across batches, and every
 * aggregate's state there takes the row's argument.  Only the groups come
 * back: their packed keys and their states.
 *
 * Unlike GpuopsAggBackend, no row number survives: a group is its key's
 * words and a MIN/MAX state holds the value, not a row.
 *
 * Exactness.  Counts and integer and numeric sums are exact (128 bits), so
 * they do not depend on the order the rows are taken in; MIN/MAX compare
 * values exactly (FLOAT words in a total order, so that the atomics' order
 * cannot matter: -0 just below 0, every NaN one NaN above +Infinity;
 * PostgreSQL treats -0 and 0 as equal, so GpuQuery does not offer float
 * min/max).  FLOAT sums are rounded in whatever order the rows are
 * added (the caller uses them only where PostgreSQL's own parallel plans
 * would, gpuops.enable_float_aggs).
 *
 * Escape.  Where the device cannot decide a row as PostgreSQL would (a
 * program stops with RECHECK: an error PostgreSQL would raise, a value it
 * does not hold such as a NaN numeric; a numeric argument it cannot scale
 * exactly to the aggregate's num_scale), the backend records the smallest
 * such row number (rows are numbered from 0 in the order added, across
 * batches) in stats.escape_row and what it was in stats.escape_what.  The
 * groups are then incomplete; the caller runs the block another way
 * (PostgreSQL's plan).  A backend may stop doing work once a row escaped.
 */

#define GPUOPS_QUERY_MAX_COLS GPUOPS_EXPR_MAX_COLS /* one column set, every program */
#define GPUOPS_QUERY_MAX_KEYS 16
#define GPUOPS_QUERY_MAX_KEY_WORDS 33 /* the null word and 2 words per key */

/* How a group key's value is held. */
typedef enum GpuopsQueryKeyKind
{
	GPUOPS_QKEY_INT = 0, /* an integer-like expression word (int2/4/8, date,
							  * timestamp, bool: int64, sign-extended) */
	GPUOPS_QKEY_FLOAT,	 /* a float expression word (a double's bits):
							  * -0 equals 0 and every NaN equals every NaN, as
							  * PostgreSQL's float equality */
	GPUOPS_QKEY_BYTES16	 /* a bytes column: at most 16 bytes, zero padded
							  * (short text under a deterministic collation,
							  * bpchar's trailing blanks removed by the host) */
} GpuopsQueryKeyKind;

/*
 * A group key: the value of a column (col >= 0) or of a value program
 * (program != NULL, col < 0).  A BYTES16 key is always a column of the
 * batch's bytes16 arrays.
 */
typedef struct GpuopsQueryKey
{
	GpuopsQueryKeyKind kind;
	int col;
	const GpuopsExprProgram *program;
} GpuopsQueryKey;

/* What an aggregate does with its argument. */
typedef enum GpuopsQueryAggKind
{
	GPUOPS_QAGG_COUNT = 0, /* count(*) (no argument) or count(x): non-NULL arguments */
	GPUOPS_QAGG_SUM_INT,   /* exact sum of integer words: result sum_lo/sum_hi, count */
	GPUOPS_QAGG_SUM_NUM,   /* exact sum of numeric words, each scaled to
							* num_scale (value x 10^num_scale, an integer): result
							* sum_lo/sum_hi, count; a word not known, with a scale
							* above num_scale, or scaled to 2^80 or more, escapes */
	GPUOPS_QAGG_SUM_FLOAT, /* sum of float words: result sx, count */
	GPUOPS_QAGG_MIN,	   /* the least argument: result row = its word, count > 0 */
	GPUOPS_QAGG_MAX		   /* when any (INT and FLOAT words; MIN/MAX take no numeric) */
} GpuopsQueryAggKind;

/* The argument's word type (gpuops_expr.h's GpuopsExprType). */
typedef struct GpuopsQueryAgg
{
	GpuopsQueryAggKind kind;
	GpuopsExprType arg_type;		 /* INT, FLOAT or NUM */
	int arg_col;					 /* the argument is this column, or -1 */
	const GpuopsExprProgram *arg;	 /* or this value program; both unset: count(*) */
	const GpuopsExprProgram *filter; /* FILTER (WHERE ...): a bool program, or NULL */
	int num_scale;					 /* SUM_NUM: the scale the sum is kept at (0..38) */
} GpuopsQueryAgg;

/*
 * Dimensions (star and snowflake joins).  After the qual, each row looks
 * up dimension after dimension by the word of its key column (a batch
 * column, or a column an earlier dimension added); a row whose key is
 * NULL or has no match is dropped (an inner join).  A match adds the
 * dimension row's payload columns, which every later program reads as
 * columns: batch columns are [0, ncols), dimension 0's payload columns
 * follow, then dimension 1's, and so on, at most GPUOPS_QUERY_MAX_COLS in
 * all.  Payload columns hold words (no bytes columns).  Then the join qual
 * (the clauses over several tables) runs on the joined row, then the keys
 * and the aggregates.
 *
 * A dimension's keys are the words of its rows' join key (the caller drops
 * rows with a NULL key).  An inner dimension's must be distinct: a
 * repeated key would multiply fact rows, which the backend does not do; it
 * escapes (GPUOPS_QESC_DIM_KEY, row 0) instead, at begin.
 *
 * A semi or anti dimension (EXISTS, IN, NOT EXISTS) only tests: a semi
 * one keeps the rows with a match, an anti one those without (a NULL key
 * has none), once each however often the key repeats; it adds no payload
 * columns, and later dimensions do not look up through it.
 */
#define GPUOPS_QUERY_MAX_DIMS 8

typedef enum GpuopsQueryDimKind
{
	GPUOPS_QDIM_INNER = 0,
	GPUOPS_QDIM_SEMI,
	GPUOPS_QDIM_ANTI
} GpuopsQueryDimKind;

typedef struct GpuopsQueryDim
{
	GpuopsQueryDimKind kind;
	int key_col;		  /* the column looked up: < ncols, or an earlier dimension's */
	uint64_t nrows;		  /* rows (0: every row is dropped) */
	const uint64_t *keys; /* nrows words */
	int npayload;		  /* columns it adds */
	const uint64_t *words[GPUOPS_QUERY_MAX_COLS]; /* per payload column, nrows words */
	const uint8_t *nulls[GPUOPS_QUERY_MAX_COLS];  /* and null bytes, or NULL: none */
} GpuopsQueryDim;

/*
 * Heap pages as a batch (GpuopsQueryPages), deformed by the backend: the
 * caller walks the pages and decides visibility (PostgreSQL's rules), then
 * hands over the pages as stored and, per row, the line pointer of a
 * visible tuple; the backend turns each into the batch columns by the
 * tuple shape below, with the same words as the host's reader
 * (src/input/query_deform.cpp).  A value with no device form escapes at
 * its row, escape_index the column: GPUOPS_QESC_VALUE (compressed or
 * external), GPUOPS_QESC_LONG_TEXT (a text over 16 bytes).
 */
#define GPUOPS_QUERY_MAX_ATTS 128

typedef enum GpuopsQueryPageForm
{
	GPUOPS_QPF_INT = 0, /* an integer of attlen bytes, sign-extended (bool, date, ...) */
	GPUOPS_QPF_FLOAT4,	/* the double's bits */
	GPUOPS_QPF_FLOAT8,
	GPUOPS_QPF_NUMERIC,	 /* the expressions' numeric word */
	GPUOPS_QPF_TEXT16,	 /* a bytes column: at most 16 bytes, zero padded */
	GPUOPS_QPF_BPCHAR16, /* the same, trailing blanks removed */
	GPUOPS_QPF_TEXT_TEST /* a text of any length tested (tests[test[c]]): 0 or 1, NULL */
} GpuopsQueryPageForm;

/*
 * A test of one text column against constants (text_test.hpp evaluates
 * it, on the host reader's values and in the page deformer alike): = or
 * <> a constant, IN or NOT IN a list, LIKE or NOT LIKE a constant
 * pattern, under a deterministic collation (equal means equal bytes).
 * The caller compiles it (src/input/query_text_test.cpp).  Fixed-size and
 * pointer-free: it travels to parallel workers in shared memory.
 */
#define GPUOPS_QTT_BYTES 256	 /* the constants' bytes, all together */
#define GPUOPS_QTT_MAX_VALUES 32 /* an IN list's values */
#define GPUOPS_QUERY_MAX_TESTS 8 /* tests a tuple shape reads */

typedef enum GpuopsQueryTextTestKind
{
	GPUOPS_QTT_EQ_ANY = 0, /* equal to one of the values (=, IN; negated: <>, NOT IN) */
	GPUOPS_QTT_LIKE		   /* matches the pattern (LIKE; negated: NOT LIKE) */
} GpuopsQueryTextTestKind;

/* LIKE's pattern, compiled: per byte what it is */
enum
{
	GPUOPS_QTT_PAT_BYTE = 0, /* a literal byte (escaped ones too) */
	GPUOPS_QTT_PAT_ANY,		 /* %: any run of characters */
	GPUOPS_QTT_PAT_ONE		 /* _: one character */
};

typedef struct GpuopsQueryTextTest
{
	uint8_t kind;		/* GpuopsQueryTextTestKind */
	uint8_t trim;		/* bpchar's =: trailing blanks do not count, on either side */
	uint8_t negate;		/* <>, NOT IN, NOT LIKE */
	uint8_t null_value; /* the list holds a NULL: no match is NULL, not false */
	uint8_t utf8;		/* LIKE's _ is one UTF-8 character (else one byte) */
	uint8_t nvalues;	/* EQ_ANY: values; LIKE: 1, the pattern */
	uint16_t off[GPUOPS_QTT_MAX_VALUES + 1]; /* value v is bytes[off[v] .. off[v + 1]) */
	char bytes[GPUOPS_QTT_BYTES];
	uint8_t pat[GPUOPS_QTT_BYTES]; /* LIKE: per pattern byte its GPUOPS_QTT_PAT_* */
} GpuopsQueryTextTest;

typedef struct GpuopsQueryTuple
{
	int natts;								 /* attributes walked: up to the last one read */
	int16_t attlen[GPUOPS_QUERY_MAX_ATTS];	 /* > 0, or -1 (varlena); no cstring */
	uint8_t attalign[GPUOPS_QUERY_MAX_ATTS]; /* in bytes: 1, 2, 4 or 8 */
	int16_t attr[GPUOPS_QUERY_MAX_COLS];	 /* per batch column: its attribute, 0-based */
	uint8_t form[GPUOPS_QUERY_MAX_COLS];	 /* GpuopsQueryPageForm */
	/* the column in tuples stored before its attribute was added */
	uint8_t missing_null[GPUOPS_QUERY_MAX_COLS];
	uint8_t missing_escape[GPUOPS_QUERY_MAX_COLS]; /* such a tuple escapes: why
													* (GpuopsQueryEscape), or 0 */
	uint64_t missing_word[GPUOPS_QUERY_MAX_COLS][2];
	/* GPUOPS_QPF_TEXT_TEST columns: their tests (copied by query_begin) */
	uint8_t test[GPUOPS_QUERY_MAX_COLS]; /* per such column its test, < ntests */
	int ntests;
	GpuopsQueryTextTest tests[GPUOPS_QUERY_MAX_TESTS];
} GpuopsQueryTuple;

/*
 * GpuopsQueryPages.index: the page is one of pages, not at base.  No buffer
 * number has it; only the CUDA backend sets it, in its own copy of a batch.
 */
#define GPUOPS_QUERY_PAGE_IN_PAGES 0x80000000u

typedef struct GpuopsQueryPages
{
	uint32_t npages;
	uint32_t page_size;		   /* BLCKSZ */
	const uint8_t *pages;	   /* npages x page_size bytes (unless base is set) */
	const uint32_t *first_row; /* npages + 1: page p holds rows [first_row[p], first_row[p + 1]) */
	const uint16_t *lineno;	   /* per row: its tuple's line pointer (1-based) in its page */
	/*
	 * Pages read in place: page p is the page_size bytes at base + index[p]
	 * x page_size (pages unused; the CUDA backend's own deforming of pages
	 * in the page service's device cache also reads, where index[p] has
	 * GPUOPS_QUERY_PAGE_IN_PAGES set, page index[p] minus that bit of
	 * pages: the service's staging area).  For the CUDA
	 * backend base lies in memory mapped with gpuops_cuda_host_map, or the
	 * page service gathers them (GpuopsQuerySpec.pages_service); they are
	 * read before query_add returns, unless may_hold.
	 */
	const uint8_t *base;
	const uint32_t *index;
	/*
	 * For the page service's device cache (gpuops_page_service.h), pages
	 * read in place only: their relation (tablespace, database, file
	 * number), per page its block number and its LSN, read under the
	 * buffer's share lock after its tuples were listed.  lsn NULL, or a
	 * page's 0: not to be cached.
	 */
	uint32_t rel[3];
	const uint32_t *block;
	const uint64_t *lsn;
	/*
	 * The caller keeps these pages (their pins), first_row, lineno and index
	 * as they are until stats.pages_held is 0 after a later query_add or
	 * query_finish: the backend may then return before it has read them
	 * (the CUDA backend, when the page service gathers them: it asks for
	 * them and reads them at the next add, so that the service gathers
	 * while the caller fetches the next batch; the CPU twin holds every
	 * such batch in place, so that the caller's side runs without a GPU).
	 * Only the last batch added is ever held; an empty batch (nrows 0)
	 * makes the backend read it.
	 */
	uint8_t may_hold;
} GpuopsQueryPages;

typedef struct GpuopsQuerySpec
{
	int ncols;								/* columns each batch carries */
	uint8_t bytes16[GPUOPS_QUERY_MAX_COLS]; /* column c is a bytes column (bytes16[c]) */
	const GpuopsExprProgram *qual;			/* the rows kept (TRUE), or NULL: every row */
	int ndims;								/* dimensions, looked up in order (above) */
	GpuopsQueryDim dims[GPUOPS_QUERY_MAX_DIMS];
	const GpuopsExprProgram *join_qual; /* on the joined row, or NULL: every joined row */
	int nkeys;							/* 0: one group (no GROUP BY) */
	GpuopsQueryKey keys[GPUOPS_QUERY_MAX_KEYS];
	int naggs;
	GpuopsQueryAgg aggs[GPUOPS_MAX_AGGS];
	uint64_t group_capacity;	   /* the groups the planner expects (a hint: the
							  * table grows) */
	const GpuopsQueryTuple *tuple; /* batches may come as pages (copied by query_begin) */
	/*
	 * Pages read in place (GpuopsQueryPages.base: shared buffers) are
	 * gathered by the page service through this claimed channel (copied by
	 * query_begin); NULL: by the process's own mapping.  The CUDA backend
	 * only: the CPU backend reads the pages where they lie.
	 */
	const struct GpuopsPageLink *pages_service;
} GpuopsQuerySpec;

/*
 * One batch: the spec's columns for nrows rows (cols.nrows == nrows; a
 * column's nulls may be NULL: none).  A bytes column's values are in
 * bytes16[c], two words (16 bytes) per row; its cols.words[c] is unused.
 * Every column of the spec is given when nrows > 0 (else query_add fails).
 * The caller may reuse every buffer once query_add returns (a held
 * batch's pages: once stats.pages_held says so); programs are
 * copied by query_begin.
 */
typedef struct GpuopsQueryBatch
{
	uint32_t nrows;
	GpuopsExprColumns cols;
	const uint64_t *bytes16[GPUOPS_QUERY_MAX_COLS];
	const GpuopsQueryPages *pages; /* or the rows as pages (the spec's tuple set):
									* cols.words, nulls and bytes16 unused */
} GpuopsQueryBatch;

/* What escaped (stats.escape_what). */
typedef enum GpuopsQueryEscape
{
	GPUOPS_QESC_NONE = 0,
	GPUOPS_QESC_QUAL,	   /* the qual program stopped */
	GPUOPS_QESC_KEY,	   /* a key program stopped */
	GPUOPS_QESC_FILTER,	   /* an aggregate's FILTER program stopped */
	GPUOPS_QESC_ARG,	   /* an argument program stopped, or a numeric
						 * argument could not be scaled */
	GPUOPS_QESC_DIM_KEY,   /* a dimension's keys repeat (escape_index: which) */
	GPUOPS_QESC_DIM_RANGE, /* a dimension's keys span every 64-bit word: the
							* CUDA backend has no free slot mark (escape_index) */
	GPUOPS_QESC_VALUE,	   /* a page's value is compressed or external (escape_index: the column) */
	GPUOPS_QESC_LONG_TEXT  /* a page's text value is over 16 bytes (escape_index: the column) */
} GpuopsQueryEscape;

#define GPUOPS_QUERY_NO_ESCAPE (~(uint64_t) 0)

typedef struct GpuopsQueryStats
{
	uint64_t rows;	 /* rows added */
	uint64_t passed; /* rows the qual, the dimensions and the join qual kept */
	uint64_t groups;
	uint64_t batches;
	uint64_t capacity;	/* the group table's slots at the end */
	uint32_t grows;		/* times the table grew */
	uint32_t key_words; /* words per packed key */
	double copy_ms;		/* host to device and back */
	double kernel_ms;
	uint64_t device_bytes; /* peak */
	uint64_t escape_row;   /* GPUOPS_QUERY_NO_ESCAPE, or the first row that escaped */
	GpuopsQueryEscape escape_what;
	int escape_index;			/* the key or aggregate it was, or -1 */
	uint64_t bytes_from_device; /* copied device -> host (gpuops_device.h) */
	uint64_t service_requests;	/* requests to the page service (pages_service) */
	double service_ms;			/* the waits for their answers */
	uint64_t service_pages;		/* pages they gathered */
	uint64_t service_cached;	/* ... of them from the service's device cache */
	uint32_t pages_held;		/* 1: the last batch added is still the backend's
								 * (GpuopsQueryPages.may_hold), its pages unread */
} GpuopsQueryStats;

typedef struct GpuopsQuery GpuopsQuery;

/*
 * The packed key (query_groups' key_words, stats.key_words words a group):
 * with nkeys > 0, word 0 has bit k set where key k is NULL; then each key's
 * value words in key order: INT one word (the int64), FLOAT one word (the
 * double's bits, -0 made 0 and NaN one canonical NaN), BYTES16 two words
 * (the 16 bytes, as stored in the batch).  A NULL key's value words are 0.
 * Two rows are in one group exactly when their packed keys are equal.
 * A group exists once a row of it passes the qual, whatever its
 * aggregates skip (FILTER, NULL arguments).  count(x) counts an unknown
 * numeric word (it is not NULL) without escaping.
 * With nkeys == 0 there are no key words and one group, or none when no
 * row passed the qual (the caller makes PostgreSQL's one row of an empty
 * plain aggregate itself).
 *
 * query_begin -> query_add (batches) -> query_finish (every state final;
 * *ngroups) -> query_groups (ngroups packed keys, and ngroups x naggs
 * results, group after group; valid until query_end; groups in no
 * particular order) -> query_end (always).  A batch after an escape may be
 * ignored.  Results are GpuopsAggResult: COUNT count; SUM_INT and SUM_NUM
 * count, sum_lo, sum_hi (two's complement 128 bits); SUM_FLOAT count, sx,
 * overflow (finite inputs, infinite sum); MIN/MAX count (inputs), row (the
 * value's word).
 */
typedef struct GpuopsQueryBackend
{
	const char *name;
	GpuopsStatus (*query_begin)(const GpuopsSettings *settings, const GpuopsQuerySpec *spec,
								GpuopsQuery **query) GPUOPS_NOEXCEPT;
	GpuopsStatus (*query_add)(GpuopsQuery *query, const GpuopsQueryBatch *batch) GPUOPS_NOEXCEPT;
	GpuopsStatus (*query_finish)(GpuopsQuery *query, uint64_t *ngroups) GPUOPS_NOEXCEPT;
	GpuopsStatus (*query_groups)(GpuopsQuery *query, const uint64_t **key_words,
								 const GpuopsAggResult **results) GPUOPS_NOEXCEPT;
	void (*query_stats)(const GpuopsQuery *query, GpuopsQueryStats *stats) GPUOPS_NOEXCEPT;
	void (*query_end)(GpuopsQuery *query) GPUOPS_NOEXCEPT;
} GpuopsQueryBackend;

extern const GpuopsQueryBackend *gpuops_cuda_query_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsQueryBackend *gpuops_cpu_query_backend(void) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_QUERY_H */
