/*
 * join_service.h
 *    GpuHashJoin's shared build: in a parallel plan the leader alone builds
 *    the directory on the device, and a thread of the leader looks up the
 *    workers' probe keys in it.  Workers then create no CUDA context of
 *    their own (contexts are made one at a time by the driver: about 120 ms
 *    each, over a second for 8 workers), and the inner side is built once.
 *
 * The request slots live in the parallel query's shared memory, one per
 * worker: a worker copies a probe batch's key words and null bitmaps into
 * its slot, marks it requested and wakes the service; the service writes
 * each row's directory entry (or -1) and match count back and wakes the
 * worker.  The worker
 * expands the entries into pairs with its own copy of the directory, built
 * by the CPU backend from the same inner rows (the directory is the sorted
 * distinct key hashes, so entry d is the same hash in both; the leader
 * publishes the directory's size and checksum, and a worker whose copy
 * differs does not use the service).
 *
 * No PostgreSQL here: waits are POSIX semaphores in the shared memory, and
 * the service thread calls only the join backend's lookup.  The caller
 * (src/join/gpu_hashjoin_shared.cpp) owns the shared memory and must stop the
 * service before that memory is unmapped or the join ended.
 */
#ifndef GPUOPS_JOIN_SERVICE_H
#define GPUOPS_JOIN_SERVICE_H

#include "gpuops_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The service's state, as workers see it. */
#define GPUOPS_SERVICE_PENDING 0	 /* the leader has not built yet */
#define GPUOPS_SERVICE_READY 1		 /* lookups are served */
#define GPUOPS_SERVICE_UNAVAILABLE 2 /* no shared build: each process builds its own */
#define GPUOPS_SERVICE_CLOSED 3		 /* stopped; requests fail */

/* A wait's outcome. */
#define GPUOPS_SERVICE_WAITING 0
#define GPUOPS_SERVICE_DONE 1
#define GPUOPS_SERVICE_FAILED (-1)

typedef struct GpuopsJoinService GpuopsJoinService;

/*
 * A process's account of its part of the join, for the leader's EXPLAIN
 * ANALYZE VERBOSE (worker plans' own EXPLAIN output is not shown): where a
 * worker's time went, so a slow parallel join can be told apart from a
 * slow service.
 */
typedef struct GpuopsJoinWorkerStats
{
	uint64_t reported;	  /* 1 once the worker has written it */
	uint64_t attached;	  /* 1 when it took the leader's build (else its own) */
	uint64_t left;		  /* 1 when the service failed or closed under it */
	uint64_t shared;	  /* 1 when it probed through the service */
	uint64_t counts_only; /* 1 when it used only match counts (no inner rows read) */
	uint64_t probe_rows;
	uint64_t lookups;	   /* requests sent to the service */
	double inner_ms;	   /* reading the inner side */
	double leader_wait_ms; /* waiting for the leader's build */
	double directory_ms;   /* building its own (host) directory */
	double outer_ms;	   /* reading the outer side through its child plan */
	double lookup_ms;	   /* waiting for the service's answers */
	double total_ms;	   /* from its first row asked for to the outer side's end */
} GpuopsJoinWorkerStats;

extern size_t gpuops_join_service_size(uint32_t nslots, int nkeys,
									   uint32_t slot_rows) GPUOPS_NOEXCEPT;
extern void gpuops_join_service_init(void *shm, uint32_t nslots, int nkeys, uint32_t slot_rows,
									 int state) GPUOPS_NOEXCEPT;
/* Before workers are launched again (a rescan): every slot free. */
extern void gpuops_join_service_reset_slots(void *shm) GPUOPS_NOEXCEPT;
extern int gpuops_join_service_state(const void *shm) GPUOPS_NOEXCEPT;
extern void gpuops_join_service_set_state(void *shm, int state) GPUOPS_NOEXCEPT;
extern uint32_t gpuops_join_service_slot_rows(const void *shm) GPUOPS_NOEXCEPT;
extern uint32_t gpuops_join_service_nslots(const void *shm) GPUOPS_NOEXCEPT;
extern void gpuops_join_service_directory(const void *shm, uint64_t *ndir,
										  uint64_t *checksum) GPUOPS_NOEXCEPT;
/* Lookups served and rows looked up, for EXPLAIN. */
extern void gpuops_join_service_counts(const void *shm, uint64_t *requests,
									   uint64_t *rows) GPUOPS_NOEXCEPT;

/* Worker: its account (slot: its worker number); leader: a worker's. */
extern void gpuops_join_service_report(void *shm, uint32_t slot,
									   const GpuopsJoinWorkerStats *stats) GPUOPS_NOEXCEPT;
extern void gpuops_join_service_worker_stats(const void *shm, uint32_t slot,
											 GpuopsJoinWorkerStats *stats) GPUOPS_NOEXCEPT;

/*
 * Leader: publishes the built join's directory and starts the thread
 * (state READY).  Stop ends the thread after the request in hand, fails
 * the others, closes the service (CLOSED) and frees *svc; it must come
 * before the shared memory goes and before join_end.
 */
extern GpuopsStatus gpuops_join_service_start(void *shm, const GpuopsJoinBackend *backend,
											  GpuopsJoin *join,
											  GpuopsJoinService **svc) GPUOPS_NOEXCEPT;
extern void gpuops_join_service_stop(GpuopsJoinService *svc) GPUOPS_NOEXCEPT;

/*
 * Worker: submit copies the keys (at most slot_rows rows) into the slot and
 * wakes the service; wait waits up to timeout_ms for the answer, then says
 * DONE (*slots and *counts: each row's directory entry and number of build
 * rows, valid until the next submit), FAILED (the lookup failed or the
 * service closed) or WAITING.
 */
extern int gpuops_join_service_submit(void *shm, uint32_t slot,
									  const GpuopsJoinKeys *keys) GPUOPS_NOEXCEPT;
extern int gpuops_join_service_wait(void *shm, uint32_t slot, int timeout_ms, const int64_t **slots,
									const uint32_t **counts) GPUOPS_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif
