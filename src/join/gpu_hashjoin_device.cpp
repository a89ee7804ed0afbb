/*
 * gpu_hashjoin_device.cpp
 *    GpuHashJoin's device session: everything that talks to the join
 *    backend, for every mode.  Key words from a batch, beginning a build on
 *    a backend, building it, probing a batch and walking its windows of
 *    pairs, and after a device failure redoing the build on the CPU (the
 *    mode says how: GpuHashJoinMode.rebuild) and probing the batch again.
 *
 * The node (gpu_hashjoin_exec.cpp) and the modes (stream, grace, shared)
 * call in here; this file calls a mode only through st->mode, so calls go
 * one way: exec -> modes -> device.
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/memutils.h"
}

#include "batch.h"
#include "device.h"
#include "gpu_hashjoin.h"
#include "gpu_hashjoin_state.h"
#include "guc.h"
#include "join_filter.h"

/* sum += one build's stats (device memory: the peak) */
static void
AddStats(GpuopsJoinStats *sum, const GpuopsJoinStats *s)
{
	sum->build_rows += s->build_rows;
	sum->probe_rows += s->probe_rows;
	sum->pairs += s->pairs;
	sum->probe_batches += s->probe_batches;
	sum->windows += s->windows;
	sum->directory += s->directory;
	sum->copy_ms += s->copy_ms;
	sum->kernel_ms += s->kernel_ms;
	sum->device_bytes = Max(sum->device_bytes, s->device_bytes);
	sum->bytes_from_device += s->bytes_from_device;
}

/* Folds the stats of a finished build into done_stats. */
static void
KeepStats(GpuHashJoinState *st)
{
	GpuopsJoinStats s;

	if (st->dev->handle == NULL)
		return;
	st->dev->backend->join_stats(st->dev->handle, &s);
	AddStats(&st->done_stats, &s);
}

/*
 * Stops the leader's service (its thread reads the directory) and keeps
 * its counts for EXPLAIN; every other participant has none.
 */
void
GpuHashJoinStopSharing(GpuHashJoinDevice *dev)
{
	if (dev->shared != NULL)
		gpuops_join_service_counts(dev->shared, &dev->shared_requests, &dev->shared_rows);
	if (dev->svc == NULL)
		return;
	gpuops_join_service_stop(dev->svc);
	dev->svc = NULL;
}

/* The device session's release: at the node's end, a new build, or abort. */
void
GpuHashJoinRelease(void *arg)
{
	GpuHashJoinDevice *dev = (GpuHashJoinDevice *) arg;

	GpuHashJoinStopSharing(dev); /* its thread reads the directory */
	dev->end();
}

/*
 * One batch's key columns as 64-bit words: integers sign-extended (so
 * int2 = int8 compares equal values), dates as their day numbers, other
 * types as their hash opclass's hash.  The null bitmaps are the batch's own.
 */
void
GpuHashJoinBatchKeys(GpuHashJoinState *st, GpuopsRowStore *store, GpuopsBatch *batch, bool outer,
					 MemoryContext cxt, GpuopsJoinKeys *keys)
{
	const int *cols = outer ? st->outer_col : st->inner_col;
	const Oid *types = outer ? st->outer_type : st->inner_type;
	FmgrInfo *hashfn = outer ? st->outer_hash : st->inner_hash;

	keys->nkeys = st->nkeys;
	keys->nrows = batch->nrows;
	for (int k = 0; k < st->nkeys; k++)
	{
		uint64 *w = (uint64 *) MemoryContextAllocHuge(cxt, Max(batch->nrows, 1) * sizeof(uint64));
		const char *v = batch->values[cols[k]];

		if (st->hashed[k])
		{
			/* the type's own hash (32 bits; collisions are re-checked) */
			MemoryContext old = MemoryContextSwitchTo(cxt);

			for (uint32 i = 0; i < batch->nrows; i++)
			{
				bool isnull;
				Datum d = GpuopsBatchDatum(store, batch, cols[k], i, &isnull);

				w[i] = isnull
					? 0
					: (uint64) DatumGetUInt32(FunctionCall1Coll(&hashfn[k], st->collation[k], d));
			}
			MemoryContextSwitchTo(old);
			keys->words[k] = w;
			keys->nulls[k] = batch->nulls[cols[k]];
			continue;
		}
		switch (types[k])
		{
			case INT2OID:
				for (uint32 i = 0; i < batch->nrows; i++)
					w[i] = (uint64) (int64) ((const int16 *) v)[i];
				break;
			case INT4OID:
			case DATEOID:
				for (uint32 i = 0; i < batch->nrows; i++)
					w[i] = (uint64) (int64) ((const int32 *) v)[i];
				break;
			default:
				memcpy(w, v, (Size) batch->nrows * sizeof(uint64));
				break;
		}
		keys->words[k] = w;
		keys->nulls[k] = batch->nulls[cols[k]];
	}
}

static void
SaveStats(GpuHashJoinState *st)
{
	if (st->dev->handle)
	{
		st->dev->backend->join_stats(st->dev->handle, &st->stats);
		st->backend_name = st->dev->backend->name;
	}
}

/*
 * Ends the current build's join (its stats kept) and begins one on
 * `backend` (none when NULL).  Faults are injected into the primary backend
 * only, and only until it has failed once.
 */
GpuopsStatus
GpuHashJoinBegin(GpuHashJoinState *st, const GpuopsJoinBackend *backend)
{
	GpuopsSettings settings = GpuopsNodeSettings<&GpuopsDevice::hashjoin>(st,
																		  GpuopsCurrentSettings(),
																		  backend);

	KeepStats(st);
	GpuHashJoinRelease(st->dev);
	memset(&st->stats, 0, sizeof(st->stats));
	if (backend == NULL)
		return GPUOPS_OK;
	if (st->shared_probe)
		settings.fault = GPUOPS_FAULT_NONE;
	st->dev->backend = backend;
	return backend->join_begin(&settings, st->nkeys, &st->dev->handle);
}

/* Streaming mode: every stored inner row into the begun join. */
GpuopsStatus
GpuHashJoinBuildAll(GpuHashJoinState *st)
{
	GpuopsStatus rc = GPUOPS_OK;

	for (int b = 0; rc == GPUOPS_OK && b < st->inner()->store.nbatches; b++)
	{
		GpuopsJoinKeys keys;

		GpuHashJoinBatchKeys(st, &st->inner()->store, st->inner()->store.batches[b], false,
							 st->key_cxt, &keys);
		rc = st->dev->backend->join_build(st->dev->handle, &keys);
		MemoryContextReset(st->key_cxt);
		CHECK_FOR_INTERRUPTS();
	}
	if (rc == GPUOPS_OK)
		rc = st->dev->backend->join_build_finish(st->dev->handle);
	return rc;
}

/* Every build's figures: the finished ones and the current one. */
void
GpuHashJoinTotalStats(GpuHashJoinState *st, GpuopsJoinStats *total)
{
	*total = st->done_stats;
	AddStats(total, &st->stats);
}

/*
 * Begins a build on the primary device, or, when that fails, on the CPU
 * backend (or the query fails).
 */
void
GpuHashJoinBeginPrimary(GpuHashJoinState *st)
{
	GpuopsNodeRun<&GpuopsDevice::hashjoin>(st, [&](const GpuopsJoinBackend *backend) {
		return GpuHashJoinBegin(st, backend);
	});
}

/*
 * After a device failure: the CPU backend redoes the current build (or the
 * query fails).
 */
void
GpuHashJoinFallBack(GpuHashJoinState *st, GpuopsStatus rc)
{
	GpuopsNodeFallBack<&GpuopsDevice::hashjoin>(st, rc, [&](const GpuopsJoinBackend *cpu) {
		GpuopsStatus r;

		st->shared_probe = false;
		r = GpuHashJoinBegin(st, cpu);
		if (r == GPUOPS_OK)
			r = st->mode->rebuild(st);
		return r;
	});
}

void
GpuHashJoinResetInnerMatches(GpuHashJoinState *st)
{
	if (st->inner_matched)
		memset(st->inner_matched, 0, Max(st->inner()->store.nrows, 1));
	st->inner_pos = 0;
}

/* Inner rows whose keys are all non-NULL: the ones a build holds. */
uint64
GpuHashJoinBuildableRows(GpuHashJoinState *st)
{
	uint64 n = 0;

	for (int b = 0; b < st->inner()->store.nbatches; b++)
	{
		GpuopsBatch *batch = st->inner()->store.batches[b];

		for (uint32 i = 0; i < batch->nrows; i++)
		{
			bool null = false;

			for (int k = 0; k < st->nkeys && !null; k++)
				null = GpuopsBatchIsNull(batch, st->inner_col[k], i);
			n += !null;
		}
	}
	return n;
}

/* Reads the inner side into its store, once (a rescan with new parameters reads it again). */
void
GpuHashJoinReadInner(GpuHashJoinState *st)
{
	instr_time t0;

	if (st->inner_read)
		return;
	INSTR_TIME_SET_CURRENT(t0);
	GpuopsNodeReadInput(st, 1);
	st->inner_read = true;
	st->mine.inner_ms += GpuHashJoinMsSince(&t0);
}

/*
 * Probes the current batch: its first window of pairs.  After a device
 * failure the build is redone on the CPU and the batch probed there, and
 * `skip` pairs (walked before the failure) are passed over.
 */
static void
ProbeSkipping(GpuHashJoinState *st, uint64 skip)
{
	GpuopsJoinKeys keys;
	GpuopsStatus rc;

	st->mode->probe_keys(st, &keys);
	rc = st->mode->probe(st, &keys, &st->pairs);
	if (rc != GPUOPS_OK)
	{
		GpuHashJoinFallBack(st, rc);
		rc = st->dev->backend->join_probe(st->dev->handle, &keys, &st->pairs);
		if (rc != GPUOPS_OK)
			GpuopsDeviceFailed(GPUHASHJOIN_NAME, rc, false);
	}
	st->pairs_before = 0;
	while (skip >= st->pairs.npairs && st->pairs.more && skip > 0)
	{
		skip -= st->pairs.npairs;
		st->pairs_before += st->pairs.npairs;
		rc = st->dev->backend->join_next_pairs(st->dev->handle, &st->pairs);
		if (rc != GPUOPS_OK)
			GpuopsDeviceFailed(GPUHASHJOIN_NAME, rc, false);
	}
	st->cursor = skip;
	GpuopsJoinFilterApply(st->filter, &st->pairs);
	SaveStats(st);
}

/* A probe of this process's own directory (streaming and partitioned modes). */
GpuopsStatus
GpuHashJoinOwnProbe(GpuHashJoinState *st, const GpuopsJoinKeys *keys, GpuopsJoinPairs *pairs)
{
	return st->dev->backend->join_probe(st->dev->handle, keys, pairs);
}

void
GpuHashJoinProbe(GpuHashJoinState *st)
{
	ProbeSkipping(st, 0);
}

/* The current probe's next window of pairs. */
void
GpuHashJoinNextWindow(GpuHashJoinState *st)
{
	uint64 walked = st->pairs_before + st->pairs.npairs;
	GpuopsStatus rc;

	rc = st->dev->backend->join_next_pairs(st->dev->handle, &st->pairs);
	if (rc != GPUOPS_OK)
	{
		GpuHashJoinFallBack(st, rc);
		ProbeSkipping(st, walked);
		return;
	}
	st->pairs_before = walked;
	st->cursor = 0;
	GpuopsJoinFilterApply(st->filter, &st->pairs);
	SaveStats(st);
}
