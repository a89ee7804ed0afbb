/*
 * recent_buffers.h
 *    Which shared buffer last held a table's block, kept in shared memory,
 *    so that a walk of a table's pages pins each page where it last was
 *    (PostgreSQL's ReadRecentBuffer: the buffer's header locked and its tag
 *    compared) instead of looking it up in the buffer mapping table (a
 *    partition lock, and a probe of a hash table as large as shared
 *    buffers: two cache misses a page, the largest part of the walk's
 *    cost after the page itself).
 *
 * The table is direct-mapped, one entry per shared buffer, a table's
 * consecutive blocks in consecutive entries (a walk reads it in order).  An
 * entry is only a guess: ReadRecentBuffer pins nothing unless the buffer
 * still holds that block, and the read goes through the mapping table
 * otherwise (then the entry is set).  Entries are written without a lock:
 * a 4-byte store is atomic, and a lost or stale one costs a lookup.
 *
 * One difference from ReadBufferExtended: a buffer pinned through
 * ReadRecentBuffer keeps its usage count (PostgreSQL pins it with
 * PinBuffer_Locked), where a read without a strategy raises it and a
 * bulk read's ring strategy raises it from 0 to 1; under pressure on
 * shared buffers, pages read only by these walks are evicted a little
 * sooner.
 */
#ifndef GPUOPS_RECENT_BUFFERS_H
#define GPUOPS_RECENT_BUFFERS_H

extern "C" {
#include "postgres.h"

#include "storage/bufmgr.h"
#include "utils/rel.h"
}

/* From _PG_init (shared_preload_libraries): asks for the table's memory. */
extern void GpuopsRecentBuffersInit(void);

/*
 * `block` of rel's main fork, pinned, as ReadBufferExtended(rel,
 * MAIN_FORKNUM, block, RBM_NORMAL, strategy) gives it (and counted in the
 * relation's buffer statistics alike).
 */
extern Buffer RecentBufferRead(Relation rel, BlockNumber block, BufferAccessStrategy strategy);

#endif /* GPUOPS_RECENT_BUFFERS_H */
