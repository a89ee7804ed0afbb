/*
 * gpu_query_dims.cpp
 *    GpuQuery's dimensions at run time (gpu_query_join.cpp plans them):
 *    each child plan (PostgreSQL's own path for the table, with its quals)
 *    runs to its end once per run, and its rows are staged for the query
 *    backend: the join key as a word (rows with a NULL key cannot join and
 *    are dropped) and each payload column as words, text as dictionary
 *    codes.  The backend builds its lookups from them (gpuops_query.h).
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
#include "utils/memutils.h"
}

#include "device_expr.h"
#include "gpu_query_exec.h"
#include "pg_compat.h"

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
	{
		struct varlena *copy = (struct varlena *) MemoryContextAlloc(cxt, VARSIZE_ANY(t));

		memcpy(copy, t, VARSIZE_ANY(t));
		d->values[d->n] = PointerGetDatum(copy);
	}
	d->hashes[d->n] = h;
	d->slots[pos] = d->n + 1;
	return d->n++;
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

/* Dimension d's rows, from its child plan. */
static void
StageDim(GpuQueryState *st, int d)
{
	const GpuQueryPlan *plan = st->plan;
	const GpuQueryDimPlan *dim = &plan->dims[d];
	GpuQueryDimRows *r = &st->dim_rows[d];
	PlanState *ps = st->dim_ps[d];
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	MemoryContext cxt = st->dims_cxt;

	memset(r, 0, sizeof(*r));
	for (int p = 0; p < dim->npayload; p++)
	{
		int pay = dim->first_pay + p;

		st->dicts[pay] = plan->pay_dict[pay] ? DictNew(cxt, plan->pay_types[pay] == BPCHAROID)
											 : NULL;
	}
	GrowRows(r, dim->npayload, cxt);
	for (;;)
	{
		TupleTableSlot *slot;
		MemoryContext old;
		uint64 n = r->nrows;

		CHECK_FOR_INTERRUPTS();
		slot = ExecProcNode(ps);
		if (TupIsNull(slot))
			break;
		slot_getallattrs(slot);
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

			if (isnull && r->nulls[p] == NULL)
			{
				/* the first NULL: the rows before it had none */
				r->nulls[p] = (uint8 *) MemoryContextAllocHuge(cxt, r->cap);
				memset(r->nulls[p], 0, n);
			}
			if (r->nulls[p] != NULL)
				r->nulls[p][n] = isnull ? 1 : 0;
			if (isnull)
				r->words[p][n] = 0;
			else if (st->dicts[pay] != NULL)
				r->words[p][n] = DictCode(st->dicts[pay], slot->tts_values[pos], cxt);
			else
				r->words[p][n] = DeviceExprWord(slot->tts_values[pos], plan->pay_types[pay]);
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
