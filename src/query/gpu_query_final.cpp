/*
 * gpu_query_final.cpp
 *    GpuQuery's results: a group's packed key (gpuops_query.h) back into
 *    the key columns' Datums, its aggregate states into PostgreSQL's
 *    results through GpuAgg's finalization (gpu_agg_final.cpp): the same
 *    result types, NULL for no input, numeric sums at their display scale
 *    and avg through numeric_div, as numeric_sum and numeric_avg.
 *
 * One visible difference: a float key group holding -0 and 0 shows 0
 * (PostgreSQL shows the value of the group's first row, -0 possible).
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/timestamp.h"
}

#include <cstring>

#include "gpu_query_exec.h"

/* An integer-like word (int64, sign-extended) as a Datum of type. */
static Datum
IntWordDatum(uint64 word, Oid type)
{
	int64 v = (int64) word;

	switch (type)
	{
		case INT2OID:
			return Int16GetDatum((int16) v);
		case INT4OID:
			return Int32GetDatum((int32) v);
		case DATEOID:
			return DateADTGetDatum((DateADT) v);
		case BOOLOID:
			return BoolGetDatum(v != 0);
		case TIMEOID:
			return TimeADTGetDatum((TimeADT) v);
		case TIMESTAMPOID:
			return TimestampGetDatum((Timestamp) v);
		case TIMESTAMPTZOID:
			return TimestampTzGetDatum((TimestampTz) v);
		default:
			return Int64GetDatum(v);
	}
}

static Datum
FloatWordDatum(uint64 word, Oid type)
{
	double d;

	memcpy(&d, &word, sizeof(d));
	return type == FLOAT4OID ? Float4GetDatum((float4) d) : Float8GetDatum(d);
}

/*
 * A short text key: its bytes (up to 16, zero padded; text has no zero
 * byte).  bpchar(n) comes back padded to n characters, as every stored
 * value of the column is.
 */
static Datum
BytesDatum(const uint64 *words, Oid type, int32 typmod)
{
	char buf[16 + 4 * 16];
	int len;

	memcpy(buf, words, 16);
	len = (int) strnlen(buf, 16);
	if (type == BPCHAROID && typmod >= (int32) VARHDRSZ)
	{
		int n = typmod - VARHDRSZ;
		int chars = pg_mbstrlen_with_len(buf, len);

		while (chars < n && len < (int) sizeof(buf))
		{
			buf[len++] = ' ';
			chars++;
		}
	}
	return PointerGetDatum(cstring_to_text_with_len(buf, len));
}

TupleTableSlot *
GpuQueryGroupRow(GpuQueryState *st, int64 g, TupleTableSlot *slot)
{
	static const GpuopsAggResult empty = {};
	const GpuQueryPlan *plan = st->plan;
	int nkeys = plan->nkeys;
	int natts = slot->tts_tupleDescriptor->natts;
	MemoryContext old;

	ExecClearTuple(slot);
	old = MemoryContextSwitchTo(st->css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory);
	if (nkeys > 0 && g >= 0)
	{
		const uint64 *w = st->group_keys + (uint64) g * (uint64) st->key_words;
		int at = 1; /* word 0: the NULL bits */

		for (int k = 0; k < nkeys; k++)
		{
			const GpuQueryKeyPlan *key = &plan->keys[k];
			bool isnull = (w[0] >> k) & 1;

			slot->tts_isnull[k] = isnull;
			slot->tts_values[k] = (Datum) 0;
			if (!isnull)
			{
				switch (key->kind)
				{
					case GPUOPS_QKEY_INT:
						slot->tts_values[k] = key->dict
							? GpuQueryDictValue(st, key->col - plan->ncols, w[at])
							: IntWordDatum(w[at], key->type);
						break;
					case GPUOPS_QKEY_FLOAT:
						slot->tts_values[k] = FloatWordDatum(w[at], key->type);
						break;
					case GPUOPS_QKEY_BYTES16:
						slot->tts_values[k] = BytesDatum(&w[at], key->type, key->typmod);
						break;
				}
			}
			at += key->kind == GPUOPS_QKEY_BYTES16 ? 2 : 1;
		}
	}
	for (int a = 0; a < plan->naggs - plan->nhidden; a++)
	{
		const GpuAggDesc *d = &st->aggs[a];
		GpuopsAggResult r = g >= 0 ? st->results[(uint64) g * plan->naggs + a] : empty;
		Datum value = (Datum) 0;
		int h = plan->aggs[a].scale_agg;
		GpuAggDesc shown;

		if (h >= 0 && r.count > 0)
		{
			/* the largest display scale among the values added (AddScaleAgg), exact */
			const GpuopsAggResult *hr = &st->results[(uint64) g * plan->naggs + h];
			__int128 sum = (__int128) (((unsigned __int128) (uint64) r.sum_hi << 64) | r.sum_lo);

			shown = *d;
			shown.scale = hr->count > 0 ? (int) (int64) hr->row : d->scale;
			for (int s = shown.scale; s < d->scale; s++)
				sum /= 10;
			r.sum_lo = (uint64) sum;
			r.sum_hi = (int64) (sum >> 64);
			d = &shown;
		}
		if (d->final == GPUAGG_FINAL_VALUE && r.count > 0)
			value = IntWordDatum(r.row, d->arg_type);
		if (d->final == GPUAGG_FINAL_FLOAT_FN)
		{
			/* avg: float8_avg reads N and Sx; the backend keeps no Sxx */
			r.sxx = 0;
			r.overflow &= 1;
		}
		slot->tts_values[nkeys + a] = GpuAggResultDatum(d, &r, value, (Datum) 0,
														&slot->tts_isnull[nkeys + a]);
	}
	/* the quals' Vars (resjunk, for EXPLAIN) */
	for (int c = nkeys + plan->naggs - plan->nhidden; c < natts; c++)
	{
		slot->tts_values[c] = (Datum) 0;
		slot->tts_isnull[c] = true;
	}
	MemoryContextSwitchTo(old);
	return ExecStoreVirtualTuple(slot);
}
