/*
 * gpu_agg_merge.cpp
 *    Chunked GpuAgg: the groups of consecutive chunks of the input, each
 *    aggregated on the device, merged on the host (gpu_agg_exec.h).
 *
 * A hash table keyed by the packed group key (the same words the device
 * groups by, agg_common.hpp) maps each group to its merged entry; a chunk's
 * states are combined into it with the device's own combine functions, so
 * the result is that of one aggregation over every row.  Of equal min/max
 * values the later row wins, as on the device; a group's first row is its
 * earliest chunk's.
 */
extern "C" {
#include "postgres.h"

#include "utils/hsearch.h"
#include "utils/memutils.h"
}

#include "agg_common.hpp"
#include "gpu_agg_exec.h"

struct GpuAggMerge
{
	MemoryContext cxt;
	HTAB *groups; /* packed key -> index */
	int nwords;
	Size keysize;
	uint64 ngroups;
	uint64 capacity;
	uint64 *rows;			  /* per group its first row */
	GpuopsAggResult *results; /* per group naggs states */
};

GpuAggMerge *
GpuAggMergeCreate(GpuAggState *st, MemoryContext cxt)
{
	GpuAggMerge *m = (GpuAggMerge *) MemoryContextAllocZero(cxt, sizeof(GpuAggMerge));
	HASHCTL ctl;

	m->cxt = cxt;
	/* ordered aggregates are never chunked (gpu_agg_exec.cpp): the group key alone */
	m->nwords = GpuAggKeyWords(st);
	/* no GROUP BY: one group, under a key of one zero word */
	m->keysize = sizeof(uint64) * Max(m->nwords, 1);
	ctl.keysize = m->keysize;
	ctl.entrysize = m->keysize + sizeof(uint64);
	ctl.hcxt = cxt;
	m->groups = hash_create("GpuAgg merge", 1024, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	m->capacity = 1024;
	m->rows = (uint64 *) MemoryContextAllocHuge(cxt, m->capacity * sizeof(uint64));
	m->results = (GpuopsAggResult *) MemoryContextAllocHuge(
		cxt, m->capacity * Max(st->naggs, 1) * sizeof(GpuopsAggResult));
	st->merge = m;
	return m;
}

/* The normalized words of an aggregate's argument in a stored row. */
static void
ValueWords(GpuAggState *st, const GpuAggDesc *d, uint64 row, uint64 *w)
{
	int b = (int) (row >> GPUOPS_BATCH_SHIFT);
	uint32 i = (uint32) (row & (GPUOPS_BATCH_ROWS - 1));
	/* the device's input: the raw value, or a text argument's rank */
	const uint8 *raw = (const uint8 *) GpuAggValueColumn(st, (int) (d - st->aggs), b) +
		(Size) i * gpuops_key_raw_width(d->value_kind);

	w[0] = w[1] = 0;
	gpuops::value_words(d->value_kind, raw, w);
}

/* a <- a combined with b (b's rows come after a's) */
static void
Combine(GpuAggState *st, const GpuAggDesc *d, GpuopsAggResult *a, const GpuopsAggResult *b)
{
	switch (d->kind)
	{
		case GPUOPS_AGG_COUNT:
			gpuops::to_result(gpuops::CountOp()(gpuops::count_from(*a), gpuops::count_from(*b)), a);
			break;
		case GPUOPS_AGG_SUM_INT:
			gpuops::to_result(
				gpuops::SumIntOp()(gpuops::sum_int_from(*a), gpuops::sum_int_from(*b)), a);
			break;
		case GPUOPS_AGG_SUMSQ_INT:
			gpuops::to_result(
				gpuops::SumSqIntOp()(gpuops::sumsq_int_from(*a), gpuops::sumsq_int_from(*b)), a);
			break;
		case GPUOPS_AGG_FLOAT:
			gpuops::to_result(gpuops::FloatOp()(gpuops::float_from(*a), gpuops::float_from(*b)), a);
			break;
		case GPUOPS_AGG_COUNT_DISTINCT:
		case GPUOPS_AGG_PERCENTILE_DISC:
		case GPUOPS_AGG_PERCENTILE_CONT:
			/* not combinable: gpu_agg_exec.cpp never chunks them */
			elog(ERROR, "GpuAgg: ordered aggregate in a chunked aggregation");
			break;
		case GPUOPS_AGG_MIN:
		case GPUOPS_AGG_MAX:
			{
				uint64 wa[2], wb[2];
				bool take;

				if (b->count == 0)
					break;
				if (a->count == 0)
				{
					*a = *b;
					break;
				}
				ValueWords(st, d, a->row, wa);
				ValueWords(st, d, b->row, wb);
				if (wa[0] != wb[0] || wa[1] != wb[1])
				{
					bool b_less = wb[0] < wa[0] || (wb[0] == wa[0] && wb[1] < wa[1]);

					take = (d->kind == GPUOPS_AGG_MIN) == b_less;
				}
				else
					take = true; /* equal values: the later row, as on the device */
				if (take)
					*a = *b;
				break;
			}
	}
}

void
GpuAggMergeChunk(GpuAggState *st, uint64 first_row, uint64 ngroups, const uint64 *group_rows,
				 const GpuopsAggResult *results)
{
	GpuAggMerge *m = st->merge;
	int naggs = st->naggs;
	uint64 key[gpuops::kAggMaxKeyWords];

	for (uint64 g = 0; g < ngroups; g++)
	{
		uint64 row = first_row + group_rows[g];
		GpuopsAggResult r[GPUOPS_MAX_AGGS];
		char *entry;
		bool found;
		uint64 idx;

		/* min/max rows as the store numbers them, not the chunk */
		memcpy(r, &results[g * naggs], naggs * sizeof(GpuopsAggResult));
		for (int a = 0; a < naggs; a++)
			r[a].row += first_row;
		memset(key, 0, sizeof(key));
		GpuAggRowKey(st, row, key, m->nwords);
		entry = (char *) hash_search(m->groups, key, HASH_ENTER, &found);
		if (found)
		{
			memcpy(&idx, entry + m->keysize, sizeof(uint64));
			for (int a = 0; a < naggs; a++)
				Combine(st, &st->aggs[a], &m->results[idx * naggs + a], &r[a]);
			continue;
		}
		if (m->ngroups == m->capacity)
		{
			m->capacity *= 2;
			m->rows = (uint64 *) repalloc_huge(m->rows, m->capacity * sizeof(uint64));
			m->results = (GpuopsAggResult *) repalloc_huge(
				m->results, m->capacity * Max(naggs, 1) * sizeof(GpuopsAggResult));
		}
		idx = m->ngroups++;
		memcpy(entry + m->keysize, &idx, sizeof(uint64));
		m->rows[idx] = row;
		memcpy(&m->results[idx * naggs], r, naggs * sizeof(GpuopsAggResult));
	}
}

uint64
GpuAggMergeGroups(GpuAggState *st, const uint64 **group_rows, const GpuopsAggResult **results)
{
	*group_rows = st->merge->rows;
	*results = st->merge->results;
	return st->merge->ngroups;
}
