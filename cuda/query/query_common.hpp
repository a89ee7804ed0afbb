/*
 * query_common.hpp
 *    What the query block backend's CUDA kernels and its CPU twin compute
 *    alike (gpuops_query.h): the spec checked and laid out flat, one row's
 *    qual and packed group key, one aggregate's input and its leaf value,
 *    the state words and their results.
 *
 * One source for both, so that a row takes the same path on each: the same
 * program is run at the same point (qual, then the keys in order, then per
 * aggregate its FILTER and its argument, the order PostgreSQL's hashed
 * aggregation evaluates them in), so the first thing that escapes in a row
 * is the same thing on both, and a group's key words and exact states are
 * the same bits.  The backends differ only in how a leaf reaches its state
 * (a plain add in row order, or 64-bit atomics).
 */
#ifndef GPUOPS_QUERY_COMMON_HPP
#define GPUOPS_QUERY_COMMON_HPP

#include <cstring>

#include "expr_eval.hpp"
#include "gpuops_device.h"
#include "hd.hpp"
#include "join_hash.hpp"

namespace gpuops {

/*
 * The spec as the kernels read it, by value (a kernel parameter): programs
 * by their index in one array (query_programs), -1 where none.
 */
struct QueryLayout
{
	int32_t ncols;	   /* batch columns */
	int32_t ncols_all; /* and the dimensions' payload columns after them */
	int32_t ndims;
	int32_t join_qual;					   /* program index, or -1 */
	int8_t col_dim[GPUOPS_QUERY_MAX_COLS]; /* a payload column's dimension, or -1 */
	int8_t col_pay[GPUOPS_QUERY_MAX_COLS]; /* and its place among that dimension's */
	int8_t dim_key_col[GPUOPS_QUERY_MAX_DIMS];
	int32_t nkeys;
	int32_t naggs;
	int32_t key_words;						  /* packed key words a group (0 without keys) */
	int32_t state_words;					  /* state words a group, every aggregate's */
	int32_t qual;							  /* program index, or -1 */
	int32_t nbytes;							  /* bytes columns */
	int8_t bytes_slot[GPUOPS_QUERY_MAX_COLS]; /* a bytes column's place among them, or -1 */
	uint8_t key_kind[GPUOPS_QUERY_MAX_KEYS];
	int8_t key_col[GPUOPS_QUERY_MAX_KEYS];
	int16_t key_prog[GPUOPS_QUERY_MAX_KEYS];
	uint8_t agg_kind[GPUOPS_MAX_AGGS];
	uint8_t arg_type[GPUOPS_MAX_AGGS];
	int8_t arg_col[GPUOPS_MAX_AGGS]; /* -1 with a program, or for count(*) */
	int16_t arg_prog[GPUOPS_MAX_AGGS];
	int16_t filter_prog[GPUOPS_MAX_AGGS];
	uint8_t num_scale[GPUOPS_MAX_AGGS];
	uint16_t state_off[GPUOPS_MAX_AGGS]; /* the aggregate's first state word */
};

/*
 * What a row's evaluation says: kQueryPass (go on), kQuerySkip (the qual,
 * or for one aggregate its FILTER, did not pass), or an escape code
 * (query_escape_code, kQueryEscape or more) naming what stopped.
 */
constexpr uint32_t kQueryPass = 0;
constexpr uint32_t kQuerySkip = 1;
constexpr uint32_t kQueryEscape = 256;

GPUOPS_HD uint32_t
query_escape_code(GpuopsQueryEscape what, int index)
{
	return (static_cast<uint32_t>(what) << 8) | static_cast<uint32_t>(index);
}

inline GpuopsQueryEscape
query_escape_what(uint32_t code)
{
	return static_cast<GpuopsQueryEscape>(code >> 8);
}

inline int
query_escape_index(uint32_t code)
{
	return query_escape_what(code) == GPUOPS_QESC_QUAL ? -1 : static_cast<int>(code & 0xff);
}

/* Words of each aggregate's state (query_state_init describes them). */
GPUOPS_HD int
query_state_words(int kind)
{
	switch (kind)
	{
		case GPUOPS_QAGG_COUNT:
			return 1;
		case GPUOPS_QAGG_MIN:
		case GPUOPS_QAGG_MAX:
			return 2;
		default:
			return 3;
	}
}

/*
 * A float key's word: -0 made 0 and every NaN one NaN, so that the words
 * are equal exactly where PostgreSQL's float equality holds.
 */
constexpr uint64_t kQueryCanonicalNaN = 0x7ff8000000000000ull;

GPUOPS_HD uint64_t
query_float_canonical(uint64_t w)
{
	if ((w & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (w & 0x000fffffffffffffull) != 0)
		return kQueryCanonicalNaN;
	return w == 0x8000000000000000ull ? 0 : w;
}

/*
 * MIN/MAX compare order words, whose unsigned order is the value's: an
 * INT's sign bit flipped; a FLOAT's canonical NaN above +Infinity (as
 * float8_cmp_internal), and -0 just below 0.  PostgreSQL holds -0 and 0
 * equal and returns the later row's on a tie, which no order of atomics
 * can reproduce; ordering -0 below 0 gives a result independent of the
 * order the rows are taken in, and PostgreSQL's own wherever a group's
 * least (greatest) values do not mix -0 and 0.
 */
GPUOPS_HD uint64_t
query_order_word(int arg_type, uint64_t w)
{
	const uint64_t sign = 0x8000000000000000ull;

	if (arg_type != GPUOPS_ET_FLOAT)
		return w ^ sign;
	if ((w & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (w & 0x000fffffffffffffull) != 0)
		w = kQueryCanonicalNaN;
	return (w & sign) ? ~w : (w | sign);
}

/* The value word back from an order word. */
GPUOPS_HD uint64_t
query_order_value(int arg_type, uint64_t o)
{
	const uint64_t sign = 0x8000000000000000ull;

	if (arg_type != GPUOPS_ET_FLOAT)
		return o ^ sign;
	return (o & sign) ? (o & ~sign) : ~o;
}

/*
 * A numeric word as an integer at scale S (the value x 10^S): false where
 * the device cannot hold it (not known, a scale above S, or 2^80 or more
 * in magnitude, which keeps 2^47 rows' sum within 128 bits).
 */
GPUOPS_HD bool
query_num_scaled(uint64_t w, int S, __int128 *out)
{
	const __int128 limit = static_cast<__int128>(1) << 80;
	int s = expr_num_scale(w);
	__int128 m, p;

	if (!expr_num_known(w) || s > S)
		return false;
	m = expr_num_mantissa(w);
	p = expr_pow10(S - s); /* S <= 38: 10^38 < 2^127 */
	if (m < 0)
		m = -m;
	/* |m| x p < 2^80, without the product's overflow */
	if (m != 0 && m > (limit - 1) / p)
		return false;
	*out = expr_num_mantissa(w) < 0 ? -(m * p) : m * p;
	return true;
}

/* 64-bit hash of a packed key (the empty key included) */
GPUOPS_HD uint64_t
query_hash(const uint64_t *key, int nwords)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int w = 0; w < nwords; w++)
	{
		h ^= key[w];
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 29);
}

/*
 * A dimension as the kernels and the twin look it up (query_dims.hpp
 * builds it): by the key's offset from the least key (direct: every key
 * within mask of min) or by open addressing over mask + 1 slots (keys[]),
 * idx[] holding the dimension row + 1, 0 where none.  Its payload:
 * column p's row r at words[p * nrows + r] (nulls likewise, or none).
 */
struct QueryDimView
{
	uint64_t min;
	uint64_t mask;
	const uint32_t *idx;
	const uint64_t *keys;
	const uint64_t *words;
	const uint8_t *nulls;
	uint64_t nrows;
	int32_t direct;
	int32_t kind; /* GpuopsQueryDimKind */
};

struct QueryDims
{
	QueryDimView d[GPUOPS_QUERY_MAX_DIMS];
};

/* One key word's slot hash (the dimensions' open addressing): the join tables' mix */
GPUOPS_HD uint64_t
query_dim_hash(uint64_t k)
{
	return mix64(k);
}

/* The dimension row whose key is k, or -1. */
GPUOPS_HD int64_t
query_dim_find(const QueryDimView &d, uint64_t k)
{
	if (d.direct)
	{
		uint64_t off = k - d.min;

		return off <= d.mask ? static_cast<int64_t>(d.idx[off]) - 1 : -1;
	}
	for (uint64_t pos = query_dim_hash(k) & d.mask;; pos = (pos + 1) & d.mask)
	{
		uint32_t v = d.idx[pos];

		if (v == 0)
			return -1;
		if (d.keys[pos] == k)
			return static_cast<int64_t>(v) - 1;
	}
}

/*
 * A batch row with the dimension rows it joined (at[d], for the
 * dimensions looked up so far): the payload columns read through them.
 */
template <class Row>
struct JoinedRow
{
	const Row &base;
	const QueryLayout &L;
	const QueryDimView *dims;
	const uint32_t *at;

	GPUOPS_HD uint64_t word(int c) const
	{
		if (c < L.ncols)
			return base.word(c);
		const QueryDimView &d = dims[L.col_dim[c]];
		return d.words[static_cast<uint64_t>(L.col_pay[c]) * d.nrows + at[L.col_dim[c]]];
	}
	GPUOPS_HD bool null(int c) const
	{
		if (c < L.ncols)
			return base.null(c);
		const QueryDimView &d = dims[L.col_dim[c]];
		return d.nulls != nullptr &&
			d.nulls[static_cast<uint64_t>(L.col_pay[c]) * d.nrows + at[L.col_dim[c]]] != 0;
	}
	GPUOPS_HD uint64_t bytes(int c, int j) const { return base.bytes(c, j); }
};

/* Runs program p on a row; with w set, its value too. */
template <class Row>
GPUOPS_HD GpuopsExprResult
query_eval(const GpuopsExprProgram &p, const Row &row, uint64_t *w = nullptr,
		   bool *isnull = nullptr)
{
	return expr_eval(p.steps, p.nsteps, p.consts, p.const_null, row, row, w, isnull);
}

/* A qual program (index q, or -1: none) on a row: kQueryPass, kQuerySkip or an escape. */
template <class Row>
GPUOPS_HD uint32_t
query_row_qual(int q, const GpuopsExprProgram *progs, const Row &row)
{
	GpuopsExprResult r;

	if (q < 0)
		return kQueryPass;
	r = query_eval(progs[q], row);
	if (r == GPUOPS_EXPR_RECHECK)
		return query_escape_code(GPUOPS_QESC_QUAL, 0);
	return r == GPUOPS_EXPR_TRUE ? kQueryPass : kQuerySkip;
}

/*
 * Whether a row joins: the qual on the batch row (first, as PostgreSQL's
 * scan evaluates it on every row), then each dimension's lookup (at[d]
 * set), then the join qual on the joined row.  kQueryPass, kQuerySkip or
 * an escape code.
 */
template <class Row>
GPUOPS_HD uint32_t
query_row_join(const QueryLayout &L, const GpuopsExprProgram *progs, const QueryDimView *dims,
			   const Row &row, uint32_t *at)
{
	uint32_t code = query_row_qual(L.qual, progs, row);
	JoinedRow<Row> jr{row, L, dims, at};

	if (code != kQueryPass || L.ndims == 0)
		return code;
	for (int d = 0; d < L.ndims; d++)
	{
		int c = L.dim_key_col[d];
		int64_t r = jr.null(c) ? -1 : query_dim_find(dims[d], jr.word(c));

		/* an anti dimension keeps what no row matches; it adds no column (at[d] unread) */
		if ((r >= 0) == (dims[d].kind == GPUOPS_QDIM_ANTI))
			return kQuerySkip;
		at[d] = r >= 0 ? static_cast<uint32_t>(r) : 0;
	}
	return query_row_qual(L.join_qual, progs, jr);
}

/*
 * The packed group key of a row that passed (gpuops_query.h's format):
 * kQueryPass with key[0, key_words) set, or an escape code.  Row gives
 * word(c), null(c) and bytes(c, j) (word j of a bytes column).
 */
template <class Row>
GPUOPS_HD uint32_t
query_row_key(const QueryLayout &L, const GpuopsExprProgram *progs, const Row &row, uint64_t *key)
{
	if (L.nkeys == 0)
		return kQueryPass;
	key[0] = 0;
	for (int k = 0, at = 1; k < L.nkeys; k++)
	{
		int c = L.key_col[k];
		bool isnull;
		uint64_t w = 0;

		if (L.key_kind[k] == GPUOPS_QKEY_BYTES16)
		{
			isnull = row.null(c);
			key[at++] = isnull ? 0 : row.bytes(c, 0);
			key[at++] = isnull ? 0 : row.bytes(c, 1);
		}
		else
		{
			if (L.key_prog[k] >= 0)
			{
				if (query_eval(progs[L.key_prog[k]], row, &w, &isnull) == GPUOPS_EXPR_RECHECK)
					return query_escape_code(GPUOPS_QESC_KEY, k);
			}
			else
			{
				isnull = row.null(c);
				w = row.word(c);
			}
			if (isnull)
				w = 0;
			else if (L.key_kind[k] == GPUOPS_QKEY_FLOAT)
				w = query_float_canonical(w);
			key[at++] = w;
		}
		if (isnull)
			key[0] |= 1ull << k;
	}
	return kQueryPass;
}

/*
 * What a row adds to aggregate a: kQuerySkip (its FILTER did not pass, or
 * the argument is NULL), an escape code, or kQueryPass with the leaf in
 * *lo, *hi (a sum's 128 bits) or *lo alone (a float sum's bits, an order
 * word); count(*) and count(x) need no value.
 */
template <class Row>
GPUOPS_HD uint32_t
query_row_leaf(const QueryLayout &L, const GpuopsExprProgram *progs, int a, const Row &row,
			   uint64_t *lo, uint64_t *hi)
{
	uint64_t w = 0;
	bool isnull = false;

	if (L.filter_prog[a] >= 0)
	{
		GpuopsExprResult r = query_eval(progs[L.filter_prog[a]], row);

		if (r == GPUOPS_EXPR_RECHECK)
			return query_escape_code(GPUOPS_QESC_FILTER, a);
		if (r != GPUOPS_EXPR_TRUE)
			return kQuerySkip;
	}
	if (L.arg_prog[a] >= 0)
	{
		if (query_eval(progs[L.arg_prog[a]], row, &w, &isnull) == GPUOPS_EXPR_RECHECK)
			return query_escape_code(GPUOPS_QESC_ARG, a);
	}
	else if (L.arg_col[a] >= 0)
	{
		isnull = row.null(L.arg_col[a]);
		w = row.word(L.arg_col[a]);
	}
	else
		return kQueryPass; /* count(*) */
	if (isnull)
		return kQuerySkip;
	*lo = w;
	*hi = 0;
	switch (L.agg_kind[a])
	{
		case GPUOPS_QAGG_SUM_INT:
			*hi = static_cast<int64_t>(w) < 0 ? ~0ull : 0;
			break;
		case GPUOPS_QAGG_SUM_NUM:
			{
				__int128 v;

				if (!query_num_scaled(w, L.num_scale[a], &v))
					return query_escape_code(GPUOPS_QESC_ARG, a);
				*lo = static_cast<uint64_t>(v);
				*hi = static_cast<uint64_t>(v >> 64);
				break;
			}
		case GPUOPS_QAGG_MIN:
		case GPUOPS_QAGG_MAX:
			*lo = query_order_word(L.arg_type[a], w);
			break;
		default:
			break;
	}
	return kQueryPass;
}

/*
 * A group's states, aggregate after aggregate (state_off):
 *   COUNT              [count]
 *   SUM_INT, SUM_NUM   [sum low, sum high (two's complement), count]
 *   SUM_FLOAT          [sum (a double's bits), count, overflow]
 *   MIN, MAX           [order word, count]
 * Every word starts 0 but a MIN's order word, which starts at its top.
 */
GPUOPS_HD void
query_state_init(const QueryLayout &L, uint64_t *s)
{
	for (int i = 0; i < L.state_words; i++)
		s[i] = 0;
	for (int a = 0; a < L.naggs; a++)
		if (L.agg_kind[a] == GPUOPS_QAGG_MIN)
			s[L.state_off[a]] = ~0ull;
}

/* (hi:lo) into a sum (s[1]:s[0]), modulo 2^128 */
GPUOPS_HD void
query_add128(uint64_t *s, uint64_t lo, uint64_t hi)
{
	uint64_t old = s[0];

	s[0] = old + lo;
	s[1] += hi + (s[0] < old ? 1 : 0);
}

/* float8pl's overflow check: finite operands, an infinite sum */
GPUOPS_HD bool
query_float_overflow(double a, double b, double sum)
{
	return isinf(sum) && !isinf(a) && !isinf(b);
}

/* A leaf into aggregate a's state s (the twin's: in row order, no atomics). */
GPUOPS_HD void
query_accumulate(const QueryLayout &L, int a, uint64_t lo, uint64_t hi, uint64_t *s)
{
	switch (L.agg_kind[a])
	{
		case GPUOPS_QAGG_COUNT:
			s[0]++;
			break;
		case GPUOPS_QAGG_SUM_INT:
		case GPUOPS_QAGG_SUM_NUM:
			query_add128(s, lo, hi);
			s[2]++;
			break;
		case GPUOPS_QAGG_SUM_FLOAT:
			{
				double x = expr_as_double(s[0]), v = expr_as_double(lo), r = x + v;

				if (query_float_overflow(x, v, r))
					s[2] = 1;
				s[0] = expr_from_double(r);
				s[1]++;
				break;
			}
		case GPUOPS_QAGG_MIN:
			s[0] = lo < s[0] ? lo : s[0];
			s[1]++;
			break;
		case GPUOPS_QAGG_MAX:
			s[0] = lo > s[0] ? lo : s[0];
			s[1]++;
			break;
		default:
			break;
	}
}

/* Aggregate a's state as the caller sees it (gpuops_query.h). */
inline void
query_result(const QueryLayout &L, int a, const uint64_t *s, GpuopsAggResult *r)
{
	memset(r, 0, sizeof(*r));
	switch (L.agg_kind[a])
	{
		case GPUOPS_QAGG_COUNT:
			r->count = s[0];
			break;
		case GPUOPS_QAGG_SUM_INT:
		case GPUOPS_QAGG_SUM_NUM:
			r->sum_lo = s[0];
			r->sum_hi = static_cast<int64_t>(s[1]);
			r->count = s[2];
			break;
		case GPUOPS_QAGG_SUM_FLOAT:
			r->sx = expr_as_double(s[0]);
			r->count = s[1];
			r->overflow = s[2] != 0 ? 1 : 0;
			break;
		default: /* MIN, MAX */
			r->count = s[1];
			r->row = s[1] != 0 ? query_order_value(L.arg_type[a], s[0]) : 0;
			break;
	}
}

/*
 * Checks a spec and lays it out: the programs in one array (each copied,
 * so the caller's may go once begin returns), their indices in *L.
 * Returns NULL or what is wrong.
 */
const char *query_layout(const GpuopsQuerySpec &spec, QueryLayout *L, GpuopsExprProgram *programs,
						 int *nprograms);

/*
 * A batch as query_add takes it (gpuops_query.h), by both backends: its
 * columns for the spec's layout, a tuple shape for a pages batch.  Fails
 * (GPUOPS_ERR_INTERNAL) with what is wrong.
 */
void query_check_batch(const QueryLayout &L, const GpuopsQueryBatch *b, bool has_shape,
					   bool finished);

/* The most programs a spec has: the quals, one per key, two per aggregate. */
constexpr int kQueryMaxPrograms = 2 + GPUOPS_QUERY_MAX_KEYS + 2 * GPUOPS_MAX_AGGS;

} /* namespace gpuops */

#endif
