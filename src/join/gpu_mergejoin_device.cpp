/*
 * gpu_mergejoin_device.cpp
 *    GpuMergeJoin's device side: reading both sides and making their merge
 *    words, running the join on a backend (and on the CPU backend after a
 *    failure, the walk resuming after the pairs already returned), the
 *    windows of pairs it returns, and each window's needed columns gathered
 *    into pair order.
 *
 * The node (gpu_mergejoin_exec.cpp: the walk over the pairs, the callbacks,
 * EXPLAIN) calls in here; nothing here calls the node, so calls go one way.
 * Split from the node's file because talking to the backend is a job of
 * its own (as gpu_hashjoin_device.cpp is for GpuHashJoin).
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
}

#include "batch.h"
#include "device.h"
#include "gpu_mergejoin_state.h"
#include "guc.h"
#include "join_filter.h"

static GpuopsMergeWordKind
MergeWordKind(Oid type)
{
	switch (type)
	{
		case INT2OID:
			return GPUOPS_MW_INT16;
		case INT4OID:
		case DATEOID:
			return GPUOPS_MW_INT32;
		case BOOLOID:
			return GPUOPS_MW_BOOL;
		case FLOAT4OID:
			return GPUOPS_MW_FLOAT4;
		case FLOAT8OID:
			return GPUOPS_MW_FLOAT8;
		default: /* int8, time, timestamp, timestamptz */
			return GPUOPS_MW_INT64;
	}
}

/*
 * A side's key columns as merge words and null bitmaps, all rows in row
 * order: the words on several threads straight from the store's batches
 * (gpuops_host_merge_words), the NULL bits copied from the batches' bitmaps
 * (a batch holds a multiple of 8 rows).
 */
static void
StageKeys(GpuMergeJoinState *st, GpuopsRowStore *store, bool outer, GpuopsJoinKeys *keys)
{
	const Oid *types = outer ? st->outer_type : st->inner_type;
	const int *cols = outer ? st->outer_col : st->inner_col;
	uint64 n = store->nrows;
	memset(keys, 0, sizeof(*keys));
	keys->nkeys = st->nkeys;
	keys->nrows = n;
	for (int k = 0; k < st->nkeys; k++)
	{
		uint64 *w = (uint64 *) MemoryContextAllocHuge(st->key_cxt, Max(n, 1) * sizeof(uint64));
		uint8 *bitmap = NULL;
		const char **bv = GpuopsRowStoreColumnBatches(store, cols[k]);
		GpuopsStatus rc;

		rc = gpuops_host_merge_words(bv, n, GPUOPS_BATCH_SHIFT, MergeWordKind(types[k]), w);
		pfree(bv);
		if (rc != GPUOPS_OK)
			GpuopsRaiseStatus("making merge keys", rc);
		for (int b = 0; b < store->nbatches; b++)
		{
			const GpuopsBatch *batch = store->batches[b];

			if (batch->nulls[cols[k]] == NULL)
				continue;
			if (bitmap == NULL)
				bitmap = (uint8 *) MemoryContextAllocZero(st->key_cxt, (n + 7) / 8 + 1);
			memcpy(bitmap + ((Size) b << GPUOPS_BATCH_SHIFT) / 8, batch->nulls[cols[k]],
				   (batch->nrows + 7) / 8);
		}
		/* NULLs tie in every backend's sort */
		for (uint64 i = 0; bitmap && i < n; i += 8)
		{
			if (bitmap[i >> 3] == 0)
				continue;
			for (uint64 j = i; j < Min(n, i + 8); j++)
				if (bitmap[j >> 3] & (1 << (j & 7)))
					w[j] = 0;
		}
		keys->words[k] = w;
		keys->nulls[k] = bitmap;
		CHECK_FOR_INTERRUPTS();
	}
}

/* No gathered arrays (at the start, or after key_cxt, which held them, was reset). */
void
GpuMergeJoinInitGathered(GpuMergeJoinState *st)
{
	memset(st->gathered, 0, sizeof(st->gathered));
	st->gathered[0].store = &st->outer()->store;
	st->gathered[1].store = &st->inner()->store;
	st->gathered[1].at = st->outer_ncols;
}

/* A new window: nothing of it gathered yet. */
static void
ForgetGathered(GpuMergeJoinState *st)
{
	st->gathered[0].npairs = st->gathered[1].npairs = 0;
	st->gathered[0].first = st->gathered[1].first = 0;
}

/*
 * Before returning pair `pair` of the window: past the pairs gathered, the
 * next part of the window's needed columns, both sides, in pair order.
 */
void
GpuMergeJoinGatherFrom(GpuMergeJoinState *st, uint64 pair)
{
	uint64 n;

	if (pair < st->gathered[0].first + st->gathered[0].npairs ||
		st->pairs.npairs - pair < GPUOPS_JOIN_GATHER_MIN)
		return;
	n = Min(st->pairs.npairs - pair, (uint64) GPUOPS_JOIN_GATHER_PAIRS);
	GpuopsJoinGather(&st->gathered[0], &st->outer()->store, 0, st->pairs.probe_rows, pair, n,
					 st->needed, st->key_cxt);
	GpuopsJoinGather(&st->gathered[1], &st->inner()->store, st->outer_ncols, st->pairs.build_rows,
					 pair, n, st->needed, st->key_cxt);
}

static void
SaveStats(GpuMergeJoinState *st)
{
	if (st->dev->handle)
	{
		st->dev->backend->mj_stats(st->dev->handle, &st->stats);
		st->backend_name = st->dev->backend->name;
	}
}

/*
 * Runs the join on `backend` from the staged keys: both sides, the merge,
 * the first window; then passes over `skip` pairs already walked.
 */
static GpuopsStatus
RunJoin(GpuMergeJoinState *st, const GpuopsMergeJoinBackend *backend, uint64 skip)
{
	GpuopsSettings settings = GpuopsSettingsFor(st->device_shared);
	GpuopsStatus rc;

	settings = GpuopsNodeSettings<&GpuopsDevice::mergejoin>(st, settings, backend);
	st->dev->end();
	st->dev->backend = backend;
	rc = backend->mj_begin(&settings, st->nkeys, &st->dev->handle);
	if (rc == GPUOPS_OK && backend != gpuops_cpu_device()->mergejoin)
	{
		uint64 capacity = backend->mj_capacity(st->dev->handle);

		/* over the device budget: the CPU backend, which has none */
		if (capacity > 0 && st->keys[0].nrows + st->keys[1].nrows > capacity)
		{
			st->dev->end();
			if (st->fallback == NULL)
				st->fallback = pstrdup("both sides exceed the device budget");
			return RunJoin(st, gpuops_cpu_device()->mergejoin, skip);
		}
	}
	if (rc == GPUOPS_OK)
		rc = backend->mj_side(st->dev->handle, 0, &st->keys[0]);
	if (rc == GPUOPS_OK)
		rc = backend->mj_side(st->dev->handle, 1, &st->keys[1]);
	if (st->count_cols > 0)
	{
		/* counting: the merge and the count, no pair (the count is in the stats) */
		if (rc == GPUOPS_OK)
			rc = backend->mj_join(st->dev->handle, NULL);
		if (rc == GPUOPS_OK)
			SaveStats(st);
		return rc;
	}
	if (rc == GPUOPS_OK)
		rc = backend->mj_join(st->dev->handle, &st->pairs);
	if (rc == GPUOPS_OK)
		rc = backend->mj_outer_order(st->dev->handle, &st->order);
	st->pairs_before = 0;
	while (rc == GPUOPS_OK && skip >= st->pairs.npairs && st->pairs.more && skip > 0)
	{
		skip -= st->pairs.npairs;
		st->pairs_before += st->pairs.npairs;
		rc = backend->mj_next_pairs(st->dev->handle, &st->pairs);
	}
	st->cursor = skip;
	if (rc == GPUOPS_OK)
	{
		GpuopsJoinFilterApply(st->filter, &st->pairs);
		ForgetGathered(st);
		SaveStats(st);
	}
	return rc;
}

/* After a device failure: the CPU backend redoes the join (or the query fails). */
static void
FallBack(GpuMergeJoinState *st, GpuopsStatus rc, uint64 skip)
{
	GpuopsNodeFallBack<&GpuopsDevice::mergejoin>(st, rc, [&](const GpuopsMergeJoinBackend *cpu) {
		return RunJoin(st, cpu, skip);
	});
}

/* Milliseconds since *t, which becomes now. */
static double
Lap(instr_time *t)
{
	instr_time now;
	double ms;

	INSTR_TIME_SET_CURRENT(now);
	ms = INSTR_TIME_GET_MILLISEC(now) - INSTR_TIME_GET_MILLISEC(*t);
	*t = now;
	return ms;
}

/* Reads both sides, stages their keys and runs the join. */
void
GpuMergeJoinBuild(GpuMergeJoinState *st)
{
	instr_time t;

	INSTR_TIME_SET_CURRENT(t);

	for (int side = 0; side < 2; side++)
	{
		GpuopsRowStore *store = st->store(side);

		/* a staged side: the Gather has the workers read it */
		GpuopsNodeReadInput(st, side);
		st->read_ms[side] += Lap(&t);
		StageKeys(st, store, side == 0, &st->keys[side]);
		GpuopsJoinFilterLoad(st->filter, side, store, false, 0, 0);
		st->keys_ms += Lap(&t);
	}
	GpuopsNodeRun<&GpuopsDevice::mergejoin>(st, [&](const GpuopsMergeJoinBackend *backend) {
		return RunJoin(st, backend, 0);
	});
	st->join_ms += Lap(&t);
	if (st->fill_inner)
		st->inner_matched = (bool *) MemoryContextAllocZero(st->inner()->store.cxt,
															Max(st->inner()->store.nrows, 1));
	st->inner_pos = 0;
	st->opos = 0;
	st->matched = false;
	st->built = true;
}

/* The next window of pairs; after a device failure, the CPU backend's. */
void
GpuMergeJoinNextWindow(GpuMergeJoinState *st)
{
	uint64 walked = st->pairs_before + st->pairs.npairs;
	GpuopsStatus rc = st->dev->backend->mj_next_pairs(st->dev->handle, &st->pairs);

	if (rc != GPUOPS_OK)
	{
		FallBack(st, rc, walked);
		return;
	}
	st->pairs_before = walked;
	st->cursor = 0;
	GpuopsJoinFilterApply(st->filter, &st->pairs);
	ForgetGathered(st);
	SaveStats(st);
}

/*
 * A rescan over the same input: the stored keys joined again, for a fresh
 * walk (on the CPU backend after the node fell back).
 */
void
GpuMergeJoinRejoin(GpuMergeJoinState *st)
{
	GpuopsStatus rc = RunJoin(
		st, st->fallback ? gpuops_cpu_device()->mergejoin : GpuopsPrimaryDevice()->mergejoin, 0);

	if (rc != GPUOPS_OK)
		FallBack(st, rc, 0);
}
