/*
 * query_deform.cpp
 *    Heap tuples to device words, off the backend's thread
 *    (query_deform.h).
 */
extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "catalog/pg_type_d.h"
#include "storage/bufpage.h"
#include "utils/rel.h"
#include "pg_compat.h"
}

#include "expr_eval.hpp"
#include "numeric_decode.h"
#include "query_deform.h"

#include "heap_format.hpp"

const char QueryWhyNumericValue[] = "a compressed or external numeric value";
const char QueryWhyTextValue[] = "a compressed or external text value";
const char QueryWhyLongText[] = "a text value over 16 bytes";

/*
 * The value at p (an attribute of length len, as stored) as column words:
 * w[0], and w[1] for a bytes column.  Returns why it has no device form,
 * or NULL.
 */
static inline const char *
ValueWords(const QueryDeformShape *shape, int c, int16 len, const char *p, uint64 *w)
{
	switch (shape->form[c])
	{
		case QCOL_INT:
			switch (len)
			{
				case 1:
					w[0] = (uint64) (int64) * (const int8 *) p;
					break;
				case 2:
					w[0] = (uint64) (int64) * (const int16 *) p;
					break;
				case 4:
					w[0] = (uint64) (int64) * (const int32 *) p;
					break;
				default:
					w[0] = (uint64) * (const int64 *) p;
					break;
			}
			return NULL;
		case QCOL_FLOAT4:
			w[0] = gpuops::expr_from_double((double) *(const float4 *) p);
			return NULL;
		case QCOL_FLOAT8:
			w[0] = gpuops::expr_from_double(*(const float8 *) p);
			return NULL;
		case QCOL_NUMERIC:
			if (VARATT_IS_EXTENDED(p) && !VARATT_IS_SHORT(p))
				return QueryWhyNumericValue;
			w[0] = GpuopsNumericExprWord(p);
			return NULL;
		case QCOL_TEXT16:
		case QCOL_BPCHAR16:
			{
				const char *data;
				Size n;

				if (VARATT_IS_EXTENDED(p) && !VARATT_IS_SHORT(p))
					return QueryWhyTextValue;
				data = VARDATA_ANY(p);
				n = VARSIZE_ANY_EXHDR(p);
				if (shape->form[c] == QCOL_BPCHAR16)
					while (n > 0 && data[n - 1] == ' ')
						n--; /* bcTruelen */
				if (n > 16)
					return QueryWhyLongText;
				w[0] = 0;
				w[1] = 0;
				memcpy(w, data, n);
				return NULL;
			}
		case QCOL_TEXT_TEST:
			{
				int r;

				if (VARATT_IS_EXTENDED(p) && !VARATT_IS_SHORT(p))
					return QueryWhyTextValue;
				r = QueryTextTestEval(&shape->tests[c], VARDATA_ANY(p), VARSIZE_ANY_EXHDR(p));
				/* NULL: the caller's to store (a list holding a NULL) */
				w[0] = r < 0 ? 0 : (uint64) r;
				w[1] = r < 0 ? 1 : 0;
				return NULL;
			}
		case QCOL_TID:
			break; /* no attribute: QueryDeformPage writes it */
	}
	return "an unknown column form";
}

static inline bool
IsBytes(QueryColumnForm form)
{
	return form == QCOL_TEXT16 || form == QCOL_BPCHAR16;
}

/* Stores column c's words (or its NULL) for row. */
static inline void
Put(const QueryDeformShape *shape, const QueryDeformOut *out, int c, uint32 row, const uint64 *w,
	bool isnull, QueryDeformResult *res)
{
	if (shape->form[c] == QCOL_TEXT_TEST && !isnull)
		isnull = w[1] != 0; /* a test's NULL (ValueWords) */
	out->nulls[c][row] = isnull;
	if (isnull)
		res->null_mask |= 1u << c;
	if (IsBytes(shape->form[c]))
	{
		out->bytes16[c][2 * (Size) row] = isnull ? 0 : w[0];
		out->bytes16[c][2 * (Size) row + 1] = isnull ? 0 : w[1];
	}
	else
		out->words[c][row] = isnull ? 0 : w[0];
}

static int
AlignBytes(char align)
{
	switch (align)
	{
		case TYPALIGN_CHAR:
			return 1;
		case TYPALIGN_SHORT:
			return ALIGNOF_SHORT;
		case TYPALIGN_INT:
			return ALIGNOF_INT;
		default:
			return ALIGNOF_DOUBLE;
	}
}

/*
 * The fast walk's segments over attributes 0 .. natts - 1 (see
 * QueryDeformSegment): a varlena alone; a fixed run breaks before an
 * attribute that needs more alignment than the run's first.
 */
static void
BuildSegments(QueryDeformShape *shape)
{
	QueryDeformSegment *seg = NULL;
	int off = 0;

	shape->segs = (QueryDeformSegment *) palloc0(sizeof(QueryDeformSegment) * Max(shape->natts, 1));
	shape->nsegs = 0;
	for (int i = 0; i < shape->natts; i++)
	{
		int16 len = shape->attlen[i];
		char align = shape->attalign[i];

		if (len == -2)
		{
			shape->nsegs = -1; /* a cstring: the slow walk only */
			return;
		}
		if (len == -1 || seg == NULL || seg->run_len < 0 ||
			AlignBytes(align) > AlignBytes(seg->align))
		{
			seg = &shape->segs[shape->nsegs++];
			seg->first_attr = (int16) i;
			seg->align = align;
			seg->run_len = len == -1 ? -1 : 0;
			off = 0;
		}
		if (len != -1)
			off = (int) att_align_nominal(off, align);
		if (shape->first_col[i] >= 0)
		{
			seg->read_attr[seg->nread] = (int16) i;
			seg->read_off[seg->nread] = (int16) off;
			seg->nread++;
		}
		if (len != -1)
		{
			off += len;
			seg->run_len = (int16) off;
		}
	}
}

void
QueryDeformShapeInit(QueryDeformShape *shape, TupleDesc desc, const QueryReadColumn *cols,
					 int ncols)
{
	memset(shape, 0, sizeof(*shape));
	if (ncols < 0 || ncols > GPUOPS_QUERY_MAX_COLS)
		elog(ERROR, "gpuops: query reader: %d columns", ncols);
	shape->ncols = ncols;
	shape->tid_col = -1;
	shape->tests = (QueryTextTest *) palloc0(sizeof(QueryTextTest) * Max(ncols, 1));
	for (int c = 0; c < ncols; c++)
	{
		AttrNumber a = cols[c].attnum;
		Form_pg_attribute att;
		bool ok;

		/* the row's place: no attribute walked (QueryDeformPage writes it) */
		if (cols[c].form == QCOL_TID || a == SelfItemPointerAttributeNumber)
		{
			if (cols[c].form != QCOL_TID || a != SelfItemPointerAttributeNumber ||
				shape->tid_col >= 0)
				elog(ERROR, "gpuops: query reader: column %d: a row's TID is read once, as form %d",
					 c, (int) QCOL_TID);
			shape->form[c] = QCOL_TID;
			shape->attnum[c] = a;
			shape->tid_col = c;
			continue;
		}
		if (a < 1 || a > desc->natts || TupleDescAttr(desc, a - 1)->attisdropped)
			elog(ERROR, "gpuops: query reader: no attribute %d", a);
		att = TupleDescAttr(desc, a - 1);
		switch (cols[c].form)
		{
			case QCOL_INT:
				ok = att->attbyval &&
					(att->attlen == 1 || att->attlen == 2 || att->attlen == 4 || att->attlen == 8);
				break;
			case QCOL_FLOAT4:
				ok = att->atttypid == FLOAT4OID;
				break;
			case QCOL_FLOAT8:
				ok = att->atttypid == FLOAT8OID;
				break;
			case QCOL_TEXT_TEST:
				ok = att->atttypid == TEXTOID || att->atttypid == VARCHAROID ||
					att->atttypid == BPCHAROID;
				break;
			default:
				ok = att->attlen == -1;
				break;
		}
		if (!ok)
			elog(ERROR, "gpuops: query reader: attribute %d (type %u) cannot be read as form %d", a,
				 att->atttypid, (int) cols[c].form);
		shape->form[c] = cols[c].form;
		shape->attnum[c] = a;
		shape->tests[c] = cols[c].test;
		shape->natts = Max(shape->natts, (int) a);
	}
	shape->attlen = (int16 *) palloc(sizeof(int16) * Max(shape->natts, 1));
	shape->attalign = (char *) palloc(Max(shape->natts, 1));
	shape->first_col = (int8 *) palloc(Max(shape->natts, 1));
	for (int i = 0; i < shape->natts; i++)
	{
		shape->attlen[i] = TupleDescAttr(desc, i)->attlen;
		shape->attalign[i] = TupleDescAttr(desc, i)->attalign;
		shape->first_col[i] = -1;
	}
	/* columns reading one attribute chained, in column order */
	for (int c = ncols - 1; c >= 0; c--)
	{
		int i = shape->attnum[c] - 1;

		if (c == shape->tid_col)
			continue;
		shape->next_col[c] = shape->first_col[i];
		shape->first_col[i] = (int8) c;
	}
	BuildSegments(shape);
	/* what a tuple stored with fewer attributes holds: the added column's default, or NULL */
	for (int c = 0; c < ncols; c++)
	{
		bool isnull;
		Datum d;
		Form_pg_attribute att;
		Datum stored = 0;
		const char *p;

		if (c == shape->tid_col)
			continue;
		d = getmissingattr(desc, shape->attnum[c], &isnull);
		att = TupleDescAttr(desc, shape->attnum[c] - 1);
		shape->missing_null[c] = isnull;
		if (isnull)
			continue;
		if (att->attbyval)
		{
			store_att_byval(&stored, d, att->attlen);
			p = (const char *) &stored;
		}
		else
			p = DatumGetPointer(d);
		shape->missing_escape[c] = ValueWords(shape, c, att->attlen, p, shape->missing_word[c]);
		if (shape->form[c] == QCOL_TEXT_TEST && shape->missing_word[c][1] != 0)
			shape->missing_null[c] = true;
	}
}

/* An integer column's word, inline (ValueWords for the others). */
static inline const char *
FastWords(const QueryDeformShape *shape, int c, int16 len, const char *p, uint64 *w)
{
	if (shape->form[c] != QCOL_INT)
		return ValueWords(shape, c, len, p, w);
	switch (len)
	{
		case 2:
			w[0] = (uint64) (int64) * (const int16 *) p;
			return NULL;
		case 4:
			w[0] = (uint64) (int64) * (const int32 *) p;
			return NULL;
		case 8:
			w[0] = (uint64) * (const int64 *) p;
			return NULL;
		default:
			w[0] = (uint64) (int64) * (const int8 *) p;
			return NULL;
	}
}

/*
 * One tuple without NULLs and with every attribute walked stored: by
 * segments, a varlena's length read, a fixed run skipped in one step.
 */
static inline const char *
DeformTupleFast(const QueryDeformShape *shape, const QueryDeformOut *out, const char *tp,
				uint32 row, QueryDeformResult *res)
{
	uintptr_t off = 0;
	uint64 w[2];

	for (int s = 0; s < shape->nsegs; s++)
	{
		const QueryDeformSegment *seg = &shape->segs[s];

		if (seg->run_len < 0)
		{
			off = att_align_pointer(off, seg->align, -1, tp + off);
			for (int c = shape->first_col[seg->first_attr]; c >= 0; c = shape->next_col[c])
			{
				const char *why = ValueWords(shape, c, -1, tp + off, w);

				if (why != NULL)
					return why;
				Put(shape, out, c, row, w, false, res);
			}
			off = att_addlength_pointer(off, -1, tp + off);
			continue;
		}
		off = att_align_nominal(off, seg->align);
		for (int k = 0; k < seg->nread; k++)
		{
			int i = seg->read_attr[k];
			const char *p = tp + off + seg->read_off[k];

			for (int c = shape->first_col[i]; c >= 0; c = shape->next_col[c])
			{
				const char *why = FastWords(shape, c, shape->attlen[i], p, w);

				if (why != NULL)
					return why;
				Put(shape, out, c, row, w, false, res);
			}
		}
		off += seg->run_len;
	}
	return NULL;
}

/* One tuple's columns into row. */
static inline const char *
DeformTuple(const QueryDeformShape *shape, const QueryDeformOut *out, HeapTupleHeader tup,
			uint32 row, QueryDeformResult *res)
{
	int tup_natts = HeapTupleHeaderGetNatts(tup);
	bool hasnulls = (tup->t_infomask & HEAP_HASNULL) != 0;
	const bits8 *bp = tup->t_bits;
	const char *tp = (const char *) tup + tup->t_hoff;
	int last = Min(shape->natts, tup_natts);
	uintptr_t off = 0;
	uint64 w[2];

	if (!hasnulls && tup_natts >= shape->natts && shape->nsegs >= 0)
		return DeformTupleFast(shape, out, tp, row, res);

	for (int i = 0; i < last; i++)
	{
		int16 len = shape->attlen[i];
		char align = shape->attalign[i];

		if (hasnulls && att_isnull(i, bp))
		{
			for (int c = shape->first_col[i]; c >= 0; c = shape->next_col[c])
				Put(shape, out, c, row, w, true, res);
			continue;
		}
		/* slot_deform_heap_tuple's offsets, without attcacheoff */
		if (len == -1)
			off = att_align_pointer(off, align, -1, tp + off);
		else
			off = att_align_nominal(off, align);
		for (int c = shape->first_col[i]; c >= 0; c = shape->next_col[c])
		{
			const char *why = ValueWords(shape, c, len, tp + off, w);

			if (why != NULL)
				return why;
			Put(shape, out, c, row, w, false, res);
		}
		off = att_addlength_pointer(off, len, tp + off);
	}
	/* attributes added after the tuple was stored */
	for (int i = last; i < shape->natts; i++)
		for (int c = shape->first_col[i]; c >= 0; c = shape->next_col[c])
		{
			if (shape->missing_escape[c] != NULL)
				return shape->missing_escape[c];
			Put(shape, out, c, row, shape->missing_word[c], shape->missing_null[c], res);
		}
	return NULL;
}

#define QUERY_DEFORM_PREFETCH 8 /* tuples ahead */

static inline void
PrefetchTuple(Page page, OffsetNumber off)
{
	const char *p = (const char *) PageGetItem(page, PageGetItemId(page, off));

	__builtin_prefetch(p);
	__builtin_prefetch(p + 64);
}

void
QueryDeformPage(const QueryDeformShape *shape, const QueryDeformOut *out, Page page,
				BlockNumber block, const OffsetNumber *offs, int n, uint32 row,
				QueryDeformResult *res) noexcept
{
	res->null_mask = 0;
	res->escape = NULL;
	res->escape_row = 0;
	/*
	 * The first touch of each tuple misses the cache (the pages were read
	 * by another process, or long ago), and without a hint that miss was
	 * 85% of the time (perf, one int8 column: ~120 ns a row against 53 for
	 * a count(*) that reads only line pointers).  Ask for the tuples a few
	 * rows ahead, and their second cache line, so the misses overlap.
	 */
	for (int i = 0; i < Min(n, QUERY_DEFORM_PREFETCH); i++)
		PrefetchTuple(page, offs[i]);
	for (int i = 0; i < n; i++)
	{
		ItemId lp = PageGetItemId(page, offs[i]);
		HeapTupleHeader tup = (HeapTupleHeader) PageGetItem(page, lp);
		const char *why;

		if (i + QUERY_DEFORM_PREFETCH < n)
			PrefetchTuple(page, offs[i + QUERY_DEFORM_PREFETCH]);
		why = DeformTuple(shape, out, tup, row + i, res);
		if (shape->tid_col >= 0)
		{
			out->words[shape->tid_col][row + i] = QueryTidWord(block, offs[i]);
			out->nulls[shape->tid_col][row + i] = 0;
		}
		if (why != NULL)
		{
			res->escape = why;
			res->escape_row = row + i;
			return;
		}
	}
}

/*
 * heap_format.hpp's constants are PostgreSQL's: checked here, where both
 * are in scope.  The line pointer's bit fields are checked at run time
 * (QueryDeformPagesShape): C++ cannot take their layout at compile time.
 */
static_assert(gpuops::kPageHeaderSize == SizeOfPageHeaderData, "page header size");
static_assert(gpuops::kLpNormal == LP_NORMAL, "LP_NORMAL");
static_assert(gpuops::kTupInfomask2Off == offsetof(HeapTupleHeaderData, t_infomask2),
			  "t_infomask2");
static_assert(gpuops::kTupInfomaskOff == offsetof(HeapTupleHeaderData, t_infomask), "t_infomask");
static_assert(gpuops::kTupHoffOff == offsetof(HeapTupleHeaderData, t_hoff), "t_hoff");
static_assert(gpuops::kTupBitsOff == offsetof(HeapTupleHeaderData, t_bits), "t_bits");
static_assert(gpuops::kTupNattsMask == HEAP_NATTS_MASK, "HEAP_NATTS_MASK");
static_assert(gpuops::kTupHasNull == HEAP_HASNULL, "HEAP_HASNULL");
static_assert(gpuops::kVarHdrSz == VARHDRSZ, "VARHDRSZ");
static_assert(gpuops::kVarTagOnDisk == VARTAG_ONDISK, "VARTAG_ONDISK");
static_assert(gpuops::kVarExternalOnDiskSize == VARHDRSZ_EXTERNAL + sizeof(varatt_external),
			  "an on-disk external pointer's size");

/* Whether heap_item reads ItemIdData's bit fields as this compiler lays them out. */
static bool
LinePointerLayoutMatches(void)
{
	uint8 page[SizeOfPageHeaderData + sizeof(ItemIdData)];
	ItemIdData lp;
	gpuops::HeapItem it;

	ItemIdSetNormal(&lp, 0x5A5A & 0x7FFF, 0x2345 & 0x7FFF);
	memset(page, 0, sizeof(page));
	memcpy(page + SizeOfPageHeaderData, &lp, sizeof(lp));
	it = gpuops::heap_item(page, 1);
	return it.off == ItemIdGetOffset(&lp) && it.len == ItemIdGetLength(&lp) &&
		it.flags == (uint32) LP_NORMAL;
}

bool
QueryDeformPagesShape(const QueryDeformShape *shape, GpuopsQueryTuple *tuple)
{
#ifdef WORDS_BIGENDIAN
	return false; /* heap_format.hpp reads varlena headers little-endian */
#endif
	static int layout_ok = -1;

	if (layout_ok < 0)
		layout_ok = LinePointerLayoutMatches() ? 1 : 0;
	/* (a row's TID: only the host's words know its page's block) */
	if (!layout_ok || shape->natts < 1 || shape->natts > GPUOPS_QUERY_MAX_ATTS ||
		shape->tid_col >= 0)
		return false;
	memset(tuple, 0, sizeof(*tuple));
	tuple->natts = shape->natts;
	for (int i = 0; i < shape->natts; i++)
	{
		if (shape->attlen[i] < 1 && shape->attlen[i] != -1)
			return false; /* a cstring */
		tuple->attlen[i] = shape->attlen[i];
		tuple->attalign[i] = (uint8) AlignBytes(shape->attalign[i]);
	}
	for (int c = 0; c < shape->ncols; c++)
	{
		switch (shape->form[c])
		{
			case QCOL_INT:
				tuple->form[c] = GPUOPS_QPF_INT;
				break;
			case QCOL_FLOAT4:
				tuple->form[c] = GPUOPS_QPF_FLOAT4;
				break;
			case QCOL_FLOAT8:
				tuple->form[c] = GPUOPS_QPF_FLOAT8;
				break;
			case QCOL_NUMERIC:
				tuple->form[c] = GPUOPS_QPF_NUMERIC;
				break;
			case QCOL_TEXT16:
				tuple->form[c] = GPUOPS_QPF_TEXT16;
				break;
			case QCOL_BPCHAR16:
				tuple->form[c] = GPUOPS_QPF_BPCHAR16;
				break;
			case QCOL_TEXT_TEST:
				if (tuple->ntests >= GPUOPS_QUERY_MAX_TESTS)
					return false;
				tuple->form[c] = GPUOPS_QPF_TEXT_TEST;
				tuple->test[c] = (uint8) tuple->ntests;
				tuple->tests[tuple->ntests++] = shape->tests[c];
				break;
			default:
				return false;
		}
		tuple->attr[c] = (int16) (shape->attnum[c] - 1);
		tuple->missing_null[c] = shape->missing_null[c];
		/* the host reader's reasons (ValueWords), as the node names them back */
		tuple->missing_escape[c] = shape->missing_escape[c] == NULL ? GPUOPS_QESC_NONE
			: shape->missing_escape[c] == QueryWhyLongText			? GPUOPS_QESC_LONG_TEXT
																	: GPUOPS_QESC_VALUE;
		tuple->missing_word[c][0] = shape->missing_word[c][0];
		tuple->missing_word[c][1] = shape->missing_word[c][1];
	}
	return true;
}
