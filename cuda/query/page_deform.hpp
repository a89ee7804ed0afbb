/*
 * page_deform.hpp
 *    A pages batch's rows turned into the batch columns (gpuops_query.h's
 *    GpuopsQueryPages and GpuopsQueryTuple): one row at a time, the same
 *    code in the CUDA kernel (a thread a row) and in the CPU twin.
 *
 * The words are those of the host's reader (src/input/query_deform.cpp's
 * ValueWords and DeformTuple): PostgreSQL's attribute walk (alignment,
 * the null bitmap, varlena lengths), integers sign-extended, floats as
 * the double's bits, numerics through stored_numeric_word, short text
 * zero padded, a text test's result (text_test.hpp).  The walk stops at
 * the last attribute a column reads.
 */
#ifndef GPUOPS_PAGE_DEFORM_HPP
#define GPUOPS_PAGE_DEFORM_HPP

#include "gpuops_query.h"
#include "heap_format.hpp"
#include "query_common.hpp"
#include "sorted_search.hpp"
#include "text_test.hpp"

namespace gpuops {

/* The tuple shape with the columns in attribute order (page_shape_init). */
struct PageShape
{
	GpuopsQueryTuple T;
	int ncols;
	int16_t order[GPUOPS_QUERY_MAX_COLS]; /* columns by attribute */
	int8_t bytes_slot[GPUOPS_QUERY_MAX_COLS];
};

/* Where rows' columns go: column c's row i at c * n + i (bytes: slot * n * 2 + 2 i). */
struct PageOut
{
	uint64_t *words;
	uint8_t *nulls;
	uint64_t *bytes;
	uint64_t n;
};

/* Checks a tuple shape and orders its columns; why it cannot, or nullptr. */
inline const char *
page_shape_init(const GpuopsQueryTuple &T, int ncols, const uint8_t *bytes16, PageShape *S)
{
	int nbytes = 0;

	if (T.natts < 1 || T.natts > GPUOPS_QUERY_MAX_ATTS || ncols < 0 ||
		ncols > GPUOPS_QUERY_MAX_COLS)
		return "a tuple shape out of range";
	for (int i = 0; i < T.natts; i++)
		if ((T.attlen[i] < 1 && T.attlen[i] != -1) ||
			(T.attalign[i] != 1 && T.attalign[i] != 2 && T.attalign[i] != 4 && T.attalign[i] != 8))
			return "an attribute the page reader cannot walk";
	if (T.ntests < 0 || T.ntests > GPUOPS_QUERY_MAX_TESTS)
		return "too many text tests";
	for (int t = 0; t < T.ntests; t++)
		if (T.tests[t].kind > GPUOPS_QTT_LIKE || T.tests[t].nvalues > GPUOPS_QTT_MAX_VALUES ||
			(T.tests[t].kind == GPUOPS_QTT_LIKE && T.tests[t].nvalues != 1) ||
			T.tests[t].off[T.tests[t].nvalues] > GPUOPS_QTT_BYTES)
			return "a text test out of range";
	S->T = T;
	S->ncols = ncols;
	for (int c = 0; c < ncols; c++)
	{
		bool bytes = T.form[c] == GPUOPS_QPF_TEXT16 || T.form[c] == GPUOPS_QPF_BPCHAR16;
		bool test = T.form[c] == GPUOPS_QPF_TEXT_TEST;

		if (T.attr[c] < 0 || T.attr[c] >= T.natts || T.form[c] > GPUOPS_QPF_TEXT_TEST ||
			bytes != (bytes16[c] != 0) || (test && T.test[c] >= T.ntests))
			return "a column the page reader cannot read";
		if (T.attlen[T.attr[c]] == -1
				? !(bytes || test || T.form[c] == GPUOPS_QPF_NUMERIC)
				: (bytes || test || T.form[c] == GPUOPS_QPF_NUMERIC ||
				   (T.form[c] == GPUOPS_QPF_INT && T.attlen[T.attr[c]] != 1 &&
					T.attlen[T.attr[c]] != 2 && T.attlen[T.attr[c]] != 4 &&
					T.attlen[T.attr[c]] != 8) ||
				   (T.form[c] == GPUOPS_QPF_FLOAT4 && T.attlen[T.attr[c]] != 4) ||
				   (T.form[c] == GPUOPS_QPF_FLOAT8 && T.attlen[T.attr[c]] != 8)))
			return "a column's form does not fit its attribute";
		S->bytes_slot[c] = static_cast<int8_t>(bytes ? nbytes++ : -1);
		S->order[c] = static_cast<int16_t>(c);
	}
	/* insertion sort by attribute, stable: a handful of columns */
	for (int i = 1; i < ncols; i++)
		for (int j = i; j > 0 && T.attr[S->order[j - 1]] > T.attr[S->order[j]]; j--)
		{
			int16_t t = S->order[j];

			S->order[j] = S->order[j - 1];
			S->order[j - 1] = t;
		}
	return nullptr;
}

GPUOPS_HD void
page_put(const PageShape &S, const PageOut &o, int c, uint64_t i, bool isnull, uint64_t w0,
		 uint64_t w1)
{
	o.nulls[c * o.n + i] = isnull ? 1 : 0;
	if (S.bytes_slot[c] >= 0)
	{
		uint64_t *b = o.bytes + (uint64_t) S.bytes_slot[c] * o.n * 2 + 2 * i;

		b[0] = isnull ? 0 : w0;
		b[1] = isnull ? 0 : w1;
	}
	else
		o.words[c * o.n + i] = isnull ? 0 : w0;
}

/*
 * The value at p (attribute length len; a varlena's header v) as column
 * c's words (*isnull: a text test's NULL): GPUOPS_QESC_NONE, or why it
 * has none.
 */
GPUOPS_HD GpuopsQueryEscape
page_value(const PageShape &S, int c, int16_t len, const uint8_t *p, const HeapVarlena &v,
		   uint64_t *w, bool *isnull)
{
	w[0] = w[1] = 0;
	*isnull = false;
	switch (S.T.form[c])
	{
		case GPUOPS_QPF_TEXT_TEST:
			{
				int r;

				if (v.extended)
					return GPUOPS_QESC_VALUE;
				r = text_test_eval(S.T.tests[S.T.test[c]], p + v.hdr, v.size - v.hdr);
				*isnull = r < 0;
				w[0] = r > 0 ? 1 : 0;
				return GPUOPS_QESC_NONE;
			}
		case GPUOPS_QPF_INT:
			switch (len)
			{
				case 1:
					w[0] = (uint64_t) (int64_t) (int8_t) p[0];
					return GPUOPS_QESC_NONE;
				case 2:
					w[0] = (uint64_t) (int64_t) (int16_t) heap_u16(p);
					return GPUOPS_QESC_NONE;
				case 4:
					w[0] = (uint64_t) (int64_t) (int32_t) heap_u32(p);
					return GPUOPS_QESC_NONE;
				default:
					memcpy(&w[0], p, 8);
					return GPUOPS_QESC_NONE;
			}
		case GPUOPS_QPF_FLOAT4:
			{
				float f;

				memcpy(&f, p, sizeof(f));
				w[0] = expr_from_double((double) f);
				return GPUOPS_QESC_NONE;
			}
		case GPUOPS_QPF_FLOAT8:
			memcpy(&w[0], p, 8);
			return GPUOPS_QESC_NONE;
		case GPUOPS_QPF_NUMERIC:
			if (v.extended)
				return GPUOPS_QESC_VALUE;
			w[0] = stored_numeric_word(p + v.hdr, v.size - v.hdr);
			return GPUOPS_QESC_NONE;
		default:
			{
				const uint8_t *data = p + v.hdr;
				uint32_t n = v.size - v.hdr;

				if (v.extended)
					return GPUOPS_QESC_VALUE;
				if (S.T.form[c] == GPUOPS_QPF_BPCHAR16)
					while (n > 0 && data[n - 1] == ' ')
						n--; /* bcTruelen */
				if (n > 16)
					return GPUOPS_QESC_LONG_TEXT;
				memcpy(w, data, n);
				return GPUOPS_QESC_NONE;
			}
	}
}

/* The page holding row: the last p with first_row[p] <= row. */
GPUOPS_HD uint32_t
page_of_row(const uint32_t *first_row, uint32_t npages, uint32_t row)
{
	return static_cast<uint32_t>(run_of(first_row, npages, row));
}

/* Page pg of the batch: in its pages, or in place (base, index; or pages by index). */
GPUOPS_HD const uint8_t *
page_at(const GpuopsQueryPages &P, uint32_t pg)
{
	uint32_t i;

	if (P.base == nullptr)
		return P.pages + (uint64_t) pg * P.page_size;
	i = P.index[pg];
	return (i & GPUOPS_QUERY_PAGE_IN_PAGES) != 0
		? P.pages + (uint64_t) (i & ~GPUOPS_QUERY_PAGE_IN_PAGES) * P.page_size
		: P.base + (uint64_t) i * P.page_size;
}

/*
 * Row i of the pages batch (in page pg) into o's row i: kQueryPass, or
 * the escape code of a value with no device form.
 */
GPUOPS_HD uint32_t
page_deform_row(const PageShape &S, const GpuopsQueryPages &P, uint32_t pg, uint32_t i,
				const PageOut &o)
{
	const GpuopsQueryTuple &T = S.T;
	const uint8_t *page = page_at(P, pg);
	HeapItem it = heap_item(page, P.lineno[i]);
	const uint8_t *tup = page + it.off;
	int tup_natts = heap_u16(tup + kTupInfomask2Off) & kTupNattsMask;
	bool hasnulls = (heap_u16(tup + kTupInfomaskOff) & kTupHasNull) != 0;
	const uint8_t *bits = tup + kTupBitsOff;
	const uint8_t *tp = tup + tup[kTupHoffOff];
	uint32_t off = 0;
	int k = 0;
	uint64_t w[2];

	for (int a = 0; a < T.natts && a < tup_natts && k < S.ncols; a++)
	{
		int16_t len = T.attlen[a];
		HeapVarlena v{0, 0, false};

		if (hasnulls && (bits[a >> 3] & (1 << (a & 7))) == 0)
		{
			for (; k < S.ncols && T.attr[S.order[k]] == a; k++)
				page_put(S, o, S.order[k], i, true, 0, 0);
			continue;
		}
		/* slot_deform_heap_tuple's offsets: a varlena not on a pad byte is unaligned */
		if (len != -1 || tp[off] == 0)
			off = heap_align(off, T.attalign[a]);
		if (len == -1 && !heap_varlena(tp + off, &v))
			return query_escape_code(GPUOPS_QESC_VALUE, k < S.ncols ? S.order[k] : 0);
		for (; k < S.ncols && T.attr[S.order[k]] == a; k++)
		{
			int c = S.order[k];
			bool isnull;
			GpuopsQueryEscape why = page_value(S, c, len, tp + off, v, w, &isnull);

			if (why != GPUOPS_QESC_NONE)
				return query_escape_code(why, c);
			page_put(S, o, c, i, isnull, w[0], w[1]);
		}
		off += len == -1 ? v.size : (uint32_t) len;
	}
	/* attributes added after the tuple was stored */
	for (; k < S.ncols; k++)
	{
		int c = S.order[k];

		if (T.missing_escape[c] != GPUOPS_QESC_NONE)
			return query_escape_code((GpuopsQueryEscape) T.missing_escape[c], c);
		page_put(S, o, c, i, T.missing_null[c] != 0, T.missing_word[c][0], T.missing_word[c][1]);
	}
	return kQueryPass;
}

} // namespace gpuops

#endif /* GPUOPS_PAGE_DEFORM_HPP */
