/*
 * gpu_agg_dict.cpp
 *    GpuAgg's text columns as numbers the device can group and compare,
 *    and each group key's columns and packed words as the device sees
 *    them (read by the merge of chunks and the host numeric sums too).
 *
 * A text group key needs only equality: each distinct byte string (after
 * detoasting) gets a number from a dictionary, in the order first seen.
 * min(text) and max(text) need the collation's order: their argument's
 * dictionary is sorted with PostgreSQL's own comparator (varstr_cmp, under
 * the aggregate's collation) and the numbers become ranks, so the device's
 * least and greatest rank are the collation's least and greatest string.
 * percentile_disc(f) WITHIN GROUP (ORDER BY text) uses the same ranks;
 * count(DISTINCT text) needs only equality, so the first-seen numbers.
 * Only deterministic collations are planned, under which two strings
 * compare equal only when their bytes are equal: ranks are then a total
 * order and a tie is the same string.
 *
 * numeric and char(n) group keys and the arguments of min, max,
 * count(DISTINCT) and percentile_disc of numeric and char(n) are ranked the
 * same way, by numeric_cmp or bpcharcmp, with equal values (1.0 and 1.00;
 * 'a' and 'a  ') given equal ranks: one group, one distinct value, a tie
 * for min/max.  Their dictionary keys are the whole detoasted varlena, so an
 * entry is itself a value the comparator can read.
 *
 * Dictionaries and their per-batch numbers live in dict_cxt; the host
 * merge of chunked aggregation reads them again.
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/varlena.h"
}

#include "agg_common.hpp"
#include "gpu_agg_exec.h"

static uint32
DictHash(const void *key, Size)
{
	const DictKey *k = (const DictKey *) key;

	return DatumGetUInt32(hash_any((const unsigned char *) k->data, (int) k->len));
}

static int
DictMatch(const void *a, const void *b, Size)
{
	const DictKey *x = (const DictKey *) a;
	const DictKey *y = (const DictKey *) b;

	return x->len == y->len && memcmp(x->data, y->data, x->len) == 0 ? 0 : 1;
}

static HTAB *
DictCreate(GpuAggState *st)
{
	HASHCTL ctl;

	ctl.keysize = sizeof(DictKey);
	ctl.entrysize = sizeof(DictEntry);
	ctl.hash = DictHash;
	ctl.match = DictMatch;
	ctl.hcxt = st->dict_cxt;
	return hash_create("GpuAgg dictionary", 1024, &ctl,
					   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
}

/*
 * Text column `col` of one batch as numbers: equal byte strings get equal
 * numbers (1, 2, ...).  NULLs get 0 (their null bit sets them apart).
 */
static uint64 *
DictionaryColumn(GpuAggState *st, HTAB *dict, int col, GpuopsBatch *batch, bool whole)
{
	uint64 *ids = (uint64 *) MemoryContextAlloc(st->dict_cxt,
												Max(batch->nrows, 1) * sizeof(uint64));
	MemoryContext old = MemoryContextSwitchTo(st->scratch_cxt);

	for (uint32 i = 0; i < batch->nrows; i++)
	{
		bool isnull;
		Datum d = GpuopsBatchDatum(st->store(), batch, col, i, &isnull);
		struct varlena *v;
		DictKey key;
		DictEntry *e;
		bool found;

		if (isnull)
		{
			ids[i] = 0;
			continue;
		}
		if (whole)
		{
			/* a 4-byte header: the copy is a value the type's functions read */
			v = pg_detoast_datum((struct varlena *) DatumGetPointer(d));
			key.data = (const char *) v;
			key.len = VARSIZE(v);
		}
		else
		{
			v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(d));
			key.data = VARDATA_ANY(v);
			key.len = VARSIZE_ANY_EXHDR(v);
		}
		e = (DictEntry *) hash_search(dict, &key, HASH_ENTER, &found);
		if (!found)
		{
			/* the entry keeps its own copy (aligned): a detoasted value is freed with the batch */
			char *copy = (char *) MemoryContextAlloc(st->dict_cxt, Max(key.len, 1));

			memcpy(copy, key.data, key.len);
			e->key.data = copy;
			e->key.len = key.len;
			e->id = hash_get_num_entries(dict);
		}
		ids[i] = e->id;
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->scratch_cxt);
	return ids;
}

/* Every stored batch of column `col` (of `type`) as numbers of one new dictionary. */
static uint64 **
DictionaryColumns(GpuAggState *st, int col, Oid type, HTAB **dict)
{
	uint64 **ids = (uint64 **) MemoryContextAlloc(st->dict_cxt,
												  sizeof(uint64 *) * Max(st->store()->nbatches, 1));

	*dict = DictCreate(st);
	for (int b = 0; b < st->store()->nbatches; b++)
	{
		ids[b] = DictionaryColumn(st, *dict, col, st->store()->batches[b],
								  type == NUMERICOID || type == BPCHAROID);
		CHECK_FOR_INTERRUPTS();
	}
	return ids;
}

typedef struct RankOrder
{
	Oid type;	   /* NUMERICOID, BPCHAROID, or text */
	Oid collation; /* text, bpchar */
} RankOrder;

static int
RankCompareEntries(const DictEntry *x, const DictEntry *y, const RankOrder *order)
{
	if (order->type == NUMERICOID)
		return DatumGetInt32(DirectFunctionCall2(numeric_cmp, PointerGetDatum(x->key.data),
												 PointerGetDatum(y->key.data)));
	if (order->type == BPCHAROID)
		return DatumGetInt32(DirectFunctionCall2Coll(bpcharcmp, order->collation,
													 PointerGetDatum(x->key.data),
													 PointerGetDatum(y->key.data)));
	return varstr_cmp(x->key.data, (int) x->key.len, y->key.data, (int) y->key.len,
					  order->collation);
}

static int
RankCompare(const void *a, const void *b, void *arg)
{
	return RankCompareEntries(*(const DictEntry *const *) a, *(const DictEntry *const *) b,
							  (const RankOrder *) arg);
}

/*
 * Renumbers a dictionary's numbers (in ids, per batch) as ranks in the
 * type's order: the least value 1, equal values one rank.
 */
static void
RankDictionary(GpuAggState *st, HTAB *dict, uint64 **ids, Oid type, Oid collation)
{
	RankOrder order = {type, collation};
	uint64 r = 0;
	long n = hash_get_num_entries(dict);
	DictEntry **sorted = (DictEntry **) MemoryContextAllocHuge(st->dict_cxt,
															   sizeof(DictEntry *) * Max(n, 1));
	uint64 *rank = (uint64 *) MemoryContextAllocHuge(st->dict_cxt, sizeof(uint64) * (n + 1));
	HASH_SEQ_STATUS seq;
	DictEntry *e;
	long i = 0;

	hash_seq_init(&seq, dict);
	while ((e = (DictEntry *) hash_seq_search(&seq)) != NULL)
		sorted[i++] = e;
	qsort_arg(sorted, n, sizeof(DictEntry *), RankCompare, &order);
	rank[0] = 0;
	for (i = 0; i < n; i++)
	{
		if (i == 0 || RankCompareEntries(sorted[i - 1], sorted[i], &order) != 0)
			r++;
		rank[sorted[i]->id] = r;
	}
	for (int b = 0; b < st->store()->nbatches; b++)
	{
		for (uint32 row = 0; row < st->store()->batches[b]->nrows; row++)
			ids[b][row] = rank[ids[b][row]];
		CHECK_FOR_INTERRUPTS();
	}
}

void
GpuAggEncode(GpuAggState *st)
{
	MemoryContextReset(st->dict_cxt);
	for (int k = 0; k < st->nkeys; k++)
	{
		st->dict[k] = NULL;
		st->dict_ids[k] = NULL;
		if (st->key_enc[k] == GPUAGG_KEY_VALUE)
			continue;
		st->dict_ids[k] = DictionaryColumns(st, k, st->key_type[k], &st->dict[k]);
		if (st->key_enc[k] == GPUAGG_KEY_RANKED)
			RankDictionary(st, st->dict[k], st->dict_ids[k], st->key_type[k], st->key_collation[k]);
	}
	for (int a = 0; a < st->naggs; a++)
	{
		const GpuAggDesc *d = &st->aggs[a];
		HTAB *dict;

		st->arg_ids[a] = NULL;
		/* SCALED: gpu_agg_numeric.cpp */
		if (d->arg_enc == GPUAGG_KEY_VALUE || d->arg_enc == GPUAGG_KEY_SCALED)
			continue;
		/* min(t) and max(t) of one column share its ranks */
		for (int p = 0; p < a && st->arg_ids[a] == NULL; p++)
			if (st->arg_ids[p] != NULL && st->aggs[p].arg_col == d->arg_col &&
				st->aggs[p].arg_enc == d->arg_enc && st->aggs[p].collation == d->collation)
				st->arg_ids[a] = st->arg_ids[p];
		if (st->arg_ids[a] != NULL)
			continue;
		st->arg_ids[a] = DictionaryColumns(st, d->arg_col, d->arg_type, &dict);
		if (d->arg_enc == GPUAGG_KEY_RANKED)
			RankDictionary(st, dict, st->arg_ids[a], d->arg_type, d->collation);
	}
}

const char *
GpuAggKeyColumn(GpuAggState *st, int k, int b)
{
	if (st->key_enc[k] != GPUAGG_KEY_VALUE)
		return (const char *) st->dict_ids[k][b];
	return st->store()->batches[b]->values[k];
}

const char *
GpuAggValueColumn(GpuAggState *st, int a, int b)
{
	if (st->arg_ids[a] != NULL)
		return (const char *) st->arg_ids[a][b];
	return st->store()->batches[b]->values[st->aggs[a].arg_col];
}

/* The 64-bit words of a group key packed for comparison (agg_pack_key). */
int
GpuAggKeyWords(GpuAggState *st)
{
	GpuopsAggSpec spec;

	/* the group key alone: no ordered aggregate's sub-key */
	memset(&spec, 0, sizeof(spec));
	spec.order_agg = -1;
	spec.nkeys = st->nkeys;
	for (int k = 0; k < st->nkeys; k++)
		spec.keys[k] = st->key_kind[k];
	return gpuops::agg_key_words(spec);
}

void
GpuAggRowKey(GpuAggState *st, uint64 row, uint64 *words, int nwords)
{
	int b = (int) (row >> GPUOPS_BATCH_SHIFT);
	uint32 i = (uint32) (row & (GPUOPS_BATCH_ROWS - 1));
	const uint8 *keys[GPUOPS_MAX_SORT_KEYS];
	const uint8 *nulls[GPUOPS_MAX_SORT_KEYS];

	for (int k = 0; k < st->nkeys; k++)
	{
		keys[k] = (const uint8 *) GpuAggKeyColumn(st, k, b);
		nulls[k] = st->store()->batches[b]->nulls[k];
	}
	gpuops::agg_pack_key(st->key_kind, st->nkeys, keys, nulls, i, words, nwords);
}
