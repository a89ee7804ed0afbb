/*
 * query_reader.h
 *    GpuQuery's fact-table reader: walks a heap table's pages under the
 *    query's snapshot and turns each visible row's needed attributes into
 *    the device's column form (a GpuopsQueryBatch, gpuops_query.h), a
 *    batch at a time, without the executor.
 *
 * What stays on the backend: every PostgreSQL call (heapgetpage, that is
 * pruning, visibility and serializable checks; buffer pins; the
 * old-snapshot test; interrupts; palloc; ereport; statistics).  What may
 * run on reader threads: turning the bytes of pinned pages into words
 * (no PostgreSQL call, no palloc, no catalog).  With nthreads 0 the
 * backend does that too (CI's and the assert build's mode).
 *
 * Values that have no device form do not stop the read: a numeric the
 * device does not hold (NaN, infinities, too many digits) becomes the
 * unknown numeric word, which the device escapes on when it needs the
 * value.  A value that must be detoasted, or a bytes column value over 16
 * bytes, makes the reader stop with a reason (the caller then runs the
 * block through PostgreSQL's plan).  A text test reads any length.
 */
#ifndef GPUOPS_QUERY_READER_H
#define GPUOPS_QUERY_READER_H

extern "C" {
#include "postgres.h"

#include "access/relscan.h"
#include "storage/itemptr.h"
#include "utils/rel.h"
}

#include "gpuops_query.h"
#include "query_text_test.h"

/* The device form one attribute is read into. */
typedef enum QueryColumnForm
{
	QCOL_INT = 0,	/* int2, int4, int8, date, timestamp(tz), time, bool: int64 word */
	QCOL_FLOAT4,	/* float4: the double's bits (expression word) */
	QCOL_FLOAT8,	/* float8 */
	QCOL_NUMERIC,	/* numeric: expression numeric word (expr_numeric.hpp) */
	QCOL_TEXT16,	/* text/varchar of at most 16 bytes: bytes16, zero padded */
	QCOL_BPCHAR16,	/* bpchar: the same, trailing blanks removed (bcTruelen) */
	QCOL_TEXT_TEST, /* text, varchar or bpchar tested (query_text_test.h): bool word */
	QCOL_TID		/* the row's own place (attnum SelfItemPointerAttributeNumber): the
					 * word block << 16 | line pointer, never NULL (QueryTidWord); the
					 * rows form only (no pages form), for GpuTopN's fetch by TID */
} QueryColumnForm;

/* A QCOL_TID word, and back. */
static inline uint64
QueryTidWord(BlockNumber block, OffsetNumber off)
{
	return ((uint64) block << 16) | off;
}

static inline void
QueryTidFromWord(uint64 w, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) (w >> 16), (OffsetNumber) (w & 0xffff));
}

typedef struct QueryReadColumn
{
	AttrNumber attnum; /* the table's attribute (>= 1; QCOL_TID: SelfItemPointerAttributeNumber) */
	QueryColumnForm form;
	QueryTextTest test; /* QCOL_TEXT_TEST: the test */
} QueryReadColumn;

typedef struct QueryReaderStats
{
	uint64 pages; /* heap pages read */
	uint64 rows;  /* visible rows turned into words */
	uint64 batches;
	double read_ms; /* wall time inside QueryReaderNext */
	double walk_ms; /* of it, the backend's page walk (heapgetpage, pins) */
	int threads;	/* reader threads used */
} QueryReaderStats;

typedef struct QueryReader QueryReader;

/*
 * A row of a batch as a program reads it (expr_eval's inputs: word(c),
 * null(c)): a dimension's quals, run by the workers that read it
 * (query_parallel.cpp) or by the leader (gpu_query_dims.cpp).
 */
struct QueryBatchRow
{
	const GpuopsQueryBatch *b;
	uint32 i;

	uint64 word(int c) const { return b->cols.words[c][i]; }
	bool null(int c) const { return b->cols.nulls[c] != NULL && b->cols.nulls[c][i] != 0; }
};

/*
 * Begins reading `scan` (a heap scan the caller began with
 * table_beginscan under the query's snapshot, in page-at-a-time mode;
 * QueryReaderUsable says whether this one can be read directly).  Batches
 * hold up to batch_rows rows (a multiple of 8).  Memory in `cxt`; the
 * reader's threads and pins are released by QueryReaderEnd, and by a
 * memory context reset callback of `cxt` on error.
 */
extern bool QueryReaderUsable(TableScanDesc scan);
/*
 * A batch's rows for these columns within gpuops.batch_size_mb (each a
 * word and a null byte, 16 bytes for short text), 1024 to 4M, a multiple
 * of 8.
 */
extern uint32 QueryReaderBatchRows(const QueryReadColumn *cols, int ncols);
extern QueryReader *QueryReaderBegin(TableScanDesc scan, const QueryReadColumn *cols, int ncols,
									 int nthreads, uint32 batch_rows, MemoryContext cxt);

/*
 * The next batch (its buffers valid until the next call), or false at the
 * end of the table.  When a value has no device form, returns false with
 * *escape set to the reason (a constant string); otherwise *escape = NULL.
 */
extern bool QueryReaderNext(QueryReader *r, GpuopsQueryBatch *batch, const char **escape);

/*
 * The pages form (gpuops_query.h's GpuopsQueryPages): the reader copies
 * each page with visible tuples whole, as stored, and lists its visible
 * line pointers; the query backend deforms them (page_deform.hpp).  The
 * backend walks the pages as before (visibility stays PostgreSQL's); no
 * thread is needed.  A pages batch's buffers: up to max_pages pages, and
 * up to max_rows rows (a batch ends where the next page might not fit).
 */
typedef struct QueryPagesBuf
{
	uint32 max_pages;
	uint32 max_rows;
	bool in_place;		   /* pages left in shared buffers, pinned (below) */
	uint8 *pages;		   /* max_pages x BLCKSZ (not in place) */
	uint32 *index;		   /* max_pages: buffer numbers (in place) */
	uint32 *block;		   /* max_pages: block numbers (in place) */
	uint64 *lsn;		   /* max_pages: LSNs as listed (in place) */
	uint32 *first_row;	   /* max_pages + 1 */
	uint16 *lineno;		   /* max_rows */
	GpuopsQueryPages view; /* what the last fill put there */
} QueryPagesBuf;

/*
 * The rows a pages buffer of max_pages of rel's pages makes room for: 1.5
 * times the table's average a page (its statistics), at least 16 full
 * pages' worth, at most every page full.  The rows index is most of an
 * in-place buffer, and a parallel read's slots are allocated and pinned
 * for the device at each query's start: for SSB's lineorder (65 rows a
 * page) a slot of 4096 pages is ~0.9 MB, not the ~2.4 MB of 4096 full
 * pages.  Stale statistics cost batches that end early, never rows.
 */
extern uint32 QueryPagesRows(Relation rel, uint32 max_pages);

/* The bytes of a pages buffer, and one laid out in mem. */
extern Size QueryPagesBufBytes(uint32 max_pages, uint32 max_rows, bool in_place);
extern void QueryPagesBufInit(QueryPagesBuf *buf, char *mem, uint32 max_pages, uint32 max_rows,
							  bool in_place);

/*
 * buf->view for its first npages pages, read from rel (by this process or
 * a parallel worker): the page service may keep them in its device cache
 * when rel's pages carry LSNs (QueryPagesCacheable; gpuops_page_service.h).
 */
extern void QueryPagesBufView(QueryPagesBuf *buf, uint32 npages, Relation rel);
extern bool QueryPagesCacheable(Relation rel);

/*
 * Pages read in place: the buffer isn't copied; the reader keeps a pin on
 * each page it lists (PostgreSQL's rule: a visible tuple may be read with
 * the pin alone) and gives the backend the page's place in shared buffers
 * (GpuopsQueryPages.base, index).  The process that filled the buffer drops
 * the pins (QueryPagesUnpin) once the backend has read the pages, before
 * its transaction ends; an error's resource owner drops them too.  Temporary
 * tables (local buffers) are always copied.
 */
extern bool QueryPagesInPlacePossible(Relation rel);
extern void QueryPagesUnpin(const uint32 *index, uint32 npages);

/*
 * Shared buffers mapped for the CUDA engine in this process, so that it
 * reads pages in place (gpuops_cuda_host_map_start: once a context, after
 * it is up; 0.15-0.7 s a GB of shared_buffers on the H100, in pieces on a
 * thread of the runtime's while queries go on copying).  QueryPagesMapped: done, in the
 * live context (with wait, after waiting for a mapping under way, which a
 * cancel ends); QueryPagesMapStart starts it (true), or finds it started.
 */
extern bool QueryPagesMapped(bool wait);
extern bool QueryPagesMapStart(void);

/*
 * The reader reads pages from now on (its columns must have a pages form:
 * query_deform.h's QueryDeformPagesShape), in place or copied:
 * QueryReaderNext fills a buffer of max_pages pages and max_rows rows of
 * its own (max_pages > 0), QueryReaderNextPages one the caller gives.
 * QueryReaderUnpinPages drops the pins of its own buffer's last fill.
 */
extern void QueryReaderUsePages(QueryReader *r, uint32 max_pages, uint32 max_rows, bool in_place);
extern uint32 QueryReaderNextPages(QueryReader *r, QueryPagesBuf *buf);
extern void QueryReaderUnpinPages(QueryReader *r);

/*
 * Pins the reader's own pages buffer for the CUDA engine's copies (after
 * its first device call); unpinned when the reader's context goes.
 * Whether it is pinned.
 */
extern bool QueryReaderPinPages(QueryReader *r);
/* (QueryReaderNextPages: the rows of the pages put in buf, 0 at the end) */
extern void QueryReaderRescan(QueryReader *r); /* after table_rescan of the scan */
extern void QueryReaderStatsGet(const QueryReader *r, QueryReaderStats *stats);
extern void QueryReaderEnd(QueryReader *r);

#endif /* GPUOPS_QUERY_READER_H */
