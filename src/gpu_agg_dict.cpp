/*
 * gpu_agg_dict.cpp
 *    GpuAgg's text columns as numbers the device can group and compare.
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
 * Dictionaries and their per-batch numbers live in dict_cxt; the host
 * merge of chunked aggregation reads them again.
 */
extern "C" {
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/varlena.h"
}

#include "gpu_agg_exec.h"

static uint32
DictHash(const void *key, Size keysize)
{
	const DictKey *k = (const DictKey *) key;

	return DatumGetUInt32(hash_any((const unsigned char *) k->data, (int) k->len));
}

static int
DictMatch(const void *a, const void *b, Size keysize)
{
	const DictKey *x = (const DictKey *) a;
	const DictKey *y = (const DictKey *) b;

	return x->len == y->len && memcmp(x->data, y->data, x->len) == 0 ? 0 : 1;
}

static HTAB *
DictCreate(GpuAggState *st)
{
	HASHCTL		ctl;

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
DictionaryColumn(GpuAggState *st, HTAB *dict, int col, GpuopsBatch *batch)
{
	uint64	   *ids = (uint64 *) MemoryContextAlloc(st->dict_cxt,
													Max(batch->nrows, 1) * sizeof(uint64));
	MemoryContext old = MemoryContextSwitchTo(st->scratch_cxt);

	for (uint32 i = 0; i < batch->nrows; i++)
	{
		bool		isnull;
		Datum		d = GpuopsBatchDatum(&st->store, batch, col, i, &isnull);
		struct varlena *v;
		DictKey		key;
		DictEntry  *e;
		bool		found;

		if (isnull)
		{
			ids[i] = 0;
			continue;
		}
		v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(d));
		key.data = VARDATA_ANY(v);
		key.len = VARSIZE_ANY_EXHDR(v);
		e = (DictEntry *) hash_search(dict, &key, HASH_ENTER, &found);
		if (!found)
		{
			/* the entry keeps its own copy: a detoasted value is freed with the batch */
			char	   *copy = (char *) MemoryContextAlloc(st->dict_cxt, Max(key.len, 1));

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

/* Every stored batch of text column `col` as numbers of one new dictionary. */
static uint64 **
DictionaryColumns(GpuAggState *st, int col, HTAB **dict)
{
	uint64	  **ids = (uint64 **) MemoryContextAlloc(st->dict_cxt,
													 sizeof(uint64 *) * Max(st->store.nbatches, 1));

	*dict = DictCreate(st);
	for (int b = 0; b < st->store.nbatches; b++)
	{
		ids[b] = DictionaryColumn(st, *dict, col, st->store.batches[b]);
		CHECK_FOR_INTERRUPTS();
	}
	return ids;
}

static int
RankCompare(const void *a, const void *b, void *arg)
{
	const DictEntry *x = *(const DictEntry *const *) a;
	const DictEntry *y = *(const DictEntry *const *) b;

	return varstr_cmp(x->key.data, (int) x->key.len, y->key.data, (int) y->key.len,
					  *(const Oid *) arg);
}

/*
 * Renumbers a dictionary's numbers (in ids, per batch) as ranks in the
 * collation's order: the least string 1.
 */
static void
RankDictionary(GpuAggState *st, HTAB *dict, uint64 **ids, Oid collation)
{
	long		n = hash_get_num_entries(dict);
	DictEntry **sorted = (DictEntry **) MemoryContextAllocHuge(st->dict_cxt,
															   sizeof(DictEntry *) * Max(n, 1));
	uint64	   *rank = (uint64 *) MemoryContextAllocHuge(st->dict_cxt, sizeof(uint64) * (n + 1));
	HASH_SEQ_STATUS seq;
	DictEntry  *e;
	long		i = 0;

	hash_seq_init(&seq, dict);
	while ((e = (DictEntry *) hash_seq_search(&seq)) != NULL)
		sorted[i++] = e;
	qsort_arg(sorted, n, sizeof(DictEntry *), RankCompare, &collation);
	rank[0] = 0;
	for (i = 0; i < n; i++)
		rank[sorted[i]->id] = (uint64) i + 1;
	for (int b = 0; b < st->store.nbatches; b++)
	{
		for (uint32 r = 0; r < st->store.batches[b]->nrows; r++)
			ids[b][r] = rank[ids[b][r]];
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
		if (st->key_enc[k] == GPUAGG_KEY_DICTIONARY)
			st->dict_ids[k] = DictionaryColumns(st, k, &st->dict[k]);
	}
	for (int a = 0; a < st->naggs; a++)
	{
		const GpuAggDesc *d = &st->aggs[a];
		HTAB	   *dict;

		st->arg_ids[a] = NULL;
		if (d->arg_enc == GPUAGG_KEY_VALUE)
			continue;
		/* min(t) and max(t) of one column share its ranks */
		for (int p = 0; p < a && st->arg_ids[a] == NULL; p++)
			if (st->arg_ids[p] != NULL && st->aggs[p].arg_col == d->arg_col &&
				st->aggs[p].arg_enc == d->arg_enc && st->aggs[p].collation == d->collation)
				st->arg_ids[a] = st->arg_ids[p];
		if (st->arg_ids[a] != NULL)
			continue;
		st->arg_ids[a] = DictionaryColumns(st, d->arg_col, &dict);
		if (d->arg_enc == GPUAGG_KEY_RANKED)
			RankDictionary(st, dict, st->arg_ids[a], d->collation);
	}
}

const char *
GpuAggKeyColumn(GpuAggState *st, int k, int b)
{
	if (st->key_enc[k] == GPUAGG_KEY_DICTIONARY)
		return (const char *) st->dict_ids[k][b];
	return st->store.batches[b]->values[k];
}

const char *
GpuAggValueColumn(GpuAggState *st, int a, int b)
{
	if (st->arg_ids[a] != NULL)
		return (const char *) st->arg_ids[a][b];
	return st->store.batches[b]->values[st->aggs[a].arg_col];
}
