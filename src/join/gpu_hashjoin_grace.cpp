/*
 * gpu_hashjoin_grace.cpp
 *    GpuHashJoin's partitioned mode: a grace hash join on the host for build
 *    sides larger than one device build may hold.
 *
 * The inner rows with non-NULL keys are split into 2^bits partitions by the
 * top bits of their key hash (join_hash.hpp, the hash the device's directory
 * uses), enough partitions that each holds about 3/4 of a build's capacity.
 * The outer side is then read whole into the row store and split the same
 * way; outer rows with a NULL key go to one extra partition with no build
 * rows (they never match, and outer joins return them).  Each partition
 * keeps its rows' store indexes and key words, so a build or a probe batch
 * is handed to the backend without touching the rows again.
 *
 * Partition pairs are joined one after another.  A partition whose inner
 * rows exceed the capacity (one key in half the rows: hashing cannot split
 * it) is built in chunks of `capacity` rows, and its outer rows are probed
 * against each chunk; a per-outer-row flag carries "matched" from chunk to
 * chunk, so semi joins return a row once and unmatched rows of outer and
 * anti joins are decided with the last chunk.  Unmatched inner rows (RIGHT,
 * FULL) are found afterwards from the node's per-inner-row flags, as in the
 * streaming mode.
 *
 * Both sides live in host memory (the row stores); memory beyond that is
 * not handled here.
 */
extern "C" {
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"
}

#include "gpu_hashjoin_state.h"
#include "join_hash.hpp"

typedef struct GracePart
{
	uint64 n;
	uint64 cap;
	uint64 *rows;						 /* row store indexes */
	uint64 *words[GPUOPS_MAX_JOIN_KEYS]; /* key words, none for the NULL partition */
} GracePart;

struct GpuHashJoinGrace
{
	MemoryContext cxt;		 /* this struct and the inner partitions */
	MemoryContext outer_cxt; /* outer partitions: read again on rescan */
	MemoryContext part_cxt;	 /* the current partition's flags */
	int bits;
	uint32 nparts;	 /* hash partitions; outer[nparts]: NULL keys */
	uint64 capacity; /* build rows per chunk */
	GracePart *inner;
	GracePart *outer;
	bool outer_ready;

	/* position: partition, chunk of its inner rows, next outer row */
	uint32 part;
	uint64 chunk;
	uint64 chunk_rows;
	bool in_chunk;	  /* the chunk is built and being probed */
	uint64 probe_off; /* the current probe batch's first outer row */
	uint64 next_off;
	bool *flags; /* per outer row of the partition: matched */
};

static void
GraceAppend(MemoryContext cxt, GracePart *part, int nkeys, uint64 row, const GpuopsJoinKeys *keys,
			uint32 i)
{
	if (part->n == part->cap)
	{
		uint64 cap = Max(part->cap * 2, (uint64) 1024);

		if (part->rows == NULL)
		{
			part->rows = (uint64 *) MemoryContextAllocHuge(cxt, cap * sizeof(uint64));
			for (int k = 0; keys && k < nkeys; k++)
				part->words[k] = (uint64 *) MemoryContextAllocHuge(cxt, cap * sizeof(uint64));
		}
		else
		{
			part->rows = (uint64 *) repalloc_huge(part->rows, cap * sizeof(uint64));
			for (int k = 0; keys && k < nkeys; k++)
				part->words[k] = (uint64 *) repalloc_huge(part->words[k], cap * sizeof(uint64));
		}
		part->cap = cap;
	}
	part->rows[part->n] = row;
	for (int k = 0; keys && k < nkeys; k++)
		part->words[k][part->n] = keys->words[k][i];
	part->n++;
}

/*
 * Splits every row of `store` into parts by key hash; rows with a NULL key
 * go to `nullpart` (or nowhere when it is NULL).
 */
static void
Split(GpuHashJoinState *st, GpuopsRowStore *store, bool outer, GracePart *parts,
	  GracePart *nullpart, MemoryContext cxt)
{
	GpuHashJoinGrace *gr = st->grace;
	int shift = 64 - gr->bits;

	for (int b = 0; b < store->nbatches; b++)
	{
		GpuopsBatch *batch = store->batches[b];
		GpuopsJoinKeys keys;

		MemoryContextReset(st->key_cxt);
		GpuHashJoinBatchKeys(st, store, batch, outer, st->key_cxt, &keys);
		for (uint32 i = 0; i < batch->nrows; i++)
		{
			uint64 row = ((uint64) b << GPUOPS_BATCH_SHIFT) + i;

			if (gpuops::join_key_null(keys.nulls, st->nkeys, i))
			{
				if (nullpart)
					GraceAppend(cxt, nullpart, st->nkeys, row, NULL, i);
				continue;
			}
			GraceAppend(cxt, &parts[gpuops::join_hash(keys.words, st->nkeys, i) >> shift],
						st->nkeys, row, &keys, i);
		}
		CHECK_FOR_INTERRUPTS();
	}
	MemoryContextReset(st->key_cxt);
}

/*
 * Enters partitioned mode for an inner side of `rows` non-NULL-key rows,
 * over the `capacity` one build holds.
 */
void
GpuHashJoinGraceStart(GpuHashJoinState *st, uint64 rows)
{
	MemoryContext cxt = AllocSetContextCreate(MemoryContextGetParent(st->key_cxt),
											  "GpuHashJoin partitions", ALLOCSET_DEFAULT_SIZES);
	GpuHashJoinGrace *gr = (GpuHashJoinGrace *) MemoryContextAllocZero(cxt,
																	   sizeof(GpuHashJoinGrace));
	uint64 capacity = st->dev->backend->join_capacity(st->dev->handle);
	uint64 per_part = Max(capacity / 4 * 3, (uint64) 1);

	gr->cxt = cxt;
	gr->outer_cxt = AllocSetContextCreate(cxt, "GpuHashJoin outer partitions",
										  ALLOCSET_DEFAULT_SIZES);
	gr->part_cxt = AllocSetContextCreate(cxt, "GpuHashJoin partition", ALLOCSET_DEFAULT_SIZES);
	gr->capacity = capacity;
	gr->bits = 1;
	while (gr->bits < 12 && ((uint64) 1 << gr->bits) * per_part < rows)
		gr->bits++;
	gr->nparts = 1U << gr->bits;
	gr->inner = (GracePart *) MemoryContextAllocZero(cxt, gr->nparts * sizeof(GracePart));
	st->grace = gr;
	st->partitions = gr->nparts;
	Split(st, &st->inner()->store, false, gr->inner, NULL, cxt);
	/* the build (streaming) join begun to learn the capacity is not used */
	GpuHashJoinBegin(st, NULL);
	st->mode = &gpu_hashjoin_grace_mode;
}

/* Back to the first partition's first chunk. */
static void
Rewind(GpuHashJoinGrace *gr)
{
	gr->part = 0;
	gr->chunk = 0;
	gr->in_chunk = false;
}

/* Reads the whole outer side and splits it. */
static void
SplitOuter(GpuHashJoinState *st)
{
	GpuHashJoinGrace *gr = st->grace;

	MemoryContextReset(gr->outer_cxt);
	gr->outer = (GracePart *) MemoryContextAllocZero(gr->outer_cxt,
													 (gr->nparts + 1) * sizeof(GracePart));
	GpuopsRowStoreReset(&st->outer()->store);
	GpuopsNodeReadInput(st, 0);
	Split(st, &st->outer()->store, true, gr->outer, st->fill_outer ? &gr->outer[gr->nparts] : NULL,
		  gr->outer_cxt);
	gr->outer_ready = true;
	Rewind(gr);
}

/* Builds the current chunk into the begun join (also the mode's rebuild). */
static GpuopsStatus
GraceBuild(GpuHashJoinState *st)
{
	GpuHashJoinGrace *gr = st->grace;
	GracePart *ip = &gr->inner[gr->part];
	GpuopsJoinKeys keys;
	GpuopsStatus rc;

	keys.nkeys = st->nkeys;
	keys.nrows = gr->chunk_rows;
	for (int k = 0; k < st->nkeys; k++)
	{
		keys.words[k] = ip->words[k] + gr->chunk;
		keys.nulls[k] = NULL;
	}
	rc = st->dev->backend->join_build(st->dev->handle, &keys);
	if (rc == GPUOPS_OK)
		rc = st->dev->backend->join_build_finish(st->dev->handle);
	return rc;
}

/* The current probe batch's keys. */
static void
GraceProbeKeys(GpuHashJoinState *st, GpuopsJoinKeys *keys)
{
	GpuHashJoinGrace *gr = st->grace;
	GracePart *op = &gr->outer[gr->part];

	keys->nkeys = st->nkeys;
	keys->nrows = st->probe_rows;
	for (int k = 0; k < st->nkeys; k++)
	{
		keys->words[k] = op->words[k] + gr->probe_off;
		keys->nulls[k] = NULL;
	}
}

/*
 * Sets up the next probe batch: up to 64K outer rows of the current
 * partition against the current chunk (built on entering it).  False when
 * every partition is done.
 */
static bool
GraceNextBatch(GpuHashJoinState *st)
{
	GpuHashJoinGrace *gr = st->grace;

	if (!gr->outer_ready)
		SplitOuter(st);
	for (;;)
	{
		GracePart *ip;
		GracePart *op;
		uint64 m;

		if (gr->part > gr->nparts)
			return false;
		ip = gr->part < gr->nparts ? &gr->inner[gr->part] : NULL;
		op = &gr->outer[gr->part];
		if (!gr->in_chunk)
		{
			uint64 inner_rows = ip ? ip->n : 0;

			if (op->n == 0 || (inner_rows == 0 && !st->fill_outer))
			{
				/* nothing to return from this partition */
				gr->part++;
				continue;
			}
			gr->chunk_rows = Min(gr->capacity, inner_rows - gr->chunk);
			if (gr->chunk == 0)
			{
				MemoryContextReset(gr->part_cxt);
				gr->flags = (bool *) MemoryContextAllocHuge(gr->part_cxt, op->n);
				memset(gr->flags, 0, op->n);
			}
			if (gr->chunk_rows > 0)
			{
				GpuopsStatus rc = GpuHashJoinBegin(st, st->dev->backend);

				if (rc == GPUOPS_OK)
					rc = GraceBuild(st);
				if (rc != GPUOPS_OK)
					GpuHashJoinFallBack(st, rc);
				st->builds++;
			}
			gr->in_chunk = true;
			gr->next_off = 0;
		}
		if (gr->next_off >= op->n)
		{
			/* every outer row has met this chunk */
			gr->in_chunk = false;
			gr->chunk += gr->chunk_rows;
			if (ip == NULL || gr->chunk >= ip->n)
			{
				gr->part++;
				gr->chunk = 0;
			}
			continue;
		}
		m = Min((uint64) st->probe_limit, op->n - gr->next_off);
		gr->probe_off = gr->next_off;
		gr->next_off += m;
		st->probe_rows = (uint32) m;
		st->probe_pos = 0;
		st->probe_map = op->rows + gr->probe_off;
		st->build_map = ip ? ip->rows + gr->chunk : NULL;
		st->outer_flags = gr->flags + gr->probe_off;
		st->emit_unmatched = ip == NULL || gr->chunk + gr->chunk_rows >= ip->n;
		st->matched = false;
		st->cursor = 0;
		st->pairs_before = 0;
		memset(&st->pairs, 0, sizeof(st->pairs));
		if (gr->chunk_rows > 0)
			GpuHashJoinProbe(st);
		return true;
	}
}

/* A rescan: the outer side is read and split again; the inner side stays. */
static void
GraceRescan(GpuHashJoinState *st)
{
	GpuHashJoinGrace *gr = st->grace;

	MemoryContextReset(gr->outer_cxt);
	MemoryContextReset(gr->part_cxt);
	gr->outer = NULL;
	gr->flags = NULL;
	gr->outer_ready = false;
	Rewind(gr);
}

/* Leaves partitioned mode (the inner side is read again). */
static void
GraceEnd(GpuHashJoinState *st)
{
	MemoryContextDelete(st->grace->cxt);
	st->grace = NULL;
}

/* Where every phase of a partitioned join goes (gpu_hashjoin_state.h). */
const GpuHashJoinMode gpu_hashjoin_grace_mode = {
	"partitioned", GraceNextBatch, GraceProbeKeys, GpuHashJoinOwnProbe, /* the current chunk's */
	GraceBuild,	   GraceRescan,	   GraceEnd,
};
