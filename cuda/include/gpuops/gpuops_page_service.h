/*
 * gpuops_page_service.h
 *    The device engine's C interface, one part: the page service, one
 *    process of the server that maps shared buffers for the GPU once and
 *    gathers the pages a backend lists into device memory the backend
 *    opens through CUDA IPC.
 *
 * Mapping shared buffers for the GPU costs the driver seconds a process
 * (2.3-11 s for 16 GB on the H100, doc/gpuquery.md step 5), which a session
 * of a few queries never earns back, so each such session copied its pages.
 * The service pays it once for the server: every session then reads pages
 * in place from its first query (test/bench/gather_probe.cu measured 0.5 ms
 * a session to open the staging memory, and gathers at 36 GB/s).
 *
 * The shared area (GpuopsPageService) lies in PostgreSQL's shared memory;
 * the PostgreSQL side allocates it, runs the service's loop in a background
 * worker and claims channels for backends.  Fields shared between processes
 * are read and written with atomic builtins.  A channel:
 *
 *   backend: claims it (owner: 0 -> its pid), writes index[0 .. npages)
 *            (buffer numbers) and which of the channel's two staging areas
 *            to fill (area), then req_seq + 1, and wakes the service
 *   service: sees req_seq != done_seq, gathers those pages into that
 *            staging area, waits for the copy, sets status and
 *            done_seq = req_seq
 *   backend: sees done_seq == req_seq; it may now ask again, into the
 *            other area, and copies this one into its own device memory
 *            meanwhile; it lets the pages' pins go only after the answer
 *
 * Two areas a channel let a backend's next request be gathered while it
 * deforms the last one (query_cuda.cu: a batch held over one add).
 *
 * Read where they lie (a request with `direct` set): the service copies
 * nothing that its device cache holds.  Its answer says where each page
 * is (loc): a slot of the cache, which the backend reads through its own
 * IPC mapping of the cache, or GPUOPS_PAGE_LOC_STAGING | p, page p of the
 * staging area (a page the cache could not take).  Pages not cached are
 * gathered into their slot, a request whose pages are all cached costs the
 * device nothing, and the service's copy no longer competes for the GPU
 * with the backend's own kernels: two processes' contexts take turns on
 * the device, and the 32 MB copy a request cost as long as the deforming.
 * Such a slot is read after the answer, so the service keeps it as it is
 * until the reader says it is done: the backend raises read_seq (never
 * lowers it) once its reads of every request up to that one are done, and
 * a slot handed out in a round that some unread request's answer came in
 * is never overwritten (a changed page goes to the staging area instead).
 * A channel whose owner leaves with reads unfinished stays abandoned until
 * read_seq catches up or the owner's process is gone (its context, and
 * every read of it, end with it).
 *
 * A backend that leaves with a request in flight (a cancel) marks the
 * channel abandoned instead of freeing it; the service frees it once the
 * request is done, so no new owner's request meets a gather still running.
 *
 * The device page cache.  The service keeps the pages it gathers in device
 * memory (cache_bytes of it), so that a later request for the same page
 * is copied within the device instead of over the bus (PCIe, 55 GB/s
 * against the device memory's terabytes a second).  A page is named by its
 * buffer, its relation and block, and the LSN the backend read from it
 * under the buffer's share lock after it listed the page's visible tuples:
 * the cached copy serves a request only when all of them are equal.  Why
 * that is enough: every change to a WAL-logged heap page that moves or
 * rewrites tuple data (an insert, a prune, a defragmentation, an in-place
 * update) advances its LSN under the buffer's exclusive lock, and LSNs
 * never go back while the server runs (the service and its cache end with
 * it; a hint bit's full-page image advances it too, under a share lock,
 * which only costs a miss).  What changes without the LSN, hint bits and
 * xmax, the device never reads: the backend decides visibility and lists
 * the tuples.  A copy may have been gathered after its LSN was read, so it
 * may hold later tuples too; they sit where no tuple of the listed LSN was
 * (the lister's pin forbids defragmenting the page meanwhile) and no
 * request at that LSN lists them.  Pages with no LSN are never cached:
 * unlogged and temporary tables, tables created in the same transaction
 * under wal_level minimal, and reads during recovery (their lister sends
 * LSN 0).
 */
#ifndef GPUOPS_PAGE_SERVICE_H
#define GPUOPS_PAGE_SERVICE_H

#include "gpuops_base.h"

GPUOPS_C_BEGIN

/*
 * Pages a request and each of a channel's two staging areas hold (32 MB of
 * 8 KB pages): a larger list is gathered in parts.
 */
#define GPUOPS_PAGE_SERVICE_PAGES 4096
#define GPUOPS_PAGE_SERVICE_MAX_CHANNELS 64
#define GPUOPS_PAGE_SERVICE_HANDLE_BYTES 64 /* sizeof(cudaIpcMemHandle_t) */

/* GpuopsPageService.state */
enum
{
	GPUOPS_PAGE_SERVICE_OFF = 0, /* no service process (none yet, none possible, or stopped) */
	GPUOPS_PAGE_SERVICE_MAPPING, /* it maps shared buffers: backends copy meanwhile */
	GPUOPS_PAGE_SERVICE_SERVING	 /* channels may be claimed */
};

typedef struct GpuopsPageChannel
{
	uint32_t owner;		/* 0: free; else the owning process's pid */
	uint32_t abandoned; /* the owner left with a request in flight */
	uint64_t req_seq;	/* the owner's requests so far */
	uint64_t done_seq;	/* the service's answers so far */
	int32_t status;		/* the last answer: GPUOPS_OK or a device failure */
	uint32_t cached;	/* the last answer: its pages copied from the device cache */
	uint32_t staged;	/* the last answer: its pages in the staging area (all, unless direct) */
	uint32_t npages;	/* the request's pages, up to GPUOPS_PAGE_SERVICE_PAGES */
	uint32_t area;		/* the staging area they go to: 0 or 1 */
	uint32_t direct;	/* read where they lie: the answer's loc says where */
	uint64_t read_seq;	/* the owner's reads of the answers up to this one are done */
	uint32_t rel[3];	/* the pages' relation: tablespace, database, file number */
	uint32_t index
		[GPUOPS_PAGE_SERVICE_PAGES]; /* buffer numbers: page p at base + index[p] x page_size */
	uint32_t block[GPUOPS_PAGE_SERVICE_PAGES]; /* page p's block number in rel */
	uint64_t lsn[GPUOPS_PAGE_SERVICE_PAGES];   /* its LSN as listed; 0: not to be cached */
	uint32_t loc[GPUOPS_PAGE_SERVICE_PAGES];   /* a direct answer: page p's cache slot, or
												* GPUOPS_PAGE_LOC_STAGING | its staging page */
} GpuopsPageChannel;

/* A direct answer's page in the staging area (equal to GPUOPS_QUERY_PAGE_IN_PAGES) */
#define GPUOPS_PAGE_LOC_STAGING 0x80000000u

typedef struct GpuopsPageService
{
	int32_t state;		 /* GPUOPS_PAGE_SERVICE_* */
	uint32_t generation; /* +1 each time a service starts serving (IPC handles change) */
	int32_t pid;		 /* the service process */
	uint32_t nchannels;
	uint32_t page_size;
	void *latch;		  /* the service's latch (set by GpuopsPageLink.wake) */
	const void *base;	  /* shared buffers' first page (the same in every process) */
	uint64_t bytes;		  /* shared buffers' bytes from base */
	double map_ms;		  /* how long mapping them took */
	int64_t cache_want;	  /* the device page cache's bytes: -1 the default, 0 none */
	uint64_t cache_bytes; /* ... as allocated (0: no cache) */
	uint64_t requests;	  /* requests served, over the service's life */
	uint64_t pages;		  /* pages gathered, over the service's life */
	uint64_t cached;	  /* ... of them copied from the device cache */
	uint8_t handle[GPUOPS_PAGE_SERVICE_HANDLE_BYTES];		/* the staging areas, one allocation */
	uint8_t cache_handle[GPUOPS_PAGE_SERVICE_HANDLE_BYTES]; /* the device cache (cache_bytes) */
	GpuopsPageChannel channels[1];							/* nchannels of them */
} GpuopsPageService;

/* Bytes of a GpuopsPageService with nchannels channels. */
GPUOPS_INLINE uint64_t
gpuops_page_service_bytes(uint32_t nchannels)
{
	return (uint64_t) sizeof(GpuopsPageService) +
		(uint64_t) (nchannels > 1 ? nchannels - 1 : 0) * sizeof(GpuopsPageChannel);
}

/* A backend's claimed channel, for the CUDA query engine (GpuopsQuerySpec.pages_service). */
typedef struct GpuopsPageLink
{
	GpuopsPageService *service;
	uint32_t channel;
	uint32_t generation; /* the service's when claimed: another means it restarted */
	void (*wake)(void);	 /* sets the service's latch */
} GpuopsPageLink;

/*
 * The service process's side.  Open creates its CUDA context, the staging
 * areas (nchannels x 2 x GPUOPS_PAGE_SERVICE_PAGES x page_size of device
 * memory: 64 MB a channel of 8 KB pages) and their IPC handle, and the
 * device page cache (cache_want bytes, no more than shared buffers; -1:
 * shared buffers' bytes up to a quarter of the device's memory; a cache
 * that cannot be allocated is left out); 0 when there is no GPU (the
 * service then exits for good), -1 on any other failure, 1 on success.
 * map_step maps the next piece of shared buffers: 1 when all are mapped,
 * 0 while more remain, -1 on failure.  serve answers every pending request and frees abandoned
 * channels: the number answered, or -1 after a device failure (the service
 * then exits and is started again).  close gives everything back.
 */
extern int gpuops_page_service_open(GpuopsPageService *svc) GPUOPS_NOEXCEPT;
extern int gpuops_page_service_map_step(GpuopsPageService *svc) GPUOPS_NOEXCEPT;
extern int gpuops_page_service_serve(GpuopsPageService *svc) GPUOPS_NOEXCEPT;
extern void gpuops_page_service_close(void) GPUOPS_NOEXCEPT;

/*
 * The backend's side, where the PostgreSQL side keeps the channels: claim
 * takes a free channel of a serving service (0: none), release gives it
 * back (abandoned when a request is in flight).  The device engine
 * (query_cuda.cu) makes the requests.
 */
extern int gpuops_page_service_claim(GpuopsPageService *svc, uint32_t pid,
									 GpuopsPageLink *link) GPUOPS_NOEXCEPT;
extern void gpuops_page_service_release(const GpuopsPageLink *link) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_PAGE_SERVICE_H */
