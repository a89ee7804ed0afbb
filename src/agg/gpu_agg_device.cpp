/*
 * gpu_agg_device.cpp
 *    GpuAgg's device side: reading the whole input, its batches handed to
 *    the backend (key columns, aggregate inputs and their null bitmaps,
 *    computed inputs' columns), in one piece or in chunks of what the
 *    device budget holds, merged on the host (gpu_agg_merge.cpp); and after
 *    a device failure the same on the CPU backend.
 *
 * The node (gpu_agg_exec.cpp: the groups' rows, the callbacks, EXPLAIN)
 * calls in here once per scan (GpuAggReadAndAggregate); split from it
 * because talking to the backend is a job of its own.
 */
extern "C" {
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
}

#include "batch.h"
#include "device.h"
#include "device_expr.h"
#include "gpu_agg.h"
#include "gpu_agg_exec.h"
#include "agg_common.hpp"
#include "guc.h"

/*
 * An aggregate's null bitmap for rows [lo, lo + n) of a batch (lo a multiple
 * of 8): its argument is NULL, or its FILTER (or count(x)'s "x IS NOT NULL")
 * is not true.  NULL when no row is.
 */
static const uint8 *
AggregateMask(const GpuAggDesc *d, GpuopsBatch *batch, uint32 lo, uint32 n)
{
	int conds[2] = {d->filter_col, d->notnull_col};
	const uint8 *argnulls = d->arg_col >= 0 ? batch->nulls[d->arg_col] : NULL;
	uint8 *mask;
	Size nbytes = (n + 7) / 8;

	if (d->filter_col < 0 && d->notnull_col < 0)
		return argnulls ? argnulls + lo / 8 : NULL;
	mask = (uint8 *) palloc0(Max(nbytes, 1));
	if (argnulls)
		memcpy(mask, argnulls + lo / 8, nbytes);
	for (int c = 0; c < 2; c++)
	{
		const bool *vals;

		if (conds[c] < 0)
			continue;
		vals = (const bool *) batch->values[conds[c]];
		for (uint32 i = 0; i < n; i++)
			if (GpuopsBatchIsNull(batch, conds[c], lo + i) || !vals[lo + i])
				mask[i >> 3] |= (uint8) (1 << (i & 7));
	}
	return mask;
}

static const char *
RowsAt(const char *p, uint32 rows, uint32 width)
{
	return p ? p + (Size) rows * width : NULL;
}

static void
AddStats(GpuAggState *st, const GpuopsAggStats *s)
{
	st->stats.rows += s->rows;
	st->stats.groups += s->groups;
	st->stats.key_words = s->key_words;
	st->stats.sort_bits = Max(st->stats.sort_bits, s->sort_bits);
	st->stats.copy_ms += s->copy_ms;
	st->stats.kernel_ms += s->kernel_ms;
	st->stats.device_bytes = Max(st->stats.device_bytes, s->device_bytes);
	st->stats.bytes_from_device += s->bytes_from_device;
	st->stats.hash_capacity = Max(st->stats.hash_capacity, s->hash_capacity);
	st->hashed_chunks += s->hashed;
	st->overflow_chunks += s->hash_overflow;
}

/*
 * A row whose computed input the device stopped at: PostgreSQL evaluates
 * the arguments there, in the aggregates' order (FILTER first, as its
 * Agg does), and raises the error the device saw.  The device stops only
 * where PostgreSQL raises one (DeviceExprCompileInput), so returning is a
 * bug, reported as such.
 */
static void
RaiseInputError(GpuAggState *st, uint64 row)
{
	TupleTableSlot *slot = st->recheck_slot;
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;

	GpuopsRowStoreFetchRow(st->store(), row, slot);
	econtext->ecxt_outertuple = slot;
	for (int a = 0; a < st->naggs; a++)
	{
		const GpuAggDesc *d = &st->aggs[a];
		bool isnull;

		if (st->program_exprs[a] == NULL)
			continue;
		if (d->filter_col >= 0 &&
			(slot->tts_isnull[d->filter_col] || !DatumGetBool(slot->tts_values[d->filter_col])))
			continue;
		(void) ExecEvalExpr(st->program_exprs[a], econtext, &isnull);
	}
	elog(ERROR, "GpuAgg: the device could not compute an aggregate input that PostgreSQL computes");
}

/*
 * Aggregates rows [from, to) on `backend` (from a multiple of 8); the
 * groups, with rows numbered from `from`, stay in st->dev.
 */
static GpuopsStatus
AggregateRange(GpuAggState *st, const GpuopsAggBackend *backend, const GpuopsSettings *settings,
			   const GpuopsAggSpec *spec, uint64 from, uint64 to, uint64 *ngroups)
{
	GpuopsStatus rc;
	GpuopsAggStats s;

	st->dev->end();
	st->dev->backend = backend;
	rc = backend->agg_begin(settings, spec, to - from, &st->dev->handle);
	for (uint64 row = from; rc == GPUOPS_OK && row < to;)
	{
		int b = (int) (row >> GPUOPS_BATCH_SHIFT);
		GpuopsBatch *batch = st->store()->batches[b];
		uint32 lo = (uint32) (row & (GPUOPS_BATCH_ROWS - 1));
		uint32 n = (uint32) Min((uint64) (batch->nrows - lo), to - row);
		GpuopsAggBatch ab;
		MemoryContext old = MemoryContextSwitchTo(st->scratch_cxt);

		memset(&ab, 0, sizeof(ab));
		ab.nrows = n;
		for (int k = 0; k < st->nkeys; k++)
		{
			ab.keys[k] = RowsAt(GpuAggKeyColumn(st, k, b), lo,
								gpuops_key_raw_width(st->key_kind[k]));
			ab.key_nulls[k] = batch->nulls[k] ? batch->nulls[k] + lo / 8 : NULL;
		}
		for (int a = 0; a < st->naggs; a++)
		{
			const GpuAggDesc *d = &st->aggs[a];

			if (d->arg_col >= 0)
				ab.values[a] = RowsAt(GpuAggValueColumn(st, a, b), lo,
									  gpuops_key_raw_width(d->value_kind));
			ab.value_nulls[a] = AggregateMask(d, batch, lo, n);
		}
		if (st->prog_ncols > 0)
			DeviceExprStageRows(st->store(), row, n, st->prog_cols, st->prog_types, st->prog_ncols,
								st->scratch_cxt, &ab.inputs);
		MemoryContextSwitchTo(old);
		rc = backend->agg_add(st->dev->handle, &ab);
		MemoryContextReset(st->scratch_cxt);
		row += n;
		CHECK_FOR_INTERRUPTS();
	}
	if (rc == GPUOPS_OK)
		rc = backend->agg_finish(st->dev->handle, ngroups);
	if (rc == GPUOPS_OK)
	{
		backend->agg_stats(st->dev->handle, &s);
		if (s.recheck_row != GPUOPS_AGG_NO_RECHECK)
			RaiseInputError(st, from + s.recheck_row);
		AddStats(st, &s);
		st->chunks++;
	}
	return rc;
}

/*
 * Runs the whole aggregation on `backend`: in one piece, or in chunks of
 * what the device budget holds, merged on the host.
 */
static GpuopsStatus
Aggregate(GpuAggState *st, const GpuopsAggBackend *backend)
{
	GpuopsSettings settings = GpuopsNodeSettings<&GpuopsDevice::agg>(
		st, GpuopsSettingsFor(st->device_shared), backend);
	GpuopsAggSpec spec;
	GpuopsStatus rc;
	uint64 n = st->store()->nrows;
	uint64 capacity;
	uint64 ngroups;

	st->dev->end();
	/* gpuops.stat: an earlier run's figures (a rescan, a fallback's failed try) */
	GpuopsNodeStatDevice(st, st->stats.rows, st->stats.copy_ms, st->stats.kernel_ms,
						 st->stats.bytes_from_device);
	memset(&st->stats, 0, sizeof(st->stats));
	st->chunks = 0;
	st->hashed_chunks = 0;
	st->overflow_chunks = 0;
	st->merge = NULL;
	memset(&spec, 0, sizeof(spec));
	spec.nkeys = st->nkeys;
	for (int k = 0; k < st->nkeys; k++)
		spec.keys[k] = st->key_kind[k];
	spec.naggs = st->naggs;
	spec.order_agg = -1;
	spec.hash_capacity = st->hash_capacity;
	spec.program_ncols = st->prog_ncols;
	for (int a = 0; a < st->naggs; a++)
	{
		spec.kinds[a] = st->aggs[a].kind;
		spec.value_kinds[a] = st->aggs[a].value_kind;
		spec.programs[a] = st->programs[a];
		spec.fractions[a] = st->aggs[a].fraction;
		if (gpuops_agg_ordered(st->aggs[a].kind))
		{
			/* the planner gave every ordered aggregate the same input and direction */
			if (spec.order_agg < 0)
				spec.order_agg = a;
			spec.order_desc |= st->aggs[a].desc ? 1 : 0;
		}
	}
	st->backend_name = backend->name;
	rc = backend->agg_capacity(&settings, &spec, &capacity);
	if (rc != GPUOPS_OK)
		return rc;
	if (n > capacity && spec.order_agg >= 0)
	{
		/*
		 * Distinct counts and percentiles do not combine across chunks: an
		 * input over the device budget is aggregated whole, on the CPU.
		 */
		if (st->fallback == NULL)
			st->fallback = pstrdup("distinct or ordered aggregates over the device budget, "
								   "aggregated whole on the CPU");
		if (backend != gpuops_cpu_device()->agg)
		{
			backend = gpuops_cpu_device()->agg;
			st->backend_name = backend->name;
			settings.fault = GPUOPS_FAULT_NONE;
		}
		settings.device_memory_limit = 0;
		capacity = n;
	}
	if (n <= capacity)
	{
		rc = AggregateRange(st, backend, &settings, &spec, 0, n, &st->ngroups);
		if (rc == GPUOPS_OK)
			rc = backend->agg_groups(st->dev->handle, &st->group_rows, &st->results);
		return rc;
	}
	MemoryContextReset(st->merge_cxt);
	st->merge = GpuAggMergeCreate(st, st->merge_cxt);
	for (uint64 from = 0; from < n; from += capacity)
	{
		const uint64 *rows;
		const GpuopsAggResult *results;

		rc = AggregateRange(st, backend, &settings, &spec, from, Min(from + capacity, n), &ngroups);
		if (rc == GPUOPS_OK)
			rc = backend->agg_groups(st->dev->handle, &rows, &results);
		if (rc != GPUOPS_OK)
			return rc;
		GpuAggMergeChunk(st, from, ngroups, rows, results);
		st->dev->end();
	}
	st->ngroups = GpuAggMergeGroups(st, &st->group_rows, &st->results);
	return GPUOPS_OK;
}

/* Reads the whole input and aggregates it, on the CPU after a device failure. */
void
GpuAggReadAndAggregate(GpuAggState *st)
{
	instr_time t0, t1;

	INSTR_TIME_SET_CURRENT(t0);
	/* below a Gather of GpuStage: the workers' rows, in shared memory */
	GpuopsNodeReadInput(st, 0);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	st->read_ms += INSTR_TIME_GET_MILLISEC(t1);
	st->host_memory = GpuopsRowStoreMemory(st->store());
	GpuAggEncode(st);
	GpuAggNumericPrepare(st);

	GpuopsNodeRun<&GpuopsDevice::agg>(st, [&](const GpuopsAggBackend *backend) {
		return Aggregate(st, backend);
	});
	GpuAggNumericHost(st);
	st->aggregated = true;
	st->next_group = 0;
	st->empty_row_done = false;
}
