/*
 * query_deform.h
 *    GpuQuery's reader, the part that may run on helper threads: the
 *    visible tuples of a pinned heap page turned into the device's column
 *    words (query_reader.h), with no PostgreSQL call.
 *
 * heap_getattr and slot_deform_heap_tuple cannot run off the backend's
 * thread: they write attcacheoff into the relation's shared TupleDesc and
 * may detoast.  This deformer walks the tuple with its own copy of each
 * attribute's length and alignment and PostgreSQL's pure macros
 * (att_isnull, att_align_pointer, att_addlength_pointer).
 */
#ifndef GPUOPS_QUERY_DEFORM_H
#define GPUOPS_QUERY_DEFORM_H

#include "query_reader.h"

extern "C" {
#include "access/htup_details.h"
#include "storage/bufpage.h"
}

/*
 * A stretch of attributes the fast walk (tuples without NULLs, every
 * attribute stored) takes at once: one varlena, or a run of fixed-length
 * attributes none of which needs more alignment than the first, so that
 * once the first is aligned every later one sits at a constant distance.
 */
typedef struct QueryDeformSegment
{
	int16 first_attr; /* 0-based */
	int16 run_len;	  /* a fixed run: its bytes from its aligned start; -1: a varlena */
	char align;		  /* the first attribute's TYPALIGN_* */
	int8 nread;		  /* attributes of it read (below) */
	int16 read_attr[GPUOPS_QUERY_MAX_COLS]; /* those attributes */
	int16 read_off[GPUOPS_QUERY_MAX_COLS];	/* and their distance from the start */
} QueryDeformSegment;

/* What the threads read: set up on the backend, then read-only. */
typedef struct QueryDeformShape
{
	int ncols;
	int tid_col;						  /* the QCOL_TID column, or -1 */
	int natts;							  /* attributes walked: the largest attnum read */
	int16 *attlen;						  /* per attribute (natts), copied from the TupleDesc */
	char *attalign;						  /* TYPALIGN_* */
	int8 *first_col;					  /* per attribute: the first column reading it, or -1 */
	int8 next_col[GPUOPS_QUERY_MAX_COLS]; /* the next column reading the same attribute */
	QueryColumnForm form[GPUOPS_QUERY_MAX_COLS];
	QueryTextTest *tests; /* per column its test (QCOL_TEXT_TEST) */
	AttrNumber attnum[GPUOPS_QUERY_MAX_COLS];
	/* the column in rows stored before its attribute was added (getmissingattr) */
	bool missing_null[GPUOPS_QUERY_MAX_COLS];
	uint64 missing_word[GPUOPS_QUERY_MAX_COLS][2];
	const char *missing_escape[GPUOPS_QUERY_MAX_COLS];
	/* the fast walk: its segments, or nsegs -1 where it cannot (a cstring attribute) */
	int nsegs;
	QueryDeformSegment *segs;
} QueryDeformShape;

/* One batch's column buffers (batch_rows rows each). */
typedef struct QueryDeformOut
{
	uint64 *words[GPUOPS_QUERY_MAX_COLS];	/* non-bytes columns */
	uint64 *bytes16[GPUOPS_QUERY_MAX_COLS]; /* bytes columns: 2 words a row */
	uint8 *nulls[GPUOPS_QUERY_MAX_COLS];	/* every column: 1 = NULL */
} QueryDeformOut;

/*
 * Why a value has no device form (ValueWords): the host reader's reasons,
 * which the pages form's escapes name back (gpu_query_run.cpp), so the
 * node says the same on both forms.  Compared by address.
 */
extern const char QueryWhyNumericValue[]; /* compressed or external numeric */
extern const char QueryWhyTextValue[];	  /* compressed or external text */
extern const char QueryWhyLongText[];	  /* text over 16 bytes */

/* What one page's rows left besides their words. */
typedef struct QueryDeformResult
{
	uint32 null_mask;	/* bit c: column c had a NULL */
	const char *escape; /* a value with no device form: why (a constant) */
	uint32 escape_row;	/* its row in the batch */
} QueryDeformResult;

/*
 * Checks the columns against the relation's descriptor and fills shape
 * (memory in the current context).  Backend only; raises an error for a
 * form the attribute's type does not have.
 */
extern void QueryDeformShapeInit(QueryDeformShape *shape, TupleDesc desc,
								 const QueryReadColumn *cols, int ncols);

/*
 * The shape the query backend deforms pages by (gpuops_query.h's
 * GpuopsQueryTuple), the same words as QueryDeformPage's; false where the
 * columns have no pages form (more than GPUOPS_QUERY_MAX_TESTS text
 * tests, a cstring attribute walked, more attributes than
 * GPUOPS_QUERY_MAX_ATTS, a big-endian build).
 */
extern bool QueryDeformPagesShape(const QueryDeformShape *shape, GpuopsQueryTuple *tuple);

/*
 * Rows row .. row + n - 1 of the batch: the tuples at offsets offs of page
 * (pinned, its tuples visible; block: its number, for a QCOL_TID column).
 * Stops at the first value with no device form (res->escape).  Pure: safe
 * on any thread.
 */
extern void QueryDeformPage(const QueryDeformShape *shape, const QueryDeformOut *out, Page page,
							BlockNumber block, const OffsetNumber *offs, int n, uint32 row,
							QueryDeformResult *res) noexcept;

#endif /* GPUOPS_QUERY_DEFORM_H */
