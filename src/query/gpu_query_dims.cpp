/*
 * gpu_query_dims.cpp
 *    GpuQuery's dimensions at run time (gpu_query_join.cpp plans them):
 *    each child plan (PostgreSQL's own path for the table, with its quals)
 *    runs to its end once per run, or the table is read from its pages
 *    with its quals as a program (gpu_query_dim_read.cpp), and its rows
 *    are staged for the query backend: the join key as a word (rows with a
 *    NULL key cannot join and are dropped) and each payload column as
 *    words, text as dictionary codes, text tests as bools.  The backend
 *    builds its lookups from them (gpuops_query.h).
 *
 * The staged rows live in the node's dimensions context until the next
 * run that needs them again (new Params); a device failure's CPU run
 * reuses them.  Frames here hold no object with a destructor.
 */
extern "C" {
#include "postgres.h"

#include "common/hashfn.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
}

#include "device_expr.h"
#include "expr_eval.hpp"
#include "gpu_query_exec.h"
#include "guc.h"
#include "query_parallel.h"
#include "pg_compat.h"
#include "query_text_test.h"

/* A value's bytes as the dictionary compares them (bpchar: trailing blanks off). */
static const char *
DictBytes(const GpuQueryDict *d, struct varlena *t, int *len)
{
	const char *data = VARDATA_ANY(t);

	*len = (int) VARSIZE_ANY_EXHDR(t);
	while (d->bpchar && *len > 0 && data[*len - 1] == ' ')
		(*len)--;
	return data;
}

/*
 * A copy of a varlena value that lives as long as the dictionary: cut from
 * 1 MB pieces, since one palloc a value cost more than its copy (a by-row
 * text column keeps every staged row's value: 1.5M a column for TPC-H
 * Q10's customers at SF 10).
 */
static Datum
DictKeep(GpuQueryDict *d, struct varlena *t, MemoryContext cxt)
{
	const Size piece = (Size) 1 << 20;
	Size len = VARSIZE_ANY(t);
	Size room = MAXALIGN(len);
	char *copy;

	if (room > piece / 8)
		copy = (char *) MemoryContextAlloc(cxt, len); /* a long value: its own */
	else
	{
		if (room > d->arena_left)
		{
			d->arena = (char *) MemoryContextAlloc(cxt, piece);
			d->arena_left = piece;
		}
		copy = d->arena;
		d->arena += room;
		d->arena_left -= room;
	}
	memcpy(copy, t, len);
	return PointerGetDatum(copy);
}

static GpuQueryDict *
DictNew(MemoryContext cxt, bool bpchar)
{
	GpuQueryDict *d = (GpuQueryDict *) MemoryContextAllocZero(cxt, sizeof(GpuQueryDict));

	d->cap = 1024;
	d->slots = (uint32 *) MemoryContextAllocZero(cxt, d->cap * sizeof(uint32));
	d->hashes = (uint32 *) MemoryContextAlloc(cxt, d->cap * sizeof(uint32));
	d->values = (Datum *) MemoryContextAlloc(cxt, d->cap * sizeof(Datum));
	d->bpchar = bpchar;
	return d;
}

/* Twice the slots, every code placed again by its hash. */
static void
DictGrow(GpuQueryDict *d, MemoryContext cxt)
{
	uint32 cap = d->cap * 2;

	if (cap > (uint32) 1 << 30)
		elog(ERROR, "gpuops: GpuQuery dictionary of more than 2^29 values");
	d->slots = (uint32 *) MemoryContextAllocHuge(cxt, cap * sizeof(uint32));
	memset(d->slots, 0, cap * sizeof(uint32));
	d->hashes = (uint32 *) repalloc_huge(d->hashes, cap * sizeof(uint32));
	d->values = (Datum *) repalloc_huge(d->values, cap * sizeof(Datum));
	d->cap = cap;
	for (uint32 code = 0; code < d->n; code++)
	{
		uint32 pos = d->hashes[code] & (cap - 1);

		while (d->slots[pos] != 0)
			pos = (pos + 1) & (cap - 1);
		d->slots[pos] = code + 1;
	}
}

/* The code of a text value, given on first sight (the value copied into cxt). */
static uint32
DictCode(GpuQueryDict *d, Datum value, MemoryContext cxt)
{
	struct varlena *t = PG_DETOAST_DATUM_PACKED(value);
	int len;
	const char *data = DictBytes(d, t, &len);
	uint32 h = hash_bytes((const unsigned char *) data, len);
	uint32 pos;

	if (2 * (d->n + 1) > d->cap)
		DictGrow(d, cxt);
	for (pos = h & (d->cap - 1); d->slots[pos] != 0; pos = (pos + 1) & (d->cap - 1))
	{
		uint32 code = d->slots[pos] - 1;
		int olen;
		const char *odata;

		if (d->hashes[code] != h)
			continue;
		odata = DictBytes(d, (struct varlena *) DatumGetPointer(d->values[code]), &olen);
		if (olen == len && memcmp(odata, data, len) == 0)
			return code;
	}
	d->values[d->n] = DictKeep(d, t, cxt);
	d->hashes[d->n] = h;
	d->slots[pos] = d->n + 1;
	return d->n++;
}

/*
 * The code of a text value the reader gave as its stored bytes, zero
 * padded to 16 (text holds no zero byte, so the value is the bytes before
 * the first one).  A direct-mapped memo of recent values spares the
 * varlena, the hash and the probe for most rows: a dimension's text
 * columns hold few distinct values (nations, cities, brands).
 */
static const int kDictMemoBits = 10;

static uint32
DictCodeBytes(GpuQueryDict *d, const uint64 *w, MemoryContext cxt)
{
	uint64 h = (w[0] * UINT64CONST(0x9E3779B97F4A7C15)) ^ (w[1] * UINT64CONST(0xC2B2AE3D27D4EB4F));
	uint64 *e;
	char value[VARHDRSZ_SHORT + 16];
	int len = 16;

	if (d->memo == NULL)
		d->memo = (uint64 *) MemoryContextAllocZero(cxt, sizeof(uint64) * 3 << kDictMemoBits);
	e = d->memo + 3 * (h >> (64 - kDictMemoBits));
	if (e[2] != 0 && e[0] == w[0] && e[1] == w[1])
		return (uint32) (e[2] - 1);
	while (len > 0 && ((const char *) w)[len - 1] == '\0')
		len--;
	SET_VARSIZE_1B(value, VARHDRSZ_SHORT + len);
	memcpy(value + VARHDRSZ_SHORT, w, len);
	e[0] = w[0];
	e[1] = w[1];
	e[2] = (uint64) DictCode(d, PointerGetDatum(value), cxt) + 1;
	return (uint32) (e[2] - 1);
}

/* A by-row dictionary (GpuQueryDict) for a column of type. */
static GpuQueryDict *
DictByRowNew(MemoryContext cxt, Oid type)
{
	GpuQueryDict *d = (GpuQueryDict *) MemoryContextAllocZero(cxt, sizeof(GpuQueryDict));

	d->by_row = true;
	d->cap = 1024;
	d->values = (Datum *) MemoryContextAlloc(cxt, d->cap * sizeof(Datum));
	get_typlenbyval(type, &d->typlen, &d->typbyval);
	return d;
}

/* Row's value (not NULL) kept in a by-row dictionary: its code, the row. */
static uint32
DictRow(GpuQueryDict *d, uint64 row, Datum value, MemoryContext cxt)
{
	if (row >= ((uint64) 1 << 31))
		elog(ERROR, "gpuops: GpuQuery dimension of more than 2^31 rows");
	while (row >= d->cap)
	{
		d->cap *= 2;
		d->values = (Datum *) repalloc_huge(d->values, d->cap * sizeof(Datum));
	}
	if (d->typlen == -1)
		d->values[row] = DictKeep(d, PG_DETOAST_DATUM_PACKED(value), cxt);
	else
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);

		d->values[row] = datumCopy(value, d->typbyval, d->typlen);
		MemoryContextSwitchTo(old);
	}
	d->n = Max(d->n, (uint32) row + 1);
	return (uint32) row;
}

/* Room for twice the rows (the null arrays that exist too). */
static void
GrowRows(GpuQueryDimRows *r, int npayload, MemoryContext cxt)
{
	uint64 cap = r->cap == 0 ? 1024 : r->cap * 2;

	if (r->cap == 0)
	{
		r->keys = (uint64 *) MemoryContextAllocHuge(cxt, cap * sizeof(uint64));
		for (int p = 0; p < npayload; p++)
			r->words[p] = (uint64 *) MemoryContextAllocHuge(cxt, cap * sizeof(uint64));
	}
	else
	{
		r->keys = (uint64 *) repalloc_huge(r->keys, cap * sizeof(uint64));
		for (int p = 0; p < npayload; p++)
		{
			r->words[p] = (uint64 *) repalloc_huge(r->words[p], cap * sizeof(uint64));
			if (r->nulls[p] != NULL)
				r->nulls[p] = (uint8 *) repalloc_huge(r->nulls[p], cap);
		}
	}
	r->cap = cap;
}

/* Dimension d's rows emptied, its dictionaries new. */
static void
BeginRows(GpuQueryState *st, int d)
{
	const GpuQueryPlan *plan = st->plan;
	const GpuQueryDimPlan *dim = &plan->dims[d];
	GpuQueryDimRows *r = &st->dim_rows[d];

	memset(r, 0, sizeof(*r));
	for (int p = 0; p < dim->npayload; p++)
	{
		int pay = dim->first_pay + p;

		st->dicts[pay] = plan->pay_dict[pay] == 2 ? DictByRowNew(st->dims_cxt, plan->pay_types[pay])
			: plan->pay_dict[pay] ? DictNew(st->dims_cxt, plan->pay_types[pay] == BPCHAROID)
								  : NULL;
	}
	GrowRows(r, dim->npayload, st->dims_cxt);
}

/*
 * The rows of a batch of dimension d's columns that its quals pass, with a
 * key, staged as the child plan's staging would.  Why it stops (a row the
 * quals' program cannot decide), or NULL.
 */
static const char *
StageBatch(GpuQueryState *st, int d, const GpuopsQueryBatch *batch, bool filtered)
{
	const GpuQueryDimPlan *dim = &st->plan->dims[d];
	const GpuopsExprProgram *qual = filtered ? NULL : st->dim_read_qual[d];
	GpuQueryDimRows *r = &st->dim_rows[d];
	MemoryContext cxt = st->dims_cxt;

	if (qual == NULL && batch->cols.nulls[dim->key_read] == NULL)
	{
		/* every row kept: each column at once */
		uint64 n = r->nrows;

		while (r->cap < n + batch->nrows)
			GrowRows(r, dim->npayload, cxt);
		memcpy(r->keys + n, batch->cols.words[dim->key_read], sizeof(uint64) * batch->nrows);
		for (int p = 0; p < dim->npayload; p++)
		{
			const uint8 *nulls = batch->cols.nulls[dim->pay_read[p]];
			GpuQueryDict *dict = st->dicts[dim->first_pay + p];

			if (dict != NULL)
				for (uint32 i = 0; i < batch->nrows; i++)
					r->words[p][n + i] = nulls != NULL && nulls[i]
						? 0
						: DictCodeBytes(dict, batch->bytes16[dim->pay_read[p]] + 2 * (Size) i, cxt);
			else
				memcpy(r->words[p] + n, batch->cols.words[dim->pay_read[p]],
					   sizeof(uint64) * batch->nrows);
			if (nulls != NULL && r->nulls[p] == NULL)
			{
				r->nulls[p] = (uint8 *) MemoryContextAllocHuge(cxt, r->cap);
				memset(r->nulls[p], 0, n);
			}
			if (r->nulls[p] != NULL)
			{
				if (nulls != NULL)
					memcpy(r->nulls[p] + n, nulls, batch->nrows);
				else
					memset(r->nulls[p] + n, 0, batch->nrows);
			}
		}
		r->nrows = n + batch->nrows;
		return NULL;
	}
	for (uint32 i = 0; i < batch->nrows; i++)
	{
		QueryBatchRow row = {batch, i};
		uint64 n = r->nrows;

		if (qual != NULL)
		{
			GpuopsExprResult res = gpuops::expr_eval(qual->steps, qual->nsteps, qual->consts,
													 qual->const_null, row, row);

			if (res == GPUOPS_EXPR_RECHECK)
				return "a row its quals' program cannot decide";
			if (res != GPUOPS_EXPR_TRUE)
				continue;
		}
		/* a NULL key joins nothing */
		if (row.null(dim->key_read))
			continue;
		if (n == r->cap)
			GrowRows(r, dim->npayload, cxt);
		r->keys[n] = row.word(dim->key_read);
		for (int p = 0; p < dim->npayload; p++)
		{
			bool isnull = row.null(dim->pay_read[p]);

			if (isnull && r->nulls[p] == NULL)
			{
				r->nulls[p] = (uint8 *) MemoryContextAllocHuge(cxt, r->cap);
				memset(r->nulls[p], 0, n);
			}
			if (r->nulls[p] != NULL)
				r->nulls[p][n] = isnull ? 1 : 0;
			r->words[p][n] = isnull ? 0
				: st->dicts[dim->first_pay + p] != NULL
				? DictCodeBytes(st->dicts[dim->first_pay + p],
								batch->bytes16[dim->pay_read[p]] + 2 * (Size) i, cxt)
				: row.word(dim->pay_read[p]);
		}
		r->nrows = n + 1;
	}
	return NULL;
}

/*
 * Dimension d read from its pages (gpu_query_dim_read.cpp), by the leader
 * and, where the plan gives it some and the run may start them, parallel
 * workers (query_parallel.h) that read their shares into batches as they
 * do the fact table's.  False, with st->dim_read_why[d] set, where the
 * reader or the quals' program cannot decide a row: the caller stages it
 * through the child plan instead.
 */
static bool
ReadDim(GpuQueryState *st, int d)
{
	const GpuQueryDimPlan *dim = &st->plan->dims[d];
	EState *estate = st->css.ss.ps.state;
	uint32 rows = QueryReaderBatchRows(st->dim_read_cols[d], dim->read_ncols);
	int nworkers = dim->read_workers;
	MemoryContext read_cxt, old;
	Relation rel;
	TableScanDesc scan = NULL;
	QueryReader *reader;
	QueryParallel *par = NULL;
	bool own_done = false;
	bool from_worker = false;
	GpuopsQueryBatch batch;
	const char *why = NULL;

	if (st->dim_read_rti[d] == 0)
	{
		st->dim_read_why[d] = "its plan does not scan the table";
		return false;
	}
	rel = GpuopsGetRangeTableRelation(estate, st->dim_read_rti[d]);
	/* room for every row at once (untouched pages cost nothing): no copy as it grows */
	while ((double) st->dim_rows[d].cap < rel->rd_rel->reltuples)
		GrowRows(&st->dim_rows[d], dim->npayload, st->dims_cxt);
	if (nworkers <= 0 || !estate->es_use_parallel_mode || !QueryParallelPossible() ||
		!IsMVCCSnapshot(estate->es_snapshot))
		nworkers = 0;
	read_cxt = AllocSetContextCreate(st->dims_cxt, "GpuQuery dimension read",
									 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(read_cxt);
	if (nworkers > 0)
	{
		/* a slot a batch, fewer rows for a small table: every process gets some */
		double reltuples = rel->rd_rel->reltuples;
		uint32 slot_rows =
			((uint32) (reltuples > 0 ? Min(rows, Max(1024.0, reltuples / (2.0 * (nworkers + 1))))
									 : rows) +
			 7) &
			~7u;

		/* the workers run the quals: the leader copies the rows they keep */
		par = QueryParallelBegin(
			rel, estate->es_snapshot, st->dim_read_cols[d], dim->read_ncols, nworkers, slot_rows, 0,
			false, gpuops_reader_threads > 0 ? Max(gpuops_reader_threads / (nworkers + 1), 1) : 0,
			st->dim_read_qual[d], 0);
		reader = QueryReaderBegin(QueryParallelLeaderScan(par), st->dim_read_cols[d],
								  dim->read_ncols, 0, Max(slot_rows / 4, 1024u) & ~7u, read_cxt);
	}
	else
	{
		scan = table_beginscan(rel, estate->es_snapshot, 0, NULL);
		reader = QueryReaderUsable(scan)
			? QueryReaderBegin(scan, st->dim_read_cols[d], dim->read_ncols, gpuops_reader_threads,
							   (uint32) rows & ~7u, read_cxt)
			: NULL;
		if (reader == NULL)
			why = "a scan the reader cannot take";
	}
	MemoryContextSwitchTo(old);
	while (why == NULL &&
		   (par != NULL
				? QueryParallelNextBatch(par, reader, &own_done, &batch, &why, &from_worker, NULL)
				: QueryReaderNext(reader, &batch, &why)))
	{
		why = StageBatch(st, d, &batch, from_worker);
		if (par != NULL)
			QueryParallelRelease(par);
	}
	/* the reason outlives the workers' context (EXPLAIN) */
	if (why != NULL)
		why = MemoryContextStrdup(st->dims_cxt, why);
	if (reader != NULL)
		QueryReaderEnd(reader);
	if (par != NULL)
	{
		QueryReaderStats ignored;

		QueryParallelEnd(par, &ignored);
	}
	if (scan != NULL)
		table_endscan(scan);
	MemoryContextDelete(read_cxt);
	st->dim_read_why[d] = why;
	return why == NULL;
}

/* Dimension d's rows, from its pages or its child plan. */
static void
StageDim(GpuQueryState *st, int d)
{
	const GpuQueryPlan *plan = st->plan;
	const GpuQueryDimPlan *dim = &plan->dims[d];
	GpuQueryDimRows *r = &st->dim_rows[d];
	PlanState *ps = st->dim_ps[d];
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	MemoryContext cxt = st->dims_cxt;
	int last_pos = dim->key_pos;

	/* the child's columns read: up to the last one staged */
	for (int p = 0; p < dim->npayload; p++)
		last_pos = Max(last_pos, plan->pay_pos[dim->first_pay + p]);
	BeginRows(st, d);
	st->dim_read_why[d] = NULL;
	if (OidIsValid(dim->read_relid))
	{
		if (ReadDim(st, d))
			return;
		BeginRows(st, d); /* from the start, through the plan */
	}
	for (;;)
	{
		TupleTableSlot *slot;
		MemoryContext old;
		uint64 n = r->nrows;

		CHECK_FOR_INTERRUPTS();
		slot = ExecProcNode(ps);
		if (TupIsNull(slot))
			break;
		slot_getsomeattrs(slot, last_pos + 1);
		/* a NULL key joins nothing */
		if (slot->tts_isnull[dim->key_pos])
			continue;
		if (n == r->cap)
			GrowRows(r, dim->npayload, cxt);
		ResetExprContext(econtext);
		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		r->keys[n] = DeviceExprWord(slot->tts_values[dim->key_pos], dim->key_type);
		for (int p = 0; p < dim->npayload; p++)
		{
			int pay = dim->first_pay + p;
			int pos = plan->pay_pos[pay];
			bool isnull = slot->tts_isnull[pos];
			uint64 word = 0; /* a NULL's */

			if (isnull)
				word = 0;
			else if (st->pay_tests[pay] != NULL)
			{
				/* a text test, evaluated as the reader does for the fact table */
				struct varlena *t = PG_DETOAST_DATUM_PACKED(slot->tts_values[pos]);
				int res = QueryTextTestEval(st->pay_tests[pay], VARDATA_ANY(t),
											VARSIZE_ANY_EXHDR(t));

				isnull = res < 0;
				word = isnull ? 0 : (uint64) res;
			}
			else if (st->dicts[pay] != NULL && st->dicts[pay]->by_row)
				word = DictRow(st->dicts[pay], n, slot->tts_values[pos], cxt);
			else if (st->dicts[pay] != NULL)
				word = DictCode(st->dicts[pay], slot->tts_values[pos], cxt);
			else
				word = DeviceExprWord(slot->tts_values[pos], plan->pay_types[pay]);
			if (isnull && r->nulls[p] == NULL)
			{
				/* the first NULL: the rows before it had none */
				r->nulls[p] = (uint8 *) MemoryContextAllocHuge(cxt, r->cap);
				memset(r->nulls[p], 0, n);
			}
			if (r->nulls[p] != NULL)
				r->nulls[p][n] = isnull ? 1 : 0;
			r->words[p][n] = word;
		}
		MemoryContextSwitchTo(old);
		r->nrows = n + 1;
	}
}

void
GpuQueryStageDims(GpuQueryState *st)
{
	instr_time start, end;

	if (st->dims_staged || st->plan->ndims == 0)
		return;
	INSTR_TIME_SET_CURRENT(start);
	MemoryContextReset(st->dims_cxt);
	memset(st->dicts, 0, sizeof(st->dicts));
	for (int d = 0; d < st->plan->ndims; d++)
	{
		if (st->dims_ran)
			ExecReScan(st->dim_ps[d]);
		StageDim(st, d);
	}
	st->dims_ran = true;
	st->dims_staged = true;
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	st->dims_ms = INSTR_TIME_GET_MILLISEC(end);
}

void
GpuQueryDimSpec(GpuQueryState *st, GpuopsQuerySpec *spec)
{
	const GpuQueryPlan *plan = st->plan;

	spec->ndims = plan->ndims;
	for (int d = 0; d < plan->ndims; d++)
	{
		const GpuQueryDimPlan *dim = &plan->dims[d];
		const GpuQueryDimRows *r = &st->dim_rows[d];
		GpuopsQueryDim *q = &spec->dims[d];

		q->kind = dim->kind;
		q->key_col = dim->key_col;
		q->nrows = r->nrows;
		q->keys = r->keys;
		q->npayload = dim->npayload;
		for (int p = 0; p < dim->npayload; p++)
		{
			q->words[p] = r->words[p];
			q->nulls[p] = r->nulls[p];
		}
	}
	spec->join_qual = st->join_qual;
}

Datum
GpuQueryDictValue(const GpuQueryState *st, int pay, uint64 code)
{
	const GpuQueryDict *d = pay >= 0 && pay < GPUOPS_QUERY_MAX_COLS ? st->dicts[pay] : NULL;

	if (d == NULL || code >= d->n)
		elog(ERROR, "gpuops: GpuQuery group key code %llu without a value",
			 (unsigned long long) code);
	return d->values[code];
}
