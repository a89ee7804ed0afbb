/*
 * page_service.cu
 *    The page service (gpuops_page_service.h): the service process's CUDA
 *    side (its mapping of shared buffers, the staging areas, the device
 *    page cache, the gathers), the channels' claim and release, and a
 *    backend's request (page_service_ask, for query_cuda.cu).
 */
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <signal.h>
#include <thread>

#include "cuda_runtime.cuh"
#include "page_cache.hpp"
#include "page_gather.cuh"
#include "page_service.cuh"

namespace gpuops {
namespace cuda {
namespace {

/* Mapping shared buffers in pieces: between them the service answers its signals. */
constexpr size_t kMapPiece = 256ull << 20;

/* How long a backend waits for one answer before it gives the service up. */
constexpr double kAnswerTimeoutMs = 30000;

uint64_t
load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* The default device page cache: shared buffers' size, up to this part of the device's memory. */
constexpr size_t kCacheShare = 4;

/* A channel's gather list: its pages' buffer numbers, their ops, their staging pages. */
constexpr size_t kListWords = 3 * (size_t) GPUOPS_PAGE_SERVICE_PAGES;

/* No staging page: a direct request's page gathered only into its cache slot. */
constexpr uint32_t kNoStaging = 0xffffffffu;

/* A channel's answer, remembered until its reads are done: a direct one's round. */
struct Answered
{
	uint64_t seq = 0;
	uint64_t round = 0; /* UINT64_MAX: not direct (nothing read after the answer) */
};

/* Answers a channel may have unread: a backend reads at most two at once (two areas). */
constexpr uint64_t kAnswers = 4;

/* The service process's state (one service a process). */
struct Service
{
	uint8_t *staging = nullptr; /* nchannels x 2 areas x GPUOPS_PAGE_SERVICE_PAGES x page_size */
	uint32_t *index = nullptr;	/* per channel: kListWords (a gather list) */
	uint32_t *host_index = nullptr; /* the same, pinned on the host: filled, then copied up */
	Answered answered[GPUOPS_PAGE_SERVICE_MAX_CHANNELS][kAnswers]; /* by seq % kAnswers */
	uint8_t *cache = nullptr; /* the device page cache: cache_map.slots() x page_size */
	PageCache cache_map;
	cudaStream_t stream = nullptr;
	cudaEvent_t done = nullptr;
	char *map_from = nullptr; /* the 4 KB-aligned range to map */
	size_t map_bytes = 0;
	size_t mapped = 0; /* bytes of it mapped so far */
	std::chrono::steady_clock::time_point map_start;
	const uint8_t *dbase = nullptr; /* shared buffers' first page on the device */
} service;

/* A backend's opened staging areas (and cache): the service's generation, in this context. */
struct Opened
{
	uint64_t context = 0; /* Runtime::inits() when opened: 0 none */
	uint32_t generation = 0;
	uint8_t *staging = nullptr;
	uint8_t *cache = nullptr;
	bool cache_tried = false;
} opened;

/* One staging area's bytes; a channel has two, side by side. */
size_t
area_bytes(const GpuopsPageService *svc)
{
	return (size_t) GPUOPS_PAGE_SERVICE_PAGES * svc->page_size;
}

size_t
area_offset(const GpuopsPageService *svc, uint32_t channel, uint32_t area)
{
	return (2 * (size_t) channel + area) * area_bytes(svc);
}

} /* namespace */

/*
 * The staging areas of link's service, opened through IPC once per context
 * and service (0.5 ms); the previous service's handle is closed first.
 */
static uint8_t *
open_staging(Runtime &rt, const GpuopsPageLink &link)
{
	if (opened.staging != nullptr && opened.context == rt.inits() &&
		opened.generation == link.generation)
		return opened.staging;
	if (opened.context == rt.inits())
	{
		for (uint8_t *p : {opened.staging, opened.cache})
			if (p != nullptr)
				(void) cudaIpcCloseMemHandle(p);
	}
	(void) cudaGetLastError();
	opened.staging = opened.cache = nullptr;
	opened.cache_tried = false;

	cudaIpcMemHandle_t h;
	void *p = nullptr;

	static_assert(sizeof(h) == GPUOPS_PAGE_SERVICE_HANDLE_BYTES, "IPC handle size");
	memcpy(&h, link.service->handle, sizeof(h));
	GPUOPS_CUDA_TRY(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
	opened.staging = static_cast<uint8_t *>(p);
	opened.context = rt.inits();
	opened.generation = link.generation;
	return opened.staging;
}

/* Whether link's service still serves, as the one that gave the channel. */
static bool
serving(const GpuopsPageLink &link)
{
	return __atomic_load_n(&link.service->state, __ATOMIC_ACQUIRE) == GPUOPS_PAGE_SERVICE_SERVING &&
		__atomic_load_n(&link.service->generation, __ATOMIC_ACQUIRE) == link.generation;
}

/*
 * Waits until the channel's done_seq reaches seq.  The usual answer comes
 * in about a millisecond: the backend yields for 2 ms (a sleep takes 50 us
 * or more, timer slack), then sleeps; cancellable throughout.
 */
static void
wait_answer(const GpuopsPageLink &link, uint64_t seq)
{
	const GpuopsPageChannel &ch = link.service->channels[link.channel];
	auto t0 = std::chrono::steady_clock::now();

	for (int spins = 0; load(&ch.done_seq) < seq; spins++)
	{
		double ms = ms_since(t0);

		check_interrupt();
		if (!serving(link))
			fail(GPUOPS_ERR_DEVICE, "the page service stopped during a request");
		if (ms > kAnswerTimeoutMs)
			fail(GPUOPS_ERR_DEVICE, "the page service did not answer in %.0f s",
				 kAnswerTimeoutMs / 1000);
		if (ms > 2.0)
			std::this_thread::sleep_for(std::chrono::microseconds(20));
		else if (spins >= 64)
			std::this_thread::yield();
	}
	/* a service that started since answers nothing of the old one's */
	if (!serving(link))
		fail(GPUOPS_ERR_DEVICE, "the page service stopped during a request");
}

const uint8_t *
page_service_area(Runtime &rt, const GpuopsPageLink &link, uint32_t area)
{
	return open_staging(rt, link) + area_offset(link.service, link.channel, area);
}

const uint8_t *
page_service_cache(Runtime &rt, const GpuopsPageLink &link)
{
	(void) open_staging(rt, link);
	if (!opened.cache_tried && link.service->cache_bytes > 0)
	{
		cudaIpcMemHandle_t h;
		void *p = nullptr;

		/* (a mapping the device refuses: the pages are copied, as without a cache) */
		memcpy(&h, link.service->cache_handle, sizeof(h));
		if (cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess)
			opened.cache = static_cast<uint8_t *>(p);
		(void) cudaGetLastError();
	}
	opened.cache_tried = true;
	return opened.cache;
}

const uint32_t *
page_service_loc(const GpuopsPageLink &link)
{
	return link.service->channels[link.channel].loc;
}

void
page_service_read(const GpuopsPageLink &link, uint64_t seq, bool check)
{
	uint64_t *read = &link.service->channels[link.channel].read_seq;
	uint64_t was = load(read);

	while (was < seq &&
		   !__atomic_compare_exchange_n(read, &was, seq, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	/*
	 * The reads are done: if the service was still serving, the memory they
	 * read was its (it leaves serving before its memory goes)
	 */
	if (check && !serving(link))
		fail(GPUOPS_ERR_DEVICE, "the page service stopped during a request");
}

uint64_t
page_service_ask(Runtime &rt, const GpuopsPageLink &link, const GpuopsQueryPages &P, uint32_t off,
				 uint32_t n, uint32_t area, bool direct)
{
	GpuopsPageService *svc = link.service;
	GpuopsPageChannel &ch = svc->channels[link.channel];
	uint64_t seq = ch.req_seq + 1; /* only the owner writes req_seq */

	if (P.page_size != svc->page_size || n > GPUOPS_PAGE_SERVICE_PAGES || area > 1 ||
		(uint64_t) off + n > P.npages || P.base != svc->base)
		fail(GPUOPS_ERR_INTERNAL,
			 "page service: %u pages of %u bytes for area %u (the service's: %u)", n, P.page_size,
			 area, svc->page_size);
	if (!serving(link))
		fail(GPUOPS_ERR_DEVICE, "the page service stopped (restarted or shut down)");
	(void) open_staging(rt, link);
	/* one request in flight a channel: the service reads index meanwhile */
	if (load(&ch.done_seq) != ch.req_seq)
		wait_answer(link, ch.req_seq);
	memcpy(ch.index, P.index + off, (size_t) n * 4);
	if (P.lsn != nullptr && P.block != nullptr)
	{
		memcpy(ch.rel, P.rel, sizeof(ch.rel));
		memcpy(ch.block, P.block + off, (size_t) n * 4);
		memcpy(ch.lsn, P.lsn + off, (size_t) n * 8);
	}
	else
		memset(ch.lsn, 0, (size_t) n * 8); /* none cached */
	ch.npages = n;
	ch.area = area;
	ch.direct = direct ? 1 : 0;
	__atomic_store_n(&ch.req_seq, seq, __ATOMIC_RELEASE);
	link.wake();
	return seq;
}

uint32_t
page_service_await(const GpuopsPageLink &link, uint64_t seq, PageServiceTimes *times)
{
	const GpuopsPageChannel &ch = link.service->channels[link.channel];
	auto t0 = std::chrono::steady_clock::now();

	wait_answer(link, seq);
	if (__atomic_load_n(&ch.status, __ATOMIC_ACQUIRE) != GPUOPS_OK)
		fail(GPUOPS_ERR_DEVICE, "the page service failed to gather %u pages", ch.npages);
	times->requests++;
	times->pages += ch.npages;
	times->cached += ch.cached;
	times->wait_ms += ms_since(t0);
	return ch.staged;
}

uint64_t
page_service_gather(Runtime &rt, const GpuopsPageLink &link, const GpuopsQueryPages &P,
					uint8_t *dst, cudaStream_t cs, cudaEvent_t copied, PageServiceTimes *times)
{
	const uint32_t page_size = P.page_size;
	uint64_t seq = 0;

	for (uint32_t off = 0; off < P.npages;)
	{
		uint32_t n = std::min<uint32_t>(P.npages - off, GPUOPS_PAGE_SERVICE_PAGES);

		seq = page_service_ask(rt, link, P, off, n, 0, false);
		page_service_await(link, seq, times);
		/*
		 * The service waited for its gather before it answered: the staging
		 * area holds the pages.  It is free again once this copy is done.
		 */
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(dst + (uint64_t) off * page_size,
										page_service_area(rt, link, 0), (uint64_t) n * page_size,
										cudaMemcpyDeviceToDevice, cs));
		GPUOPS_CUDA_TRY(cudaEventRecord(copied, cs));
		sync_event(copied);
		page_service_read(link, seq);
		off += n;
	}
	return seq;
}

} /* namespace cuda */
} /* namespace gpuops */

using namespace gpuops::cuda;
using gpuops::ms_since;

/*
 * The device page cache, as large as asked (the default: shared buffers,
 * up to a quarter of the device's memory), or smaller by halves until
 * the device gives it; none under 64 MB.
 */
static void
open_cache(GpuopsPageService *svc)
{
	const uint64_t nbuffers = svc->bytes / svc->page_size;
	uint64_t want = svc->cache_want < 0 ? nbuffers * svc->page_size : (uint64_t) svc->cache_want;
	size_t free_bytes = 0, total_bytes = 0;

	svc->cache_bytes = 0;
	if (svc->cache_want < 0 && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
		want = std::min<uint64_t>(want, total_bytes / kCacheShare);
	(void) cudaGetLastError();
	want = std::min<uint64_t>(want, nbuffers * svc->page_size);
	for (uint64_t slots = want / svc->page_size; slots * svc->page_size >= (64ull << 20);
		 slots /= 2)
	{
		cudaIpcMemHandle_t h;

		if (cudaMalloc(&service.cache, slots * svc->page_size) == cudaSuccess)
		{
			/* backends read it through IPC (direct requests) */
			if (cudaIpcGetMemHandle(&h, service.cache) == cudaSuccess)
			{
				memcpy(svc->cache_handle, &h, sizeof(h));
				service.cache_map.init((uint32_t) std::min<uint64_t>(slots, kPageHit - 1),
									   nbuffers);
				svc->cache_bytes = (uint64_t) service.cache_map.slots() * svc->page_size;
				return;
			}
			(void) cudaFree(service.cache);
		}
		(void) cudaGetLastError();
		service.cache = nullptr;
	}
}

extern "C" int
gpuops_page_service_open(GpuopsPageService *svc) noexcept
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
	{
		(void) cudaGetLastError();
		return 0;
	}
	if (svc->nchannels == 0 || svc->page_size == 0 || svc->page_size % 16 != 0 ||
		reinterpret_cast<uintptr_t>(svc->base) % 16 != 0)
		return -1;
	try
	{
		cudaIpcMemHandle_t h;

		GPUOPS_CUDA_TRY(cudaSetDevice(0));
		GPUOPS_CUDA_TRY(cudaFree(nullptr));
		GPUOPS_CUDA_TRY(cudaMalloc(&service.staging, area_offset(svc, svc->nchannels, 0)));
		GPUOPS_CUDA_TRY(
			cudaMalloc(&service.index, (size_t) svc->nchannels * kListWords * sizeof(uint32_t)));
		GPUOPS_CUDA_TRY(cudaMallocHost(&service.host_index,
									   (size_t) svc->nchannels * kListWords * sizeof(uint32_t)));
		GPUOPS_CUDA_TRY(cudaStreamCreateWithFlags(&service.stream, cudaStreamNonBlocking));
		GPUOPS_CUDA_TRY(cudaEventCreateWithFlags(&service.done, cudaEventDisableTiming));
		GPUOPS_CUDA_TRY(cudaIpcGetMemHandle(&h, service.staging));
		memcpy(svc->handle, &h, sizeof(h));
		open_cache(svc);
	}
	catch (...)
	{
		gpuops_page_service_close();
		return -1;
	}
	/* the whole 4 KB pages around shared buffers, as the backends' own mapping does */
	uintptr_t from = reinterpret_cast<uintptr_t>(svc->base) & ~(uintptr_t) 4095;
	uintptr_t to = (reinterpret_cast<uintptr_t>(svc->base) + svc->bytes + 4095) & ~(uintptr_t) 4095;

	service.map_from = reinterpret_cast<char *>(from);
	service.map_bytes = to - from;
	service.mapped = 0;
	service.map_start = std::chrono::steady_clock::now();
	return 1;
}

extern "C" int
gpuops_page_service_map_step(GpuopsPageService *svc) noexcept
{
	if (service.map_from == nullptr)
		return -1;
	if (service.mapped < service.map_bytes)
	{
		size_t n = std::min(kMapPiece, service.map_bytes - service.mapped);

		if (cudaHostRegister(service.map_from + service.mapped, n, cudaHostRegisterMapped) !=
			cudaSuccess)
		{
			(void) cudaGetLastError();
			return -1;
		}
		service.mapped += n;
		if (service.mapped < service.map_bytes)
			return 0;
	}
	void *dev = nullptr;

	/* the pieces are one range on the device too (unified addressing) */
	if (cudaHostGetDevicePointer(&dev, const_cast<void *>(svc->base), 0) != cudaSuccess ||
		reinterpret_cast<uintptr_t>(dev) % 16 != 0)
	{
		(void) cudaGetLastError();
		return -1;
	}
	service.dbase = static_cast<const uint8_t *>(dev);
	svc->map_ms = ms_since(service.map_start);
	return 1;
}

/*
 * The first round whose direct answers some channel has not read yet
 * (UINT64_MAX: none): the cache's slots handed out from that round on keep
 * their pages.  A channel with more answers unread than remembered (never,
 * as backends read) holds every slot handed out.
 */
static uint64_t
first_unread(const GpuopsPageService *svc)
{
	uint64_t first = UINT64_MAX;

	for (uint32_t c = 0; c < svc->nchannels; c++)
	{
		const GpuopsPageChannel &ch = svc->channels[c];
		uint64_t done = ch.done_seq; /* (the service's own) */
		uint64_t read = load(&ch.read_seq);

		if (read >= done)
			continue;
		if (done - read > kAnswers)
			return 0;
		for (uint64_t seq = read + 1; seq <= done; seq++)
		{
			const Answered &a = service.answered[c][seq % kAnswers];

			if (a.seq == seq)
				first = std::min(first, a.round);
		}
	}
	return first;
}

/* Whether process pid is gone (its CUDA context, and every read of it, with it). */
static bool
gone(uint32_t pid)
{
	return pid != 0 && kill((pid_t) pid, 0) != 0 && errno == ESRCH;
}

/*
 * A channel's request into its gather list (host, pinned): its pages'
 * buffer numbers, their cache ops and staging pages.  A plain request
 * gathers every page into the staging area (from the cache where it
 * holds it); a direct one only the pages the cache does not hold, into
 * their slots, or into the staging area where no slot takes them, and says
 * in loc where each page is.  Returns the list's length.
 */
static uint32_t
plan_gather(GpuopsPageChannel &ch, bool direct, uint32_t *list, uint32_t *cached)
{
	const uint32_t n = ch.npages;
	uint32_t *index = list, *ops = list + GPUOPS_PAGE_SERVICE_PAGES,
			 *out = list + 2 * GPUOPS_PAGE_SERVICE_PAGES;
	uint32_t m = 0;

	*cached = 0;
	ch.staged = direct ? 0 : n;
	for (uint32_t p = 0; p < n; p++)
	{
		uint32_t op = service.cache != nullptr
			? service.cache_map.lookup(ch.index[p], ch.rel, ch.block[p], ch.lsn[p], direct)
			: kPageNoCache;
		bool hit = op != kPageNoCache && (op & kPageHit) != 0;

		*cached += hit;
		if (!direct)
		{
			index[m] = ch.index[p];
			ops[m] = op;
			out[m++] = p;
			continue;
		}
		ch.loc[p] = op == kPageNoCache ? GPUOPS_PAGE_LOC_STAGING | p : op & ~kPageHit;
		ch.staged += op == kPageNoCache;
		if (hit)
			continue;
		index[m] = ch.index[p];
		ops[m] = op;
		out[m++] = op == kPageNoCache ? p : kNoStaging;
	}
	return m;
}

extern "C" int
gpuops_page_service_serve(GpuopsPageService *svc) noexcept
{
	const uint64_t nbuffers = svc->bytes / svc->page_size;
	uint64_t answer[GPUOPS_PAGE_SERVICE_MAX_CHANNELS];
	int32_t status[GPUOPS_PAGE_SERVICE_MAX_CHANNELS];
	uint32_t cached[GPUOPS_PAGE_SERVICE_MAX_CHANNELS];
	uint64_t pages = 0, hits = 0;
	int pending = 0, gathers = 0;

	if (service.dbase == nullptr || svc->nchannels > GPUOPS_PAGE_SERVICE_MAX_CHANNELS)
		return -1;
	try
	{
		/* every pending request's gather queued, then one wait for them all */
		service.cache_map.next_round();
		service.cache_map.set_first_unread(first_unread(svc));
		for (uint32_t c = 0; c < svc->nchannels; c++)
		{
			GpuopsPageChannel &ch = svc->channels[c];
			uint64_t req = load(&ch.req_seq);
			uint32_t n = ch.npages;
			bool valid = n <= GPUOPS_PAGE_SERVICE_PAGES;
			bool direct = ch.direct != 0 && service.cache != nullptr;

			answer[c] = 0;
			if (req == ch.done_seq)
				continue;
			/* a page outside shared buffers would fault the service's context */
			for (uint32_t p = 0; valid && p < n; p++)
				valid = ch.index[p] < nbuffers;
			answer[c] = req;
			status[c] = valid ? GPUOPS_OK : GPUOPS_ERR_INTERNAL;
			cached[c] = 0;
			pending++;
			service.answered[c][req % kAnswers] = Answered{
				req, direct && valid ? service.cache_map.round() : UINT64_MAX};
			if (!valid || n == 0)
				continue;

			const size_t at = (size_t) c * kListWords;
			uint32_t *list = service.host_index + at;
			uint32_t m = plan_gather(ch, direct, list, &cached[c]);

			pages += n;
			hits += cached[c];
			if (m == 0)
				continue; /* every page where it lies: nothing for the device */
			/* the list's three parts, copied up together */
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(service.index + at, list, kListWords * 4,
											cudaMemcpyHostToDevice, service.stream));
			page_gather_kernel<<<std::min(m, 4096u), kGatherThreads, 0, service.stream>>>(
				service.dbase, service.index + at, m, svc->page_size,
				service.staging + area_offset(svc, c, ch.area & 1),
				service.cache != nullptr ? service.index + at + GPUOPS_PAGE_SERVICE_PAGES : nullptr,
				service.cache, service.index + at + 2 * GPUOPS_PAGE_SERVICE_PAGES);
			GPUOPS_CUDA_CHECK_LAUNCH("page service gather");
			gathers++;
		}
		if (gathers > 0)
		{
			GPUOPS_CUDA_TRY(cudaEventRecord(service.done, service.stream));
			GPUOPS_CUDA_TRY(cudaEventSynchronize(service.done));
		}
	}
	catch (...)
	{
		return -1;
	}
	for (uint32_t c = 0; c < svc->nchannels; c++)
	{
		GpuopsPageChannel &ch = svc->channels[c];

		if (answer[c] != 0)
		{
			__atomic_store_n(&ch.status, status[c], __ATOMIC_RELAXED);
			__atomic_store_n(&ch.cached, cached[c], __ATOMIC_RELAXED);
			__atomic_store_n(&ch.done_seq, answer[c], __ATOMIC_RELEASE);
		}
		/*
		 * An owner that left mid-request, or with answers it may still read:
		 * its channel is free once answered and read, or once its process is
		 * gone
		 */
		if (__atomic_load_n(&ch.abandoned, __ATOMIC_ACQUIRE) &&
			load(&ch.req_seq) == load(&ch.done_seq))
		{
			uint64_t done = load(&ch.done_seq);

			if (load(&ch.read_seq) < done && !gone(__atomic_load_n(&ch.owner, __ATOMIC_ACQUIRE)))
				continue;
			__atomic_store_n(&ch.read_seq, std::max(load(&ch.read_seq), done), __ATOMIC_RELEASE);
			__atomic_store_n(&ch.abandoned, 0u, __ATOMIC_RELAXED);
			__atomic_store_n(&ch.owner, 0u, __ATOMIC_RELEASE);
		}
	}
	__atomic_add_fetch(&svc->requests, (uint64_t) pending, __ATOMIC_RELAXED);
	__atomic_add_fetch(&svc->pages, pages, __ATOMIC_RELAXED);
	__atomic_add_fetch(&svc->cached, hits, __ATOMIC_RELAXED);
	return pending;
}

extern "C" void
gpuops_page_service_close(void) noexcept
{
	for (size_t off = 0; off < service.mapped; off += kMapPiece)
		(void) cudaHostUnregister(service.map_from + off);
	if (service.done)
		(void) cudaEventDestroy(service.done);
	if (service.stream)
		(void) cudaStreamDestroy(service.stream);
	if (service.index)
		(void) cudaFree(service.index);
	if (service.host_index)
		(void) cudaFreeHost(service.host_index);
	if (service.cache)
		(void) cudaFree(service.cache);
	if (service.staging)
		(void) cudaFree(service.staging);
	(void) cudaGetLastError();
	service = Service();
}

extern "C" int
gpuops_page_service_claim(GpuopsPageService *svc, uint32_t pid, GpuopsPageLink *link) noexcept
{
	if (svc == nullptr || pid == 0 ||
		__atomic_load_n(&svc->state, __ATOMIC_ACQUIRE) != GPUOPS_PAGE_SERVICE_SERVING)
		return 0;
	for (uint32_t c = 0; c < svc->nchannels; c++)
	{
		uint32_t free_owner = 0;

		if (__atomic_compare_exchange_n(&svc->channels[c].owner, &free_owner, pid, false,
										__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		{
			link->service = svc;
			link->channel = c;
			link->generation = __atomic_load_n(&svc->generation, __ATOMIC_ACQUIRE);
			return 1;
		}
	}
	return 0;
}

extern "C" void
gpuops_page_service_release(const GpuopsPageLink *link) noexcept
{
	GpuopsPageChannel &ch = link->service->channels[link->channel];

	if (load(&ch.req_seq) != load(&ch.done_seq) || load(&ch.read_seq) < load(&ch.done_seq))
		__atomic_store_n(&ch.abandoned, 1u, __ATOMIC_RELEASE); /* the service frees it */
	else
		__atomic_store_n(&ch.owner, 0u, __ATOMIC_RELEASE);
}
