/*
 * recent_buffers.cpp
 *    The shared table of the buffers that last held a table's blocks
 *    (recent_buffers.h).
 */
extern "C" {
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "pg_compat.h"
}

#include "recent_buffers.h"
#include "shmem_area.h"

/* NBuffers entries (a Buffer, 0 for none); NULL when gpuops was not preloaded. */
static pg_atomic_uint32 *entries = NULL;

static void
InitShared(void *area)
{
	pg_atomic_uint32 *e = (pg_atomic_uint32 *) area;

	for (int i = 0; i < NBuffers; i++)
		pg_atomic_init_u32(&e[i], 0);
}

void
GpuopsRecentBuffersInit(void)
{
	GpuopsShmemArea("gpuops recent buffers", (Size) NBuffers * sizeof(pg_atomic_uint32),
					(void **) &entries, InitShared);
}

/*
 * The entry of (rel, block): the relation's file spreads tables over the
 * table (a multiplicative hash), the block steps through it one by one.
 */
static inline uint32
EntryOf(Relation rel, BlockNumber block)
{
	uint32 file[3];

	GpuopsRelFile(rel, file);
	return (uint32) (((uint64) (file[2] * 2654435761u + file[1] * 40503u) + block) %
					 (uint64) NBuffers);
}

Buffer
RecentBufferRead(Relation rel, BlockNumber block, BufferAccessStrategy strategy)
{
	pg_atomic_uint32 *entry;
	Buffer recent, buf;

	if (entries == NULL || RelationUsesLocalBuffers(rel))
		return ReadBufferExtended(rel, MAIN_FORKNUM, block, RBM_NORMAL, strategy);
	entry = &entries[EntryOf(rel, block)];
	recent = (Buffer) pg_atomic_read_u32(entry);
	if (recent > 0 && recent <= NBuffers &&
		GpuopsReadRecentBuffer(rel, MAIN_FORKNUM, block, recent))
	{
		/* what ReadBufferExtended counts for a hit (ReadRecentBuffer counts the usage) */
		pgstat_count_buffer_read(rel);
		pgstat_count_buffer_hit(rel);
		return recent;
	}
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, block, RBM_NORMAL, strategy);
	pg_atomic_write_u32(entry, (uint32) buf);
	return buf;
}
