/*
 * join_service.cpp
 *    The shared build's request slots and the leader's service thread
 *    (join_service.h says what they are for).
 *
 * Shared memory: a header, then one slot per worker, each a small header
 * followed by its key words, null bitmaps and answers.  A slot's state is
 * the truth; the semaphores only wake the other side, so a lost or extra
 * wake-up costs a timeout, never a wrong answer.  A slot moves FREE ->
 * REQUESTED (worker) -> SERVING -> DONE or FAILED (service) -> FREE
 * (worker, once read); a worker may take back a request the service has not
 * begun when the service is no longer READY.
 */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <thread>

#include "device_common.hpp"
#include "join_service.h"

namespace gpuops {
namespace {

enum SlotState : uint32_t
{
	SLOT_FREE,
	SLOT_REQUESTED,
	SLOT_SERVING,
	SLOT_DONE,
	SLOT_FAILED
};

static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared atomics must be lock-free");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared atomics must be lock-free");

struct alignas(64) Header
{
	std::atomic<uint32_t> state;
	uint32_t nslots;
	int32_t nkeys;
	uint32_t slot_rows;
	uint64_t slot_bytes; /* one slot, header and arrays */
	uint64_t ndir;
	uint64_t checksum;
	std::atomic<uint64_t> requests;
	std::atomic<uint64_t> rows;
	sem_t wake; /* a slot was requested */
};

struct alignas(64) Slot
{
	std::atomic<uint32_t> state;
	uint32_t nrows;
	uint32_t null_mask;			 /* bit k: key k has a null bitmap */
	sem_t done;					 /* the service answered */
	GpuopsJoinWorkerStats stats; /* the worker's, written once at its end */
};

constexpr size_t
align64(size_t n)
{
	return (n + 63) & ~(size_t) 63;
}

size_t
null_bytes(uint32_t rows)
{
	return align64((rows + 7) / 8);
}

size_t
slot_bytes(int nkeys, uint32_t rows)
{
	return align64(sizeof(Slot)) + (size_t) nkeys * align64((size_t) rows * 8) +
		(size_t) nkeys * null_bytes(rows) + align64((size_t) rows * 8) + align64((size_t) rows * 4);
}

Header *
header(void *shm)
{
	return static_cast<Header *>(shm);
}

const Header *
header(const void *shm)
{
	return static_cast<const Header *>(shm);
}

Slot *
slot_at(void *shm, uint32_t i)
{
	Header *h = header(shm);

	return reinterpret_cast<Slot *>(static_cast<char *>(shm) + align64(sizeof(Header)) +
									i * h->slot_bytes);
}

uint64_t *
slot_words(const Header *h, Slot *s, int k)
{
	return reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(s) + align64(sizeof(Slot)) +
										k * align64((size_t) h->slot_rows * 8));
}

uint8_t *
slot_nulls(const Header *h, Slot *s, int k)
{
	return reinterpret_cast<uint8_t *>(slot_words(h, s, h->nkeys)) + k * null_bytes(h->slot_rows);
}

int64_t *
slot_answers(const Header *h, Slot *s)
{
	return reinterpret_cast<int64_t *>(slot_nulls(h, s, h->nkeys));
}

uint32_t *
slot_counts(const Header *h, Slot *s)
{
	return reinterpret_cast<uint32_t *>(slot_answers(h, s) + h->slot_rows);
}

/* Waits on sem for up to ms milliseconds (signals and timeouts are not errors). */
void
wait_ms(sem_t *sem, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += (long) ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	(void) sem_clockwait(sem, CLOCK_MONOTONIC, &ts);
}

} /* namespace */

struct JoinService
{
	void *shm = nullptr;
	const GpuopsJoinBackend *backend = nullptr;
	GpuopsJoinLookup *lookup = nullptr;
	std::atomic<bool> stop{false};
	std::thread thread;
};

namespace {

/* Answers every requested slot once. */
void
serve_requests(JoinService *svc)
{
	Header *h = header(svc->shm);

	for (uint32_t i = 0; i < h->nslots; i++)
	{
		Slot *s = slot_at(svc->shm, i);
		uint32_t want = SLOT_REQUESTED;
		GpuopsJoinKeys keys = {};

		if (!s->state.compare_exchange_strong(want, SLOT_SERVING, std::memory_order_acq_rel))
			continue;
		keys.nkeys = h->nkeys;
		keys.nrows = s->nrows;
		for (int k = 0; k < h->nkeys; k++)
		{
			keys.words[k] = slot_words(h, s, k);
			keys.nulls[k] = (s->null_mask >> k) & 1 ? slot_nulls(h, s, k) : nullptr;
		}
		GpuopsStatus rc = svc->backend->lookup(svc->lookup, &keys, slot_answers(h, s),
											   slot_counts(h, s));

		if (rc == GPUOPS_OK)
		{
			h->requests.fetch_add(1, std::memory_order_relaxed);
			h->rows.fetch_add(s->nrows, std::memory_order_relaxed);
		}
		s->state.store(rc == GPUOPS_OK ? SLOT_DONE : SLOT_FAILED, std::memory_order_release);
		sem_post(&s->done);
	}
}

void
service_main(JoinService *svc) noexcept
{
	Header *h = header(svc->shm);

	while (!svc->stop.load(std::memory_order_acquire))
	{
		wait_ms(&h->wake, 20);
		serve_requests(svc);
	}
}

} /* namespace */
} /* namespace gpuops */

using gpuops::Header;
using gpuops::Slot;

extern "C" size_t
gpuops_join_service_size(uint32_t nslots, int nkeys, uint32_t slot_rows) noexcept
{
	return gpuops::align64(sizeof(Header)) + nslots * gpuops::slot_bytes(nkeys, slot_rows);
}

extern "C" void
gpuops_join_service_init(void *shm, uint32_t nslots, int nkeys, uint32_t slot_rows,
						 int state) noexcept
{
	Header *h = new (shm) Header;

	h->state.store(state);
	h->nslots = nslots;
	h->nkeys = nkeys;
	h->slot_rows = slot_rows;
	h->slot_bytes = gpuops::slot_bytes(nkeys, slot_rows);
	h->ndir = h->checksum = 0;
	h->requests.store(0);
	h->rows.store(0);
	sem_init(&h->wake, 1, 0);
	for (uint32_t i = 0; i < nslots; i++)
	{
		Slot *s = new (gpuops::slot_at(shm, i)) Slot;

		s->state.store(gpuops::SLOT_FREE);
		s->nrows = s->null_mask = 0;
		s->stats = GpuopsJoinWorkerStats{};
		sem_init(&s->done, 1, 0);
	}
}

extern "C" void
gpuops_join_service_reset_slots(void *shm) noexcept
{
	Header *h = gpuops::header(shm);

	for (uint32_t i = 0; i < h->nslots; i++)
	{
		gpuops::slot_at(shm, i)->state.store(gpuops::SLOT_FREE);
		gpuops::slot_at(shm, i)->stats = GpuopsJoinWorkerStats{};
	}
}

/*
 * The stats are plain memory: the worker writes them before it ends, and
 * the leader reads them once every worker has ended (the parallel query's
 * shutdown waits for that).
 */
extern "C" void
gpuops_join_service_report(void *shm, uint32_t slot, const GpuopsJoinWorkerStats *stats) noexcept
{
	if (slot < gpuops::header(shm)->nslots)
	{
		gpuops::slot_at(shm, slot)->stats = *stats;
		gpuops::slot_at(shm, slot)->stats.reported = 1;
	}
}

extern "C" void
gpuops_join_service_worker_stats(const void *shm, uint32_t slot,
								 GpuopsJoinWorkerStats *stats) noexcept
{
	void *m = const_cast<void *>(shm);

	*stats = slot < gpuops::header(shm)->nslots ? gpuops::slot_at(m, slot)->stats
												: GpuopsJoinWorkerStats{};
}

extern "C" int
gpuops_join_service_state(const void *shm) noexcept
{
	return (int) gpuops::header(shm)->state.load(std::memory_order_acquire);
}

extern "C" void
gpuops_join_service_set_state(void *shm, int state) noexcept
{
	gpuops::header(shm)->state.store((uint32_t) state, std::memory_order_release);
}

extern "C" uint32_t
gpuops_join_service_slot_rows(const void *shm) noexcept
{
	return gpuops::header(shm)->slot_rows;
}

extern "C" uint32_t
gpuops_join_service_nslots(const void *shm) noexcept
{
	return gpuops::header(shm)->nslots;
}

extern "C" void
gpuops_join_service_directory(const void *shm, uint64_t *ndir, uint64_t *checksum) noexcept
{
	*ndir = gpuops::header(shm)->ndir;
	*checksum = gpuops::header(shm)->checksum;
}

extern "C" void
gpuops_join_service_counts(const void *shm, uint64_t *requests, uint64_t *rows) noexcept
{
	*requests = gpuops::header(shm)->requests.load();
	*rows = gpuops::header(shm)->rows.load();
}

extern "C" GpuopsStatus
gpuops_join_service_start(void *shm, const GpuopsJoinBackend *backend, GpuopsJoin *join,
						  GpuopsJoinService **out) noexcept
{
	*out = nullptr;
	return gpuops::guarded([&]() {
		Header *h = gpuops::header(shm);
		auto *svc = new gpuops::JoinService;
		GpuopsStatus rc;

		svc->shm = shm;
		svc->backend = backend;
		rc = backend->join_directory(join, &h->ndir, &h->checksum);
		if (rc == GPUOPS_OK)
			rc = backend->lookup_begin(join, h->slot_rows, &svc->lookup);
		if (rc != GPUOPS_OK)
		{
			delete svc;
			return rc;
		}

		/*
		 * PostgreSQL's signal handlers expect the backend's own thread: the
		 * service blocks every signal.
		 */
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		try
		{
			svc->thread = std::thread(gpuops::service_main, svc);
		}
		catch (...)
		{
			pthread_sigmask(SIG_SETMASK, &old, nullptr);
			backend->lookup_end(svc->lookup);
			delete svc;
			throw;
		}
		pthread_sigmask(SIG_SETMASK, &old, nullptr);
		h->state.store(GPUOPS_SERVICE_READY, std::memory_order_release);
		*out = reinterpret_cast<GpuopsJoinService *>(svc);
		return GPUOPS_OK;
	});
}

extern "C" void
gpuops_join_service_stop(GpuopsJoinService *service) noexcept
{
	auto *svc = reinterpret_cast<gpuops::JoinService *>(service);

	if (svc == nullptr)
		return;
	Header *h = gpuops::header(svc->shm);

	h->state.store(GPUOPS_SERVICE_CLOSED, std::memory_order_release);
	svc->stop.store(true, std::memory_order_release);
	sem_post(&h->wake);
	if (svc->thread.joinable())
		svc->thread.join();
	/* requests that came after the last round fail; their workers build alone */
	for (uint32_t i = 0; i < h->nslots; i++)
	{
		Slot *s = gpuops::slot_at(svc->shm, i);
		uint32_t want = gpuops::SLOT_REQUESTED;

		if (s->state.compare_exchange_strong(want, gpuops::SLOT_FAILED))
			sem_post(&s->done);
	}
	svc->backend->lookup_end(svc->lookup);
	delete svc;
}

extern "C" int
gpuops_join_service_submit(void *shm, uint32_t slot, const GpuopsJoinKeys *keys) noexcept
{
	Header *h = gpuops::header(shm);
	Slot *s;

	if (slot >= h->nslots || keys->nkeys != h->nkeys || keys->nrows > h->slot_rows ||
		h->state.load(std::memory_order_acquire) != GPUOPS_SERVICE_READY)
		return GPUOPS_SERVICE_FAILED;
	s = gpuops::slot_at(shm, slot);
	s->nrows = (uint32_t) keys->nrows;
	s->null_mask = 0;
	for (int k = 0; k < h->nkeys; k++)
	{
		memcpy(gpuops::slot_words(h, s, k), keys->words[k], keys->nrows * 8);
		if (keys->nulls[k])
		{
			memcpy(gpuops::slot_nulls(h, s, k), keys->nulls[k], (keys->nrows + 7) / 8);
			s->null_mask |= 1u << k;
		}
	}
	s->state.store(gpuops::SLOT_REQUESTED, std::memory_order_release);
	sem_post(&h->wake);
	return GPUOPS_SERVICE_WAITING;
}

extern "C" int
gpuops_join_service_wait(void *shm, uint32_t slot, int timeout_ms, const int64_t **slots,
						 const uint32_t **counts) noexcept
{
	Header *h = gpuops::header(shm);
	Slot *s = gpuops::slot_at(shm, slot);
	uint32_t st = s->state.load(std::memory_order_acquire);

	if (st == gpuops::SLOT_REQUESTED || st == gpuops::SLOT_SERVING)
	{
		gpuops::wait_ms(&s->done, timeout_ms);
		st = s->state.load(std::memory_order_acquire);
	}
	switch (st)
	{
		case gpuops::SLOT_DONE:
			*slots = gpuops::slot_answers(h, s);
			*counts = gpuops::slot_counts(h, s);
			s->state.store(gpuops::SLOT_FREE, std::memory_order_release);
			return GPUOPS_SERVICE_DONE;
		case gpuops::SLOT_REQUESTED:
			/* a service no longer READY will not begin it: take it back */
			if (h->state.load(std::memory_order_acquire) != GPUOPS_SERVICE_READY &&
				s->state.compare_exchange_strong(st, gpuops::SLOT_FREE))
				return GPUOPS_SERVICE_FAILED;
			return GPUOPS_SERVICE_WAITING;
		case gpuops::SLOT_SERVING:
			return GPUOPS_SERVICE_WAITING;
		default:
			s->state.store(gpuops::SLOT_FREE, std::memory_order_release);
			return GPUOPS_SERVICE_FAILED;
	}
}
