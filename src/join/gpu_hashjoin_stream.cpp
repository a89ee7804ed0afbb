/*
 * gpu_hashjoin_stream.cpp
 *    GpuHashJoin's streaming mode, for an inner side one build holds: every
 *    inner row is in one directory, and the outer side is read one batch at
 *    a time and probed in ranges of as many rows as one probe takes.  A
 *    worker probing through the leader's service (gpu_hashjoin_shared.cpp)
 *    walks its outer side the same way.
 */
extern "C" {
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"
}

#include "batch.h"
#include "gpu_hashjoin_state.h"
#include "join_filter.h"

/*
 * Probes the next range of the outer batch, reading the next batch when
 * this one is done; false when the outer side is done.
 */
bool
GpuHashJoinStreamNextBatch(GpuHashJoinState *st)
{
	st->probe_base += st->probe_rows;
	if (st->probe_base >= st->batch_rows)
	{
		GpuopsBatch *batch;
		instr_time t0;

		if (st->outer_done)
			return false;
		GpuopsRowStoreReset(&st->outer()->store);
		batch = GpuopsRowStoreOpenBatch(&st->outer()->store);
		INSTR_TIME_SET_CURRENT(t0);
		st->outer_done = !GpuopsNodeFill(st, 0, batch);
		st->mine.outer_ms += GpuHashJoinMsSince(&t0);
		st->batch_rows = batch->nrows;
		st->probe_base = 0;
		MemoryContextReset(st->probe_key_cxt);
		if (batch->nrows > 0)
			GpuHashJoinBatchKeys(st, &st->outer()->store, batch, true, st->probe_key_cxt,
								 &st->batch_keys);
	}
	st->probe_rows = Min(st->probe_limit, st->batch_rows - st->probe_base);
	st->cursor = 0;
	st->pairs_before = 0;
	memset(&st->pairs, 0, sizeof(st->pairs));
	st->probe_pos = 0;
	st->matched = false;
	st->emit_unmatched = true;
	if (st->probe_rows > 0)
	{
		GpuopsJoinFilterLoad(st->filter, 0, &st->outer()->store, true, st->probe_base,
							 st->probe_rows);
		GpuHashJoinProbe(st);
	}
	return true;
}

/* The current probe batch's keys: a range of the outer batch's. */
void
GpuHashJoinStreamProbeKeys(GpuHashJoinState *st, GpuopsJoinKeys *keys)
{
	*keys = st->batch_keys;
	keys->nrows = st->probe_rows;
	for (int k = 0; k < st->nkeys; k++)
	{
		keys->words[k] += st->probe_base;
		if (keys->nulls[k])
			keys->nulls[k] += st->probe_base / 8; /* probe_limit is a multiple of 8 */
	}
}

/* A rescan that keeps the inner side: a build the device session gave back is made again. */
void
GpuHashJoinStreamRescan(GpuHashJoinState *st)
{
	if (st->built && st->dev->handle == NULL)
		st->built = false;
}

/* Nothing of its own to free. */
void
GpuHashJoinStreamEnd(GpuHashJoinState *)
{
}

const GpuHashJoinMode gpu_hashjoin_stream_mode = {
	"streaming",		  GpuHashJoinStreamNextBatch, GpuHashJoinStreamProbeKeys,
	GpuHashJoinOwnProbe,  GpuHashJoinBuildAll,		  GpuHashJoinStreamRescan,
	GpuHashJoinStreamEnd,
};
