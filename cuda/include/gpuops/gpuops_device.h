/*
 * gpuops_device.h
 *    The one interface between the PostgreSQL side (src/) and the device
 *    layer (cuda/).
 *
 * Plain C structs, status codes and noexcept entry points only: the device
 * layer never includes a PostgreSQL header and never raises a PostgreSQL
 * error, and the PostgreSQL side never sees a C++ exception or a CUDA type.
 * Turning a status into an ereport happens in exactly one place on the
 * PostgreSQL side (src/core/device.cpp).
 *
 * Two backends implement the same operations: CUDA, and a CPU twin that runs
 * the same batch algorithms on the host (used for gpuops.device = cpu and as
 * the fallback when the device fails).  Each operation is reached through a
 * GpuopsBackend table of function pointers, chosen by the caller.
 */
#ifndef GPUOPS_DEVICE_H
#define GPUOPS_DEVICE_H

#include <stddef.h>
#include <stdint.h>

/* small helpers usable from host code, and from kernels when nvcc compiles */
#ifdef __CUDACC__
#define GPUOPS_INLINE static inline __host__ __device__
#else
#define GPUOPS_INLINE static inline
#endif

#ifdef __cplusplus
#define GPUOPS_NOEXCEPT noexcept
extern "C" {
#else
#define GPUOPS_NOEXCEPT
#endif

typedef enum GpuopsStatus
{
	GPUOPS_OK = 0,
	GPUOPS_PENDING,				/* asynchronous work not finished yet */
	GPUOPS_ERR_NO_DEVICE,		/* no usable GPU (none present, driver missing) */
	GPUOPS_ERR_OUT_OF_MEMORY,	/* device or pinned memory exhausted / over budget */
	GPUOPS_ERR_DEVICE,			/* kernel launch/execution or copy failed */
	GPUOPS_ERR_UNSUPPORTED,		/* the request is outside what the backend can do */
	GPUOPS_ERR_INTERNAL,		/* a bug: bad arguments, broken invariant */
	GPUOPS_ERR_CANCELED			/* the caller's interrupt check asked to stop */
} GpuopsStatus;

/*
 * Interrupts.  The device layer never sees PostgreSQL; instead its long
 * work (host loops of the CPU backend and of the host-side helpers, waits
 * for the device, for a staging buffer or for the CUDA context) calls
 * `check` now and then, on the thread that registered it only, and when
 * it returns nonzero stops, frees what it holds and returns
 * GPUOPS_ERR_CANCELED.  The caller then raises the pending interrupt (the
 * statement's cancel, timeout or the process's termination) once the
 * call has returned.  A kernel already launched runs to its end (work is
 * issued in batches, so that is short).  NULL: never stop.
 */
typedef int (*GpuopsInterruptCheck) (void);
extern void gpuops_set_interrupt_check(GpuopsInterruptCheck check) GPUOPS_NOEXCEPT;

/* Failures a superuser can force (gpuops.fault_injection). */
typedef enum GpuopsFault
{
	GPUOPS_FAULT_NONE = 0,
	GPUOPS_FAULT_NO_DEVICE,
	GPUOPS_FAULT_OUT_OF_MEMORY,
	GPUOPS_FAULT_KERNEL_ERROR
} GpuopsFault;

/* Per-backend-process settings, copied from GUCs before each operation. */
typedef struct GpuopsSettings
{
	size_t		pinned_pool_bytes;	/* pinned staging pool, allocated once */
	size_t		batch_bytes;	/* one staging buffer */
	int			streams;		/* CUDA streams for copy/kernel overlap */
	size_t		device_memory_limit;	/* 0 = 90% of the device's memory */
	uint32_t	device_share;	/* > 1: this many processes of one parallel query
								 * use the device; each gets that part of the limit */
	GpuopsFault fault;			/* injected failure, GPUOPS_FAULT_NONE normally */
} GpuopsSettings;

typedef struct GpuopsDeviceInfo
{
	int			gpu_available;	/* 1 when a usable GPU was found */
	char		reason[256];	/* why not, when gpu_available == 0 */
	char		name[256];
	int			cc_major;
	int			cc_minor;
	int			multiprocessors;
	uint64_t	total_memory;
	uint64_t	free_memory;
	int			driver_version; /* CUDA encoding: 1000 * major + 10 * minor */
	int			runtime_version;
} GpuopsDeviceInfo;

/*
 * Device expressions: a PostgreSQL expression compiled (src/expr/device_expr.cpp)
 * into a short program that the CUDA kernels and the CPU twin interpret
 * alike (expr_eval.hpp), so no code is generated at run time.
 *
 * Values are 64-bit words with a null flag: integers, date, time and the
 * timestamps as sign-extended int64, bool as 0/1, float4 and float8 as
 * double (a float4 is exact as a double; float4 arithmetic rounds to float
 * after each step, as PostgreSQL's does), a numeric as an integer and the
 * power of ten it is scaled by (expr_eval.hpp), or as "a value the device
 * does not hold" (NaN, the infinities, too many digits).  The program is
 * postfix over a small stack, with jumps for AND/OR short-circuits and
 * CASE, in the order PostgreSQL's executor evaluates.  An operation PostgreSQL would raise an
 * error for (overflow, division by zero, a date out of range) or that the
 * program cannot decide exactly stops the evaluation with
 * GPUOPS_EXPR_RECHECK: the caller then evaluates that row with
 * PostgreSQL's own expression, which raises PostgreSQL's own error (or not,
 * where its evaluation never reaches it).
 */
#define GPUOPS_EXPR_MAX_STEPS 256
#define GPUOPS_EXPR_MAX_CONSTS 128
#define GPUOPS_EXPR_MAX_STACK 16
#define GPUOPS_EXPR_MAX_LOCALS 8
#define GPUOPS_EXPR_MAX_COLS 16	/* columns read, per side */

typedef enum GpuopsExprOp
{
	GPUOPS_EOP_OUTER = 0,		/* push outer column `arg` */
	GPUOPS_EOP_INNER,			/* push inner column `arg` */
	GPUOPS_EOP_CONST,			/* push constant `arg` */
	GPUOPS_EOP_CMP,				/* b, a -> bool; sub: GpuopsExprCmp; type: INT or FLOAT */
	GPUOPS_EOP_ADD,				/* b, a -> a op b; type: INT (width: sub) or FLOAT (sub 4/8) */
	GPUOPS_EOP_SUB,
	GPUOPS_EOP_MUL,
	GPUOPS_EOP_DIV,
	GPUOPS_EOP_MOD,				/* INT and NUM */
	GPUOPS_EOP_NEG,				/* a -> -a */
	GPUOPS_EOP_ABS,
	GPUOPS_EOP_TO_INT,			/* a (type: its kind) -> integer of width sub */
	GPUOPS_EOP_TO_FLOAT,		/* a (type: its kind) -> float of width sub (4/8) */
	GPUOPS_EOP_DATE_PLI,		/* date, int4 -> date (date_pli); sub 1: minus (date_mii) */
	GPUOPS_EOP_DATE_MI,			/* date, date -> int4 (date_mi) */
	GPUOPS_EOP_TS_PL,			/* timestamp, int64 microseconds -> timestamp; sub 1: minus */
	GPUOPS_EOP_TS_MI,			/* timestamp, timestamp -> their difference in microseconds:
								 * an interval's span (interval_cmp_value) */
	GPUOPS_EOP_DATE_TS,			/* date -> timestamp (date2timestamp); sub 1: for a
								 * comparison, where a date past the timestamps' range
								 * sorts above every finite timestamp, below infinity */
	GPUOPS_EOP_NOT,
	GPUOPS_EOP_AND,				/* b, a -> a AND b (three-valued) */
	GPUOPS_EOP_OR,
	GPUOPS_EOP_JUMP_IF_FALSE,	/* top is FALSE: jump to arg, keeping it */
	GPUOPS_EOP_JUMP_IF_TRUE,	/* top is TRUE: jump to arg, keeping it */
	GPUOPS_EOP_JUMP_UNLESS_TRUE,	/* pop; not TRUE (FALSE or NULL): jump to arg */
	GPUOPS_EOP_JUMP,
	GPUOPS_EOP_IS_NULL,			/* sub 1: IS NOT NULL */
	GPUOPS_EOP_BOOL_TEST,		/* sub: GpuopsExprBoolTest */
	GPUOPS_EOP_STORE,			/* local `arg` = top (kept) */
	GPUOPS_EOP_LOAD,			/* push local `arg` */
	GPUOPS_EOP_POP,
	GPUOPS_EOP_PUSH_NULL,
	GPUOPS_EOP_TO_NUM,			/* integer -> numeric (int4_numeric and kin) */
	GPUOPS_EOP_NUM_ROUND		/* numeric -> numeric(arg, sub): apply_typmod's rounding
								 * to scale sub, and its precision check */
} GpuopsExprOp;

typedef enum GpuopsExprCmp
{
	GPUOPS_CMP_EQ = 0,
	GPUOPS_CMP_NE,
	GPUOPS_CMP_LT,
	GPUOPS_CMP_LE,
	GPUOPS_CMP_GT,
	GPUOPS_CMP_GE,
	GPUOPS_CMP_DISTINCT			/* IS DISTINCT FROM: NULLs compare, result never NULL */
} GpuopsExprCmp;

typedef enum GpuopsExprBoolTest
{
	GPUOPS_BT_IS_TRUE = 0,
	GPUOPS_BT_IS_NOT_TRUE,
	GPUOPS_BT_IS_FALSE,
	GPUOPS_BT_IS_NOT_FALSE
} GpuopsExprBoolTest;

typedef enum GpuopsExprType
{
	GPUOPS_ET_INT = 0,			/* int2/int4/int8, date, time, timestamp(tz), bool */
	GPUOPS_ET_FLOAT,			/* float4, float8 */
	GPUOPS_ET_NUM				/* numeric (expr_eval.hpp: a scaled integer) */
} GpuopsExprType;

typedef struct GpuopsExprStep
{
	uint8_t		op;				/* GpuopsExprOp */
	uint8_t		type;			/* GpuopsExprType of the operands */
	uint8_t		sub;			/* comparison, width (2/4/8) or variant */
	uint8_t		pad;
	int32_t		arg;			/* column, constant, local or jump target */
} GpuopsExprStep;

typedef struct GpuopsExprProgram
{
	int32_t		nsteps;
	int32_t		nconsts;
	GpuopsExprStep steps[GPUOPS_EXPR_MAX_STEPS];
	uint64_t	consts[GPUOPS_EXPR_MAX_CONSTS];
	uint8_t		const_null[GPUOPS_EXPR_MAX_CONSTS];
} GpuopsExprProgram;

/* What a program says about a row (or a pair of rows). */
typedef enum GpuopsExprResult
{
	GPUOPS_EXPR_FALSE = 0,		/* FALSE or NULL */
	GPUOPS_EXPR_TRUE,
	GPUOPS_EXPR_RECHECK			/* PostgreSQL must evaluate this one */
} GpuopsExprResult;

/*
 * Columns a program reads, one side's: per column, nrows words and a null
 * byte per row (1 = NULL), or no null array when none is NULL.
 */
typedef struct GpuopsExprColumns
{
	int			ncols;
	uint64_t	nrows;
	const uint64_t *words[GPUOPS_EXPR_MAX_COLS];
	const uint8_t *nulls[GPUOPS_EXPR_MAX_COLS];
} GpuopsExprColumns;

/*
 * Sort key kinds.  Each key column is staged raw (its values at the width
 * below, plus a null bitmap) and becomes, on the device, one null word and
 * one or two value words: 64-bit unsigned integers whose order is
 * PostgreSQL's order for the type (key_normalize.hpp).
 */
typedef enum GpuopsKeyKind
{
	GPUOPS_KEY_INT2 = 0,		/* int2 */
	GPUOPS_KEY_INT4,			/* int4, date */
	GPUOPS_KEY_INT8,			/* int8, time, timestamp, timestamptz */
	GPUOPS_KEY_FLOAT4,			/* NaN above +Infinity, -0 == 0 */
	GPUOPS_KEY_FLOAT8,
	GPUOPS_KEY_BOOL,
	GPUOPS_KEY_UUID,			/* 16 bytes, compared as unsigned bytes */
	GPUOPS_KEY_INTERVAL,		/* PostgreSQL Interval, compared by total span */
	GPUOPS_KEY_BYTES16,			/* a 16-byte prefix, zero padded (C-collation text) */
	GPUOPS_KEY_NUMERIC_ABBREV,	/* PostgreSQL's 64-bit abbreviated numeric key: its
								 * signed order is the reverse of the values' */
	GPUOPS_KEY_ABBREV_UNSIGNED	/* a PostgreSQL abbreviated key compared as an
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

typedef struct GpuopsSortKey
{
	GpuopsKeyKind kind;
	int			descending;
	int			nulls_first;
} GpuopsSortKey;

typedef struct GpuopsSortSpec
{
	int			nkeys;
	GpuopsSortKey keys[GPUOPS_MAX_SORT_KEYS];
	/*
	 * > 0: report which sorted rows equal their predecessor in the first
	 * tie_words key words (through the first key the device sees only a
	 * prefix of; the caller re-sorts those runs)
	 */
	uint32_t	tie_words;

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
	int			program_ncols;
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
	uint64_t	rows;
	uint32_t	batches;
	uint32_t	key_words;		/* 64-bit words per normalized key */
	uint32_t	runs;			/* sorted runs merged (over the memory budget: > 1) */
	uint32_t	sort_passes;	/* radix sort passes (words whose values differ) */
	uint32_t	sort_bits;		/* key bits the radix sorts actually examined */
	double		copy_ms;
	double		kernel_ms;
	uint64_t	device_bytes;	/* peak device memory held by the operation */
} GpuopsStats;

/*
 * A staging buffer handed out by a backend for the caller to fill: per key,
 * capacity_rows values at the kind's raw width and a null bitmap (bit i of
 * byte i/8 set = row i is NULL; a NULL row's value bytes are ignored).
 * capacity_rows is a multiple of 8.
 */
typedef struct GpuopsStageBuffer
{
	void	   *values[GPUOPS_MAX_SORT_KEYS];
	uint8_t    *nulls[GPUOPS_MAX_SORT_KEYS];
	/* the program columns (spec.program_ncols): a word and a null byte per row */
	uint64_t   *input_words[GPUOPS_EXPR_MAX_COLS];
	uint8_t    *input_nulls[GPUOPS_EXPR_MAX_COLS];
	uint32_t	capacity_rows;
} GpuopsStageBuffer;

typedef struct GpuopsSort GpuopsSort;	/* opaque, owned by the backend */

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
 * Every function except sort_end returns a status; after a failure the
 * message is available from last_error() until the next call.
 */
typedef struct GpuopsBackend
{
	const char *name;			/* "cuda" or "cpu" */
	GpuopsStatus (*probe) (GpuopsDeviceInfo *info) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_begin) (const GpuopsSettings *settings,
								const GpuopsSortSpec *spec,
								GpuopsSort **sort) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_stage) (GpuopsSort *sort, GpuopsStageBuffer *buf) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_submit) (GpuopsSort *sort, uint32_t nrows) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_finish) (GpuopsSort *sort) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_poll) (GpuopsSort *sort) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_result) (GpuopsSort *sort, uint32_t *order,
								 uint64_t nrows) GPUOPS_NOEXCEPT;
	GpuopsStatus (*sort_ties) (GpuopsSort *sort, uint8_t *ties,
							   uint64_t nrows) GPUOPS_NOEXCEPT;
	void		(*sort_stats) (const GpuopsSort *sort, GpuopsStats *stats) GPUOPS_NOEXCEPT;
	void		(*sort_end) (GpuopsSort *sort) GPUOPS_NOEXCEPT;
	/* the first row (in submission order) a key program stopped at, or GPUOPS_SORT_NO_RECHECK */
	GpuopsStatus (*sort_recheck) (GpuopsSort *sort, uint64_t *row) GPUOPS_NOEXCEPT;
	/*
	 * Computed key `key`'s values of rows [first, first + n) in submission
	 * order (first a multiple of 8): at its kind's width into values, and
	 * as bits 0..n-1 of the bitmap nulls (its other bits are kept).
	 */
	GpuopsStatus (*sort_values) (GpuopsSort *sort, int key, uint64_t first, uint32_t n,
								 void *values, uint8_t *nulls) GPUOPS_NOEXCEPT;
} GpuopsBackend;

/*
 * Hash join (key-pointer, like the sort): build rows and probe rows are
 * numbered in the order their keys are added; only key words cross the bus
 * and only (probe row, build row) pairs come back.  A key column is given as
 * 64-bit words (integers sign-extended, so int2/int4/int8 compare across
 * types) plus a null bitmap; rows with a NULL key never match.  The pairs
 * are candidates with equal key hashes (64-bit): the caller re-checks the
 * join clauses, so a hash collision cannot produce a wrong row.
 *
 * Algorithm (both backends): the build side's (hash, row) pairs are radix
 * sorted, equal hashes form a directory of (hash, first, count); each probe
 * row binary-searches the directory, the counts are prefix-summed (count
 * then write: the output size is exact), and every output pair is found by
 * its own thread from the prefix sums, so one key matching half the build
 * side does not serialize on one thread (skew).
 */
#define GPUOPS_MAX_JOIN_KEYS 8

typedef struct GpuopsJoinKeys
{
	int			nkeys;
	uint64_t	nrows;
	const uint64_t *words[GPUOPS_MAX_JOIN_KEYS];	/* per key, nrows words */
	const uint8_t *nulls[GPUOPS_MAX_JOIN_KEYS]; /* per key bitmap, or NULL */
} GpuopsJoinKeys;

/*
 * A probe's pairs, in probe row order, come in windows of at most the pairs
 * the budget holds: join_probe returns the first, join_next_pairs the next
 * ones while `more` is set.  A probe row's pairs may span two windows.
 */
typedef struct GpuopsJoinPairs
{
	uint64_t	npairs;
	const uint32_t *probe_rows; /* valid until the next call or join_end */
	const uint32_t *build_rows;
	int			more;			/* 1: join_next_pairs has more of this probe */
} GpuopsJoinPairs;

typedef struct GpuopsJoinStats
{
	uint64_t	build_rows;
	uint64_t	probe_rows;
	uint64_t	pairs;
	uint32_t	probe_batches;
	uint32_t	windows;		/* pair windows beyond each probe's first */
	uint64_t	directory;		/* distinct build hashes */
	double		copy_ms;
	double		kernel_ms;
	uint64_t	device_bytes;	/* peak */
} GpuopsJoinStats;

typedef struct GpuopsJoin GpuopsJoin;

/*
 * join_begin -> join_build (any number of times) -> join_build_finish ->
 * join_probe (any number of times, each followed by join_next_pairs while
 * pairs.more) -> join_end (always).  join_capacity: the most build rows
 * (with non-NULL keys) one build holds under the device budget, 0 when
 * unlimited; larger build sides are partitioned by the caller.
 * join_probe_rows: the most rows one probe takes (a multiple of 8).  Both
 * backends derive it, and the window size, from the same budget
 * (join_hash.hpp), so they partition alike and return the same pairs in
 * the same order.
 */
typedef struct GpuopsJoinLookup GpuopsJoinLookup;

typedef struct GpuopsJoinBackend
{
	const char *name;
	GpuopsStatus (*join_begin) (const GpuopsSettings *settings, int nkeys,
								GpuopsJoin **join) GPUOPS_NOEXCEPT;
	GpuopsStatus (*join_build) (GpuopsJoin *join, const GpuopsJoinKeys *keys) GPUOPS_NOEXCEPT;
	GpuopsStatus (*join_build_finish) (GpuopsJoin *join) GPUOPS_NOEXCEPT;
	GpuopsStatus (*join_probe) (GpuopsJoin *join, const GpuopsJoinKeys *keys,
								GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	GpuopsStatus (*join_next_pairs) (GpuopsJoin *join, GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	uint64_t	(*join_capacity) (const GpuopsJoin *join) GPUOPS_NOEXCEPT;
	uint32_t	(*join_probe_rows) (const GpuopsJoin *join) GPUOPS_NOEXCEPT;
	void		(*join_stats) (const GpuopsJoin *join, GpuopsJoinStats *stats) GPUOPS_NOEXCEPT;
	void		(*join_end) (GpuopsJoin *join) GPUOPS_NOEXCEPT;

	/*
	 * Shared build (parallel plans, join_service.h): after build_finish,
	 * the directory's size and a checksum of its hashes; and lookups, which
	 * give each probe row its directory entry (or -1) and its number of
	 * build rows (0 without a match), and write no pairs.
	 * A lookup object has its own stream and buffers, allocated by
	 * lookup_begin, and only reads the directory: lookup may run on another
	 * thread while the join's other calls run, until lookup_end (which
	 * comes before join_end).  Lookups on one object are serialized.
	 */
	GpuopsStatus (*join_directory) (GpuopsJoin *join, uint64_t *ndir,
									uint64_t *checksum) GPUOPS_NOEXCEPT;
	GpuopsStatus (*lookup_begin) (GpuopsJoin *join, uint32_t max_rows,
								  GpuopsJoinLookup **lookup) GPUOPS_NOEXCEPT;
	GpuopsStatus (*lookup) (GpuopsJoinLookup *lookup, const GpuopsJoinKeys *keys,
							int64_t *slots, uint32_t *counts) GPUOPS_NOEXCEPT;
	void		(*lookup_end) (GpuopsJoinLookup *lookup) GPUOPS_NOEXCEPT;
} GpuopsJoinBackend;

/*
 * A probe whose rows' directory entries are known (a shared build's
 * lookup): the CPU backend's join_probe without the search.  For a join of
 * gpuops_cpu_join_backend() only; its windows continue with join_next_pairs.
 */
extern GpuopsStatus gpuops_cpu_join_probe_slots(GpuopsJoin *join, const int64_t *slots,
												uint64_t nrows,
												GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;

/*
 * A probe whose rows' match counts are known (a shared build's lookup) and
 * whose build rows are never read (no inner column is needed and unmatched
 * inner rows are not returned): pairs with build row 0, as many per probe
 * row as it has matches.  The join (of gpuops_cpu_join_backend()) needs no
 * build; its windows continue with join_next_pairs.
 */
extern GpuopsStatus gpuops_cpu_join_probe_counts(GpuopsJoin *join, const uint32_t *counts,
												 uint64_t nrows,
												 GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;

extern const GpuopsJoinBackend *gpuops_cuda_join_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsJoinBackend *gpuops_cpu_join_backend(void) GPUOPS_NOEXCEPT;

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
	int			nkeys;			/* 0: one group of every row (no GROUP BY) */
	GpuopsKeyKind keys[GPUOPS_MAX_SORT_KEYS];
	int			naggs;
	GpuopsAggKind kinds[GPUOPS_MAX_AGGS];
	GpuopsKeyKind value_kinds[GPUOPS_MAX_AGGS];	/* the input's raw kind (not COUNT) */
	double		fractions[GPUOPS_MAX_AGGS]; /* PERCENTILE_*: the fraction, 0 to 1 */
	int			order_agg;		/* the ordered aggregates' shared input, or -1 */
	int			order_desc;		/* their values ordered descending */
	uint64_t	hash_capacity;	/* hash strategy: the groups the planner expects, with
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
	int			program_ncols;
} GpuopsAggSpec;

/*
 * One batch of rows: raw values at their kind's width and null bitmaps (NULL
 * when none).  An aggregate's bitmap also marks rows its FILTER rejects;
 * COUNT reads only the bitmap.  Every batch but the last has a multiple of 8
 * rows.
 */
typedef struct GpuopsAggBatch
{
	uint32_t	nrows;
	const void *keys[GPUOPS_MAX_SORT_KEYS];
	const uint8_t *key_nulls[GPUOPS_MAX_SORT_KEYS];
	const void *values[GPUOPS_MAX_AGGS];	/* NULL for a computed input */
	const uint8_t *value_nulls[GPUOPS_MAX_AGGS];
	GpuopsExprColumns inputs;	/* the programs' columns (spec.program_ncols) */
} GpuopsAggBatch;

/* One aggregate's state in one group. */
typedef struct GpuopsAggResult
{
	uint64_t	count;			/* inputs counted (COUNT_DISTINCT: distinct values) */
	uint64_t	sum_lo;			/* SUM_INT, SUMSQ_INT: the sum's low and high 64 bits */
	int64_t		sum_hi;
	uint64_t	sum2_lo;		/* SUMSQ_INT: the sum of squares (unsigned), low, */
	uint64_t	sum2_hi;		/* middle */
	uint64_t	sum2_top;		/* and high 64 bits */
	double		sx;				/* FLOAT: sum (N is count) */
	double		sxx;			/* FLOAT: sum of squared deviations */
	uint64_t	row;			/* MIN/MAX, PERCENTILE_*: the row holding the value */
	uint64_t	row2;			/* PERCENTILE_CONT: the upper row (== row when one) */
	uint32_t	overflow;		/* FLOAT: finite inputs gave an infinite sum */
} GpuopsAggResult;

typedef struct GpuopsAggStats
{
	uint64_t	rows;
	uint64_t	groups;
	uint32_t	key_words;		/* 64-bit words per packed group key */
	uint32_t	sort_bits;		/* key bits the radix sorts examined */
	uint32_t	hashed;			/* aggregated by the hash strategy */
	uint32_t	hash_overflow;	/* hash strategy asked for, more groups than its
								 * capacity: sorted instead */
	uint64_t	hash_capacity;	/* the capacity it had */
	double		copy_ms;
	double		kernel_ms;
	uint64_t	device_bytes;	/* peak */
	uint64_t	recheck_row;	/* the first row a program stopped at, or
								 * GPUOPS_AGG_NO_RECHECK */
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
	GpuopsStatus (*agg_capacity) (const GpuopsSettings *settings, const GpuopsAggSpec *spec,
								  uint64_t *rows) GPUOPS_NOEXCEPT;
	GpuopsStatus (*agg_begin) (const GpuopsSettings *settings, const GpuopsAggSpec *spec,
							   uint64_t nrows, GpuopsAgg **agg) GPUOPS_NOEXCEPT;
	GpuopsStatus (*agg_add) (GpuopsAgg *agg, const GpuopsAggBatch *batch) GPUOPS_NOEXCEPT;
	GpuopsStatus (*agg_finish) (GpuopsAgg *agg, uint64_t *ngroups) GPUOPS_NOEXCEPT;
	GpuopsStatus (*agg_groups) (GpuopsAgg *agg, const uint64_t **group_rows,
								const GpuopsAggResult **results) GPUOPS_NOEXCEPT;
	void		(*agg_stats) (const GpuopsAgg *agg, GpuopsAggStats *stats) GPUOPS_NOEXCEPT;
	void		(*agg_end) (GpuopsAgg *agg) GPUOPS_NOEXCEPT;
} GpuopsAggBackend;

extern const GpuopsAggBackend *gpuops_cuda_agg_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsAggBackend *gpuops_cpu_agg_backend(void) GPUOPS_NOEXCEPT;


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
	int			column;			/* inner program column; -1: no index */
	int			is_float;
	int			has_lower;		/* column > lower (lower_strict) or >= lower */
	int			lower_strict;
	int			has_upper;		/* column < upper (upper_strict) or <= upper */
	int			upper_strict;
	GpuopsExprProgram lower;
	GpuopsExprProgram upper;
} GpuopsNestLoopIndex;

typedef struct GpuopsNestLoopSpec
{
	GpuopsExprProgram program;
	int			outer_ncols;
	int			inner_ncols;
	int			first_only;
	GpuopsNestLoopIndex index;
} GpuopsNestLoopSpec;

typedef struct GpuopsNestLoopStats
{
	uint64_t	inner_rows;
	uint64_t	outer_rows;
	uint64_t	pairs_tested;
	uint64_t	pairs;			/* pairs returned (TRUE or RECHECK) */
	uint64_t	rechecks;
	uint32_t	probes;
	uint32_t	blocks;			/* inner blocks loaded */
	uint32_t	windows;		/* pair windows beyond each probe's first */
	double		copy_ms;
	double		kernel_ms;
	uint64_t	device_bytes;	/* peak */
} GpuopsNestLoopStats;

typedef struct GpuopsNestLoop GpuopsNestLoop;

/*
 * nl_begin -> (nl_inner -> (nl_probe -> nl_next_pairs while more)*)* ->
 * nl_end (always).  nl_inner replaces the inner block.
 */
typedef struct GpuopsNestLoopBackend
{
	const char *name;
	GpuopsStatus (*nl_begin) (const GpuopsSettings *settings, const GpuopsNestLoopSpec *spec,
							  GpuopsNestLoop **nl) GPUOPS_NOEXCEPT;
	GpuopsStatus (*nl_inner) (GpuopsNestLoop *nl, const GpuopsExprColumns *cols) GPUOPS_NOEXCEPT;
	GpuopsStatus (*nl_probe) (GpuopsNestLoop *nl, const GpuopsExprColumns *outer,
							  GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	GpuopsStatus (*nl_next_pairs) (GpuopsNestLoop *nl, GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	uint64_t	(*nl_capacity) (const GpuopsNestLoop *nl) GPUOPS_NOEXCEPT;
	uint32_t	(*nl_probe_rows) (const GpuopsNestLoop *nl) GPUOPS_NOEXCEPT;
	void		(*nl_stats) (const GpuopsNestLoop *nl, GpuopsNestLoopStats *stats) GPUOPS_NOEXCEPT;
	void		(*nl_end) (GpuopsNestLoop *nl) GPUOPS_NOEXCEPT;
} GpuopsNestLoopBackend;

extern const GpuopsNestLoopBackend *gpuops_cuda_nestloop_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsNestLoopBackend *gpuops_cpu_nestloop_backend(void) GPUOPS_NOEXCEPT;

/*
 * Pair filter: a device program (the join clauses that compile) tested on
 * the candidate pairs a hash or merge join produced, so that PostgreSQL
 * builds and checks only the pairs that pass.  pf_side loads one side's
 * columns, numbered as the pairs number that side's rows (and replaces
 * what was loaded for it); pf_apply gives each pair a GpuopsExprResult.
 */
typedef struct GpuopsPairFilterSpec
{
	GpuopsExprProgram program;
	int			outer_ncols;
	int			inner_ncols;
} GpuopsPairFilterSpec;

typedef struct GpuopsPairFilter GpuopsPairFilter;

typedef struct GpuopsPairFilterBackend
{
	const char *name;
	GpuopsStatus (*pf_begin) (const GpuopsSettings *settings, const GpuopsPairFilterSpec *spec,
							  GpuopsPairFilter **pf) GPUOPS_NOEXCEPT;
	GpuopsStatus (*pf_side) (GpuopsPairFilter *pf, int side, const GpuopsExprColumns *cols) GPUOPS_NOEXCEPT;
	GpuopsStatus (*pf_apply) (GpuopsPairFilter *pf, const uint32_t *outer_rows,
							  const uint32_t *inner_rows, uint64_t npairs,
							  uint8_t *results) GPUOPS_NOEXCEPT;
	void		(*pf_stats) (const GpuopsPairFilter *pf, uint64_t *pairs, double *ms) GPUOPS_NOEXCEPT;
	void		(*pf_end) (GpuopsPairFilter *pf) GPUOPS_NOEXCEPT;
} GpuopsPairFilterBackend;

extern const GpuopsPairFilterBackend *gpuops_cuda_pairfilter_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsPairFilterBackend *gpuops_cpu_pairfilter_backend(void) GPUOPS_NOEXCEPT;

/*
 * Merge join (sort-merge, He et al.): both sides' key columns are sorted on
 * the device and merged with merge path, so every thread does the same
 * share of the merge however the keys are distributed.  Keys are 64-bit
 * words whose unsigned order is the keys' order and whose equality is the
 * join's equality (the caller maps values: integers offset by 2^63, floats
 * by their IEEE order with -0 as 0 and every NaN as one value), plus a
 * null bitmap per key; a row with a NULL key matches nothing and sorts
 * after the others of its key, as ORDER BY ... NULLS LAST does.  A NULL
 * key's word must be 0, so that NULLs tie in every backend's sort.
 *
 * Both sorts are stable.  Two merge-path passes give each outer row the
 * first and the end of its equal run on the inner side; the run lengths
 * are prefix-summed (count then write) and each output pair is written by
 * its own thread.  Pairs come in the outer side's key order (ties in row
 * order), each outer row's inner rows in key then row order, in windows as
 * the hash join's; outer rows with no pair are left out (mj_outer_order
 * gives the whole outer order, so the caller can place them).
 */
typedef struct GpuopsMergeJoinStats
{
	uint64_t	outer_rows;
	uint64_t	inner_rows;
	uint64_t	pairs;
	uint32_t	windows;		/* pair windows beyond the first */
	uint32_t	sort_passes;	/* radix sort passes, both sides */
	double		copy_ms;
	double		kernel_ms;
	uint64_t	device_bytes;	/* peak */
} GpuopsMergeJoinStats;

typedef struct GpuopsMergeJoin GpuopsMergeJoin;

/*
 * mj_begin -> mj_side(0: outer) and mj_side(1: inner), each once with all
 * of that side's rows -> mj_join (the first window) -> mj_next_pairs while
 * more -> mj_end (always).  mj_join with pairs NULL only merges and
 * counts: the number of pairs is then mj_stats' `pairs`, and no window or
 * outer order is made (a count(*) over the join needs nothing else).
 * mj_capacity: the most rows of both sides together one merge join holds
 * under the device budget (0: no limit).
 */
typedef struct GpuopsMergeJoinBackend
{
	const char *name;
	GpuopsStatus (*mj_begin) (const GpuopsSettings *settings, int nkeys,
							  GpuopsMergeJoin **mj) GPUOPS_NOEXCEPT;
	GpuopsStatus (*mj_side) (GpuopsMergeJoin *mj, int side, const GpuopsJoinKeys *keys) GPUOPS_NOEXCEPT;
	GpuopsStatus (*mj_join) (GpuopsMergeJoin *mj, GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	GpuopsStatus (*mj_next_pairs) (GpuopsMergeJoin *mj, GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	GpuopsStatus (*mj_outer_order) (GpuopsMergeJoin *mj, const uint32_t **order) GPUOPS_NOEXCEPT;
	uint64_t	(*mj_capacity) (const GpuopsMergeJoin *mj) GPUOPS_NOEXCEPT;
	void		(*mj_stats) (const GpuopsMergeJoin *mj, GpuopsMergeJoinStats *stats) GPUOPS_NOEXCEPT;
	void		(*mj_end) (GpuopsMergeJoin *mj) GPUOPS_NOEXCEPT;
} GpuopsMergeJoinBackend;

extern const GpuopsMergeJoinBackend *gpuops_cuda_mergejoin_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsMergeJoinBackend *gpuops_cpu_mergejoin_backend(void) GPUOPS_NOEXCEPT;

extern const GpuopsBackend *gpuops_cuda_backend(void) GPUOPS_NOEXCEPT;

/*
 * Is a usable GPU present?  Creates no CUDA context (for the planner); when
 * not, gpuops_last_error() says why.  The probe's first CUDA call starts the
 * driver, which takes over a second when many processes do so at once and
 * cannot be interrupted, so it runs on a helper thread: -1 while it runs
 * (the caller waits where a cancel can end the wait, and asks again), then
 * 1 (yes) or 0 (no).
 */
extern int	gpuops_cuda_present_poll(void) GPUOPS_NOEXCEPT;

/*
 * Starts creating the process's CUDA context, streams and pinned pool on a
 * helper thread, so that a node's first device call finds them ready
 * instead of waiting for them after reading its input (about 0.5 s in a
 * backend, more when parallel workers start at once).  Does nothing once
 * started or done.  The thread makes CUDA runtime calls only; any failure
 * is left for the first device call to meet again and report.
 * gpuops_cuda_prewarm_wait joins it (each device call does first; call it
 * before the process exits).
 */
extern void gpuops_cuda_prewarm(const GpuopsSettings *settings) GPUOPS_NOEXCEPT;
extern void gpuops_cuda_prewarm_wait(void) GPUOPS_NOEXCEPT;
/*
 * Is the prewarm thread still creating the context (1)?  Creating one takes
 * seconds when many processes do at once: the caller waits for it where
 * it can be cancelled, polling this, before its first device call.
 */
extern int	gpuops_cuda_prewarm_pending(void) GPUOPS_NOEXCEPT;

/*
 * Between transactions, when no query of the process holds device memory:
 * gives the stream-ordered pool's cached blocks back to the device and,
 * with release_context, everything else as well (pinned pool, streams, the
 * CUDA context itself), so that other backends can have the device; the
 * next device call starts it again.  Returns 1 when no context is left
 * (none was ever made, or it was released), 0 when one stays.  Nothing
 * happens after a sticky device failure (the session keeps reporting it),
 * or while the helper thread still makes or drops the context.  The
 * release itself runs on the helper thread (the driver takes seconds when
 * many processes make or drop contexts at once); the next device call, or
 * gpuops_cuda_prewarm_wait, waits for it.  may_wait = 0 (at
 * an abort, where a cancelled query's kernels may still run) never waits
 * for the device: blocks freed but not yet reached on their stream stay
 * cached until a later call.
 */
extern int	gpuops_cuda_idle(int release_context, int may_wait) GPUOPS_NOEXCEPT;

/* The GPU's memory in bytes (0 without a usable GPU); creates no context. */
extern uint64_t gpuops_cuda_total_memory(void) GPUOPS_NOEXCEPT;
extern const GpuopsBackend *gpuops_cpu_backend(void) GPUOPS_NOEXCEPT;

/*
 * One engine, CUDA or its CPU twin: every operator's backend of that
 * implementation in one table, so that the PostgreSQL side chooses an
 * engine once (gpuops.device, a device session) and every node takes its
 * operator from the same choice.
 */
typedef struct GpuopsDevice
{
	const char *name;			/* "cuda" or "cpu" */
	const GpuopsBackend *sort;
	const GpuopsJoinBackend *hashjoin;
	const GpuopsNestLoopBackend *nestloop;
	const GpuopsMergeJoinBackend *mergejoin;
	const GpuopsAggBackend *agg;
	const GpuopsPairFilterBackend *pairfilter;
} GpuopsDevice;

extern const GpuopsDevice *gpuops_cuda_device(void) GPUOPS_NOEXCEPT;
extern const GpuopsDevice *gpuops_cpu_device(void) GPUOPS_NOEXCEPT;

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
	char	   *out;
	uint32_t	width;
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

typedef size_t (*GpuopsValueSize) (const char *value);

typedef struct GpuopsValuePack
{
	uint64_t	bytes;
	uint64_t	range_bytes[GPUOPS_PACK_RANGES];
} GpuopsValuePack;

extern GpuopsStatus gpuops_host_value_bytes(char *const *ptrs, const uint8_t *nulls, uint64_t n,
											GpuopsValueSize value_size,
											GpuopsValuePack *pack) GPUOPS_NOEXCEPT;
extern GpuopsStatus gpuops_host_pack_values(char **ptrs, const uint8_t *nulls, uint64_t n,
											GpuopsValueSize value_size,
											const GpuopsValuePack *pack,
											char *arena) GPUOPS_NOEXCEPT;

/* Message of the last failure in this process (thread-local), never NULL. */
extern const char *gpuops_last_error(void) GPUOPS_NOEXCEPT;

/* Build description, e.g. "CUDA 13.0, sm_90". */
extern const char *gpuops_build_info(void) GPUOPS_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* GPUOPS_DEVICE_H */
