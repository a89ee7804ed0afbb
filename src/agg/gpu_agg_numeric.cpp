/*
 * gpu_agg_numeric.cpp
 *    sum, avg, variance and stddev of numeric for GpuAgg, exact.
 *
 * PostgreSQL's sum of numerics is exact with the display scale of its
 * widest input (add_var keeps the larger dscale), and avg is that sum
 * divided by N with numeric_div.  Where every input of the aggregate is a
 * finite number of one display scale S (a numeric(p, S) column, the common
 * case) and fits in 64 bits times 10^S, the device sums the scaled integers
 * exactly in 128 bits (the integer sum's own state), and the host turns the
 * sum back into a numeric of scale S: the same value and scale as
 * PostgreSQL's sumX.  Variance and stddev add the squares' sum (192 bits,
 * scale 2S, as do_numeric_accum squares at twice the input's scale); the
 * host hands N, sumX and sumX2 to the aggregate's own final function as
 * numeric_accum's state, so the division and square root are PostgreSQL's.
 *
 * Otherwise (NaN or infinities, mixed scales, values too wide) the device
 * only counts, and the host sums the aggregate's inputs with numeric_add,
 * PostgreSQL's own arithmetic, per group: each row finds its group by its
 * packed group key.  numeric_add gives NaN and infinities as the
 * aggregate's final function does (NaN absorbs, +Inf and -Inf give NaN).
 * Variance and stddev take there numeric_accum itself per row, and their
 * final function per group.
 *
 * The device path reads numerics in their stored format
 * (numeric_decode.cpp): a function call per row would cost more than the
 * rest of the aggregation.
 */
extern "C" {
#include "postgres.h"

#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
}

#include <atomic>
#include <thread>
#include <vector>

#include "agg_common.hpp"
#include "gpu_agg_exec.h"
#include "numeric_decode.h"
#include "thread_signals.hpp"

/* Whether row i of batch is an input of aggregate d (argument not NULL, FILTER true). */
static bool
IsInput(const GpuAggDesc *d, const GpuopsBatch *batch, uint32 i)
{
	if (GpuopsBatchIsNull(batch, d->arg_col, i))
		return false;
	if (d->filter_col >= 0 &&
		(GpuopsBatchIsNull(batch, d->filter_col, i) ||
		 !((const bool *) batch->values[d->filter_col])[i]))
		return false;
	return true;
}

static const char *
StoredPointer(const GpuopsBatch *batch, int col, uint32 i)
{
	const char *p;

	memcpy(&p, batch->values[col] + (Size) i * sizeof(p), sizeof(p));
	return p;
}

/* One batch of one aggregate's inputs, decoded. */
typedef struct BatchDecode
{
	int scale;				 /* the inputs' one display scale; -1: no input */
	GpuopsNumericDecoded rc; /* GPUOPS_NUMERIC_TOO_WIDE also for a second scale */
	bool needs_detoast;		 /* a compressed or external value: redo serially */
} BatchDecode;

/*
 * Decodes a batch's inputs into vals (0 for non-inputs).  In a helper
 * thread (threaded) nothing of PostgreSQL's may be called: a value that
 * needs detoasting stops the batch for the calling thread to redo.
 */
static void
DecodeBatch(const GpuAggDesc *d, const GpuopsBatch *batch, int64 *vals, bool threaded,
			BatchDecode *out)
{
	out->scale = -1;
	out->rc = GPUOPS_NUMERIC_OK;
	out->needs_detoast = false;
	for (uint32 i = 0; i < batch->nrows; i++)
	{
		const char *p;
		int dscale = -1, used;

		vals[i] = 0;
		if (!IsInput(d, batch, i))
			continue;
		p = StoredPointer(batch, d->arg_col, i);
		if (threaded && VARATT_IS_EXTENDED(p) && !VARATT_IS_SHORT(p))
		{
			out->needs_detoast = true;
			return;
		}
		out->rc = GpuopsNumericDecode(p, out->scale, &dscale, &used, &vals[i]);
		if (out->rc == GPUOPS_NUMERIC_OK && out->scale >= 0 && dscale != out->scale)
			out->rc = GPUOPS_NUMERIC_TOO_WIDE;
		if (out->rc != GPUOPS_NUMERIC_OK)
			return;
		out->scale = dscale;
	}
}

/*
 * Decodes all batches on up to 16 threads (the leader of a staged plan
 * holds every row; one thread would take 60-150 ns a value).  Only plain
 * memory is touched; the threads are joined before returning.
 */
static void
DecodeBatchesThreaded(const GpuAggDesc *d, GpuopsRowStore *store, int64 **vals, BatchDecode *res)
{
	std::atomic<int> next(0);
	int nbatches = store->nbatches;
	auto work = [&]() noexcept {
		for (int b; (b = next.fetch_add(1)) < nbatches;)
			DecodeBatch(d, store->batches[b], vals[b], true, &res[b]);
	};
	std::vector<std::thread> pool;
	unsigned nthreads = Min(Max(std::thread::hardware_concurrency(), 1u), 16u);

	if (nbatches >= 4)
	{
		try
		{
			gpuops::SignalsBlocked blocked;

			pool.reserve(nthreads);
			for (unsigned t = 1; t < nthreads; t++)
				pool.emplace_back(work);
		}
		catch (...)
		{
			/* fewer threads (or none): this one does the rest */
		}
	}
	work();
	for (auto &t : pool)
		t.join();
}

/*
 * Decides, per numeric sum/avg, the device path (scaled integers in
 * st->arg_ids) or the host path (the device counts).
 */
void
GpuAggNumericPrepare(GpuAggState *st)
{
	for (int a = 0; a < st->naggs; a++)
	{
		GpuAggDesc *d = &st->aggs[a];
		int scale = -1;
		bool device = true;
		int nbatches = st->store()->nbatches;
		int64 **vals;
		BatchDecode *res;

		if (d->arg_enc != GPUAGG_KEY_SCALED)
			continue;
		d->host_sum = false;
		d->host_values = NULL;
		d->host_nulls = NULL;
		d->kind = d->final == GPUAGG_FINAL_VAR_SCALED ? GPUOPS_AGG_SUMSQ_INT : GPUOPS_AGG_SUM_INT;
		vals = (int64 **) MemoryContextAllocZero(st->dict_cxt, sizeof(int64 *) * Max(nbatches, 1));
		res = (BatchDecode *) palloc0(sizeof(BatchDecode) * Max(nbatches, 1));
		for (int b = 0; b < nbatches; b++)
			vals[b] = (int64 *) MemoryContextAllocHuge(
				st->dict_cxt, sizeof(int64) * Max(st->store()->batches[b]->nrows, 1));
		DecodeBatchesThreaded(d, st->store(), vals, res);
		for (int b = 0; b < nbatches && device; b++)
		{
			if (res[b].needs_detoast)
				DecodeBatch(d, st->store()->batches[b], vals[b], false, &res[b]);
			/* one display scale for all inputs: the sum's is then known */
			if (res[b].rc != GPUOPS_NUMERIC_OK ||
				(res[b].scale >= 0 && scale >= 0 && res[b].scale != scale))
				device = false;
			if (res[b].scale >= 0)
				scale = res[b].scale;
			CHECK_FOR_INTERRUPTS();
		}
		pfree(res);
		if (device)
		{
			st->arg_ids[a] = (uint64 **) vals;
			d->scale = Max(scale, 0);
		}
		else
		{
			/* the device counts the inputs; GpuAggNumericHost sums them */
			st->arg_ids[a] = NULL;
			d->host_sum = true;
			d->kind = GPUOPS_AGG_COUNT;
		}
	}
}

/* numeric_accum(state, x): state is NULL (0) for the first input */
static Datum
NumericAccum(AggState *caller, Datum state, Datum x)
{
	LOCAL_FCINFO(fcinfo, 2);

	InitFunctionCallInfoData(*fcinfo, NULL, 2, InvalidOid, (Node *) caller, NULL);
	fcinfo->args[0].value = state;
	fcinfo->args[0].isnull = state == (Datum) 0;
	fcinfo->args[1].value = x;
	fcinfo->args[1].isnull = false;
	return numeric_accum(fcinfo);
}

/*
 * The host sums' results per group (in the current memory context): NULL
 * for a group with no input, else the sum, the average or the variance's
 * own final function of it.  caller: numeric_accum's stand-in AggState.
 */
static void
HostResults(GpuAggState *st, Datum **acc, int64 **counts, AggState *caller)
{
	for (int a = 0; a < st->naggs; a++)
	{
		GpuAggDesc *d = &st->aggs[a];

		if (!d->host_sum)
			continue;
		d->host_values = (Datum *) palloc_extended(sizeof(Datum) * st->ngroups,
												   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		d->host_nulls = (bool *) palloc_extended(sizeof(bool) * st->ngroups,
												 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		for (uint64 g = 0; g < st->ngroups; g++)
		{
			Datum sum = acc[a][g];

			if (counts[a][g] == 0)
			{
				d->host_nulls[g] = true;
				continue;
			}
			if (d->final == GPUAGG_FINAL_VAR_SCALED)
			{
				/* numeric_var_samp and the like: NULL for too few inputs */
				LOCAL_FCINFO(fcinfo, 1);

				InitFunctionCallInfoData(*fcinfo, &d->final_flinfo, 1, InvalidOid, (Node *) caller,
										 NULL);
				fcinfo->args[0].value = sum;
				fcinfo->args[0].isnull = false;
				d->host_values[g] = FunctionCallInvoke(fcinfo);
				d->host_nulls[g] = fcinfo->isnull;
				continue;
			}
			/* numeric_avg: NaN and infinities are the result as they are */
			if (d->final == GPUAGG_FINAL_AVG_SCALED && !numeric_is_nan(DatumGetNumeric(sum)) &&
				!numeric_is_inf(DatumGetNumeric(sum)))
				d->host_values[g] = DirectFunctionCall2(
					numeric_div, sum, NumericGetDatum(int64_to_numeric(counts[a][g])));
			else
				d->host_values[g] = PointerGetDatum(DatumGetNumericCopy(sum));
		}
	}
}

void
GpuAggNumericHost(GpuAggState *st)
{
	HASHCTL ctl;
	HTAB *groups;
	int nwords;
	Size keysize;
	uint64 *words;
	bool any = false;
	MemoryContext work, live, old;
	Datum **acc;
	int64 **counts;
	Datum zero;
	uint64 since_copy = 0;
	AggState *caller;

	for (int a = 0; a < st->naggs; a++)
		any |= st->aggs[a].host_sum;
	if (!any || st->ngroups == 0)
		return;

	nwords = GpuAggKeyWords(st);
	keysize = sizeof(uint64) * Max(nwords, 1);

	work = AllocSetContextCreate(CurrentMemoryContext, "GpuAgg numeric sums",
								 ALLOCSET_DEFAULT_SIZES);
	live = AllocSetContextCreate(work, "GpuAgg numeric sums, live", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = keysize;
	ctl.entrysize = keysize + sizeof(uint64);
	ctl.hcxt = work;
	groups = hash_create("GpuAgg numeric groups", (long) Min(st->ngroups, (uint64) 1 << 24), &ctl,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	words = (uint64 *) palloc0(keysize);
	for (uint64 g = 0; g < st->ngroups; g++)
	{
		bool found;
		char *e;

		/* an entry: the packed key, then the group's index */
		if (nwords > 0)
			GpuAggRowKey(st, st->group_rows[g], words, nwords);
		e = (char *) hash_search(groups, words, HASH_ENTER, &found);
		memcpy(e + keysize, &g, sizeof(uint64));
	}
	acc = (Datum **) palloc0(sizeof(Datum *) * st->naggs);
	counts = (int64 **) palloc0(sizeof(int64 *) * st->naggs);
	for (int a = 0; a < st->naggs; a++)
		if (st->aggs[a].host_sum)
		{
			acc[a] = (Datum *) palloc_extended(sizeof(Datum) * st->ngroups,
											   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
			counts[a] = (int64 *) palloc_extended(sizeof(int64) * st->ngroups,
												  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		}
	zero = NumericGetDatum(int64_to_numeric(0));

	/*
	 * numeric_accum insists on an aggregate caller and keeps its states in
	 * the caller's aggregate context: a bare AggState stands in, its states
	 * in `work` (numeric_accum reads nothing else of it).
	 */
	caller = makeNode(AggState);
	caller->curaggcontext = makeNode(ExprContext);
	caller->curaggcontext->ecxt_per_tuple_memory = work;

	for (int b = 0; b < st->store()->nbatches; b++)
	{
		GpuopsBatch *batch = st->store()->batches[b];

		for (uint32 i = 0; i < batch->nrows; i++)
		{
			uint64 row = ((uint64) b << GPUOPS_BATCH_SHIFT) | i;
			uint64 g = 0;
			bool found = true;

			if (nwords > 0)
			{
				char *e;

				GpuAggRowKey(st, row, words, nwords);
				e = (char *) hash_search(groups, words, HASH_FIND, &found);
				if (found)
					memcpy(&g, e + keysize, sizeof(uint64));
			}
			if (!found)
				elog(ERROR, "GpuAgg: a row without its group");
			MemoryContextSwitchTo(live);
			for (int a = 0; a < st->naggs; a++)
			{
				const GpuAggDesc *d = &st->aggs[a];
				Datum x;

				if (!d->host_sum || !IsInput(d, batch, i))
					continue;
				x = PointerGetDatum(StoredPointer(batch, d->arg_col, i));
				if (d->final == GPUAGG_FINAL_VAR_SCALED)
					acc[a][g] = NumericAccum(caller, counts[a][g] ? acc[a][g] : (Datum) 0, x);
				else
				{
					/* from a zero of scale 0, as PostgreSQL's sumX starts */
					acc[a][g] = DirectFunctionCall2(numeric_add, counts[a][g] ? acc[a][g] : zero,
													x);
				}
				counts[a][g]++;
			}
			MemoryContextSwitchTo(work);
			/* the sums replace each other: keep only the live ones now and then */
			if (++since_copy >= 1000000)
			{
				MemoryContext next = AllocSetContextCreate(work, "GpuAgg numeric sums, live",
														   ALLOCSET_DEFAULT_SIZES);

				MemoryContextSwitchTo(next);
				for (int a = 0; a < st->naggs; a++)
					for (uint64 gg = 0; acc[a] != NULL && gg < st->ngroups &&
						 st->aggs[a].final != GPUAGG_FINAL_VAR_SCALED;
						 gg++)
						if (counts[a][gg] > 0)
							acc[a][gg] = PointerGetDatum(DatumGetNumericCopy(acc[a][gg]));
				MemoryContextSwitchTo(work);
				MemoryContextDelete(live);
				live = next;
				since_copy = 0;
			}
		}
		CHECK_FOR_INTERRUPTS();
	}

	/* the results, in the node's query context */
	MemoryContextSwitchTo(st->dict_cxt);
	HostResults(st, acc, counts, caller);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(work);
}
