/*
 * query_reader_test.cpp
 *    Test-only SQL functions over GpuQuery's fact-table reader
 *    (query_reader.h), so the reader can be checked and timed before the
 *    node that uses it.  Not in the extension's script: a test declares
 *    them itself (CREATE FUNCTION ... AS '$libdir/gpuops', superuser only):
 *
 *    gpuops_read_rows(rel regclass, attnums int2[], nthreads int,
 *                     batch_rows int) RETURNS SETOF text[]
 *        every row read, each column's word decoded back to text (NULL
 *        as NULL): integers as int64 (dates as days from 2000-01-01,
 *        bools as 0/1), floats as %.17g, numerics at their fewest decimal
 *        places ("unknown" for the unknown word), bytes as the string.  A
 *        read that escapes raises a NOTICE with the reason and stops.
 *
 *    gpuops_read_bench(rel regclass, attnums int2[], nthreads int,
 *                      batch_rows int, OUT rows int8, OUT batches int8,
 *                      OUT pages int8, OUT threads int, OUT ms float8,
 *                      OUT cpu_ms float8, OUT checksum int8,
 *                      OUT escape text) RETURNS record
 *        the same read with nothing but a checksum of the words (row by
 *        row: the same whatever the threads and batch size); ms is the
 *        reader's wall time, cpu_ms the process's CPU time (every
 *        thread's) over the read and checksum.
 */
extern "C" {
#include "postgres.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(gpuops_read_rows);
PG_FUNCTION_INFO_V1(gpuops_read_bench);
}

#include <time.h>

#include "expr_eval.hpp"
#include "query_reader.h"

/* The form each type is read in. */
static QueryColumnForm
FormOf(Oid type)
{
	switch (type)
	{
		case FLOAT4OID:
			return QCOL_FLOAT4;
		case FLOAT8OID:
			return QCOL_FLOAT8;
		case NUMERICOID:
			return QCOL_NUMERIC;
		case TEXTOID:
		case VARCHAROID:
			return QCOL_TEXT16;
		case BPCHAROID:
			return QCOL_BPCHAR16;
		default:
			return QCOL_INT;
	}
}

typedef struct TestRead
{
	Relation rel;
	TableScanDesc scan;
	MemoryContext cxt;
	QueryReader *reader;
	int ncols;
	QueryReadColumn cols[GPUOPS_QUERY_MAX_COLS];
} TestRead;

static void
TestReadBegin(FunctionCallInfo fcinfo, TestRead *t)
{
	ArrayType *arr = PG_GETARG_ARRAYTYPE_P(1);
	int nthreads = PG_GETARG_INT32(2);
	int batch_rows = PG_GETARG_INT32(3);
	Datum *elems;
	bool *nulls;
	int n;

	t->rel = table_open(PG_GETARG_OID(0), AccessShareLock);
	deconstruct_array(arr, INT2OID, 2, true, TYPALIGN_SHORT, &elems, &nulls, &n);
	if (n < 1 || n > GPUOPS_QUERY_MAX_COLS)
		elog(ERROR, "gpuops_read: 1 to %d attributes", GPUOPS_QUERY_MAX_COLS);
	t->ncols = n;
	for (int c = 0; c < n; c++)
	{
		AttrNumber a = nulls[c] ? 0 : DatumGetInt16(elems[c]);

		if (a < 1 || a > RelationGetDescr(t->rel)->natts)
			elog(ERROR, "gpuops_read: no attribute %d", a);
		t->cols[c].attnum = a;
		t->cols[c].form = FormOf(TupleDescAttr(RelationGetDescr(t->rel), a - 1)->atttypid);
	}
	t->scan = table_beginscan(t->rel, GetActiveSnapshot(), 0, NULL);
	if (!QueryReaderUsable(t->scan))
		elog(ERROR, "gpuops_read: the table cannot be read directly");
	t->cxt = AllocSetContextCreate(CurrentMemoryContext, "gpuops_read", ALLOCSET_DEFAULT_SIZES);
	t->reader = QueryReaderBegin(t->scan, t->cols, n, nthreads, (uint32) batch_rows, t->cxt);
}

static void
TestReadEnd(TestRead *t)
{
	QueryReaderEnd(t->reader);
	MemoryContextDelete(t->cxt);
	table_endscan(t->scan);
	table_close(t->rel, AccessShareLock);
}

/* A numeric word as text: its value at its own scale. */
static char *
NumericText(uint64 w)
{
	int64 m;
	int s;
	uint64 a, p = 1;

	if (!gpuops::expr_num_known(w))
		return pstrdup("unknown");
	m = gpuops::expr_num_mantissa(w);
	s = gpuops::expr_num_scale(w);
	for (int i = 0; i < s; i++)
		p *= 10;
	a = m < 0 ? (uint64) (-m) : (uint64) m;
	if (s == 0)
		return psprintf("%s%llu", m < 0 ? "-" : "", (unsigned long long) a);
	return psprintf("%s%llu.%0*llu", m < 0 ? "-" : "", (unsigned long long) (a / p), s,
					(unsigned long long) (a % p));
}

static Datum
WordText(QueryColumnForm form, const GpuopsQueryBatch *b, int c, uint32 i)
{
	uint64 w = b->cols.words[c] ? b->cols.words[c][i] : 0;
	double d;

	switch (form)
	{
		case QCOL_INT:
			return CStringGetTextDatum(psprintf("%lld", (long long) (int64) w));
		case QCOL_FLOAT4:
		case QCOL_FLOAT8:
			memcpy(&d, &w, sizeof(d));
			return CStringGetTextDatum(psprintf("%.17g", d));
		case QCOL_NUMERIC:
			return CStringGetTextDatum(NumericText(w));
		default:
			{
				char s[17];

				memcpy(s, &b->bytes16[c][2 * (Size) i], 16);
				s[16] = '\0';
				return CStringGetTextDatum(s);
			}
	}
}

extern "C" Datum
gpuops_read_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TestRead t;
	GpuopsQueryBatch b;
	const char *escape;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	TestReadBegin(fcinfo, &t);
	while (QueryReaderNext(t.reader, &b, &escape))
	{
		for (uint32 i = 0; i < b.nrows; i++)
		{
			Datum vals[GPUOPS_QUERY_MAX_COLS];
			bool nulls[GPUOPS_QUERY_MAX_COLS];
			int dims = t.ncols, lbs = 1;
			Datum row;
			bool row_null = false;

			for (int c = 0; c < t.ncols; c++)
			{
				nulls[c] = b.cols.nulls[c] != NULL && b.cols.nulls[c][i];
				vals[c] = nulls[c] ? (Datum) 0 : WordText(t.cols[c].form, &b, c, i);
			}
			row = PointerGetDatum(
				construct_md_array(vals, nulls, 1, &dims, &lbs, TEXTOID, -1, false, TYPALIGN_INT));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &row, &row_null);
		}
	}
	if (escape != NULL)
		ereport(NOTICE, (errmsg("gpuops_read: escape: %s", escape)));
	TestReadEnd(&t);
	return (Datum) 0;
}

extern "C" Datum
gpuops_read_bench(PG_FUNCTION_ARGS)
{
	TupleDesc desc;
	TestRead t;
	GpuopsQueryBatch b;
	const char *escape;
	QueryReaderStats st;
	uint64 sum = 0;
	Datum values[8];
	bool nulls[8] = {false};
	struct timespec cpu0, cpu1;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "gpuops_read_bench must return a record");
	desc = BlessTupleDesc(desc);
	TestReadBegin(fcinfo, &t);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
	/* row by row, so the checksum does not depend on where batches end */
	while (QueryReaderNext(t.reader, &b, &escape))
		for (uint32 i = 0; i < b.nrows; i++)
			for (int c = 0; c < t.ncols; c++)
			{
				sum = sum * 31 + (b.cols.nulls[c] != NULL && b.cols.nulls[c][i]);
				if (b.cols.words[c] != NULL)
					sum = sum * 31 + b.cols.words[c][i];
				else
					sum = (sum * 31 + b.bytes16[c][2 * (Size) i]) * 31 +
						b.bytes16[c][2 * (Size) i + 1];
			}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
	QueryReaderStatsGet(t.reader, &st);
	TestReadEnd(&t);
	values[0] = Int64GetDatum((int64) st.rows);
	values[1] = Int64GetDatum((int64) st.batches);
	values[2] = Int64GetDatum((int64) st.pages);
	values[3] = Int32GetDatum(st.threads);
	values[4] = Float8GetDatum(st.read_ms);
	values[5] = Float8GetDatum((cpu1.tv_sec - cpu0.tv_sec) * 1e3 +
							   (cpu1.tv_nsec - cpu0.tv_nsec) / 1e6);
	values[6] = Int64GetDatum((int64) sum);
	nulls[7] = escape == NULL;
	values[7] = escape ? CStringGetTextDatum(escape) : (Datum) 0;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
