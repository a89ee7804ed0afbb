// What a server-wide page gather would cost (doc/gpuquery.md, "Next"): one
// process (the "service") maps a shared memory segment for the GPU once,
// like PostgreSQL's shared buffers, and gathers pages that another process
// (a "backend", which never maps anything) lists, into device buffers that
// the backend opens through CUDA IPC and reads with its own kernels.
// Against it, the backend mapping the segment itself (what GpuQuery does
// per session now).  Build and run on the GPU machine:
//   nvcc -O2 -std=c++17 -o /tmp/gather_probe test/bench/gather_probe.cu &&
//   /tmp/gather_probe SEGMENT_GB GATHER_GB [BATCH_PAGES]
#include <cuda_runtime.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "probe_common.cuh"

static const size_t kPage = 8192;
static const int kBufs = 2;

/* The segment with the index arrays after it, in whole 4 KB pages. */
static size_t
map_bytes(size_t seg_bytes, uint32_t batch)
{
	return (seg_bytes + (size_t) kBufs * batch * 4 + 4095) & ~(size_t) 4095;
}

/* The control block, in its own shared mapping. */
struct Ctl
{
	cudaIpcMemHandle_t mem[kBufs];
	cudaIpcEventHandle_t ev[kBufs];
	std::atomic<int> ready;		  /* the service's handles are there */
	std::atomic<int> req[kBufs];  /* 1: the backend asks for buffer b's pages */
	std::atomic<int> done[kBufs]; /* 1: the service recorded ev[b] after the gather */
	std::atomic<int> stop;
	uint32_t npages[kBufs];
	double map_ms;
};

/* What the backend does with the pages: read every word once (a stand-in for the deformer). */
__global__ void
checksum(const uint64_t *w, uint64_t n, unsigned long long *sum)
{
	uint64_t s = 0;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		s += w[i];
	atomicAdd(sum, (unsigned long long) s);
}

static void
spin(const std::atomic<int> &a, int want, const std::atomic<int> *stop = nullptr)
{
	while (a.load(std::memory_order_acquire) != want)
	{
		if (stop != nullptr && stop->load())
			return;
		sched_yield();
	}
}

static void
service(Ctl *ctl, uint8_t *seg, size_t seg_bytes, uint32_t *index, uint32_t batch)
{
	uint8_t *dbase, *buf[kBufs];
	uint32_t *dindex;
	cudaEvent_t ev[kBufs];
	cudaStream_t s;
	double t = now_ms();

	CK(cudaSetDevice(0));
	CK(cudaHostRegister(seg, map_bytes(seg_bytes, batch), cudaHostRegisterMapped));
	CK(cudaHostGetDevicePointer((void **) &dbase, seg, 0));
	CK(cudaHostGetDevicePointer((void **) &dindex, index, 0));
	ctl->map_ms = now_ms() - t;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int b = 0; b < kBufs; b++)
	{
		CK(cudaMalloc(&buf[b], (size_t) batch * kPage));
		CK(cudaIpcGetMemHandle(&ctl->mem[b], buf[b]));
		CK(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming | cudaEventInterprocess));
		CK(cudaIpcGetEventHandle(&ctl->ev[b], ev[b]));
	}
	ctl->ready.store(1, std::memory_order_release);
	for (int b = 0;; b = (b + 1) % kBufs)
	{
		spin(ctl->req[b], 1, &ctl->stop);
		if (ctl->stop.load())
			break;
		ctl->req[b].store(0);
		page_gather_kernel<<<1024, kGatherThreads, 0, s>>>(dbase, dindex + (size_t) b * batch,
														   ctl->npages[b], kPage, buf[b]);
		CK(cudaEventRecord(ev[b], s));
		/* the record must precede the backend's wait: only then say done */
		CK(cudaEventSynchronize(ev[b]));
		ctl->done[b].store(1, std::memory_order_release);
	}
	CK(cudaHostUnregister(seg));
}

int
main(int argc, char **argv)
{
	size_t seg_gb = argc > 1 ? atol(argv[1]) : 16, gather_gb = argc > 2 ? atol(argv[2]) : 9;
	uint32_t batch = argc > 3 ? atoi(argv[3]) : 8192;
	size_t seg_bytes = seg_gb << 30, npages_seg = seg_bytes / kPage;
	uint64_t total_pages = (gather_gb << 30) / kPage;
	/* the segment and the index arrays: shared like PostgreSQL's main segment, touched before fork */
	uint8_t *seg = (uint8_t *) mmap(nullptr, map_bytes(seg_bytes, batch), PROT_READ | PROT_WRITE,
									MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint32_t *index = (uint32_t *) (seg + seg_bytes);
	Ctl *ctl = (Ctl *) mmap(nullptr, sizeof(Ctl), PROT_READ | PROT_WRITE,
							MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	double t = now_ms();

	if (seg == MAP_FAILED || ctl == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < seg_bytes; i += 4096)
		seg[i] = (uint8_t) (i >> 12);
	memset((void *) ctl, 0, sizeof(Ctl));
	printf("segment %zu GB touched in %.0f ms; gathering %.1f GB in batches of %u pages\n", seg_gb,
		   now_ms() - t, total_pages * kPage / 1e9, batch);
	fflush(stdout);

	pid_t svc = fork();
	if (svc == 0)
	{
		service(ctl, seg, seg_bytes, index, batch);
		_exit(0);
	}
	pid_t be = fork();
	if (be == 0)
	{
		std::mt19937_64 rng(1);
		uint8_t *buf[kBufs];
		cudaEvent_t ev[kBufs], mine[kBufs];
		cudaStream_t s;
		unsigned long long *sum;
		double a = now_ms(), b0, c, d;

		CK(cudaSetDevice(0));
		CK(cudaFree(nullptr));
		CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		CK(cudaMalloc(&sum, 8));
		b0 = now_ms();
		spin(ctl->ready, 1);
		c = now_ms();
		for (int b = 0; b < kBufs; b++)
		{
			CK(cudaIpcOpenMemHandle((void **) &buf[b], ctl->mem[b],
									cudaIpcMemLazyEnablePeerAccess));
			CK(cudaIpcOpenEventHandle(&ev[b], ctl->ev[b]));
			CK(cudaEventCreateWithFlags(&mine[b], cudaEventDisableTiming));
		}
		d = now_ms();
		printf(
			"backend: context %.0f ms; service mapped the segment in %.0f ms (ready %.0f ms after "
			"the backend's context); IPC open %.2f ms\n",
			b0 - a, ctl->map_ms, c - b0, d - c);
		fflush(stdout);
		/* two rounds: the first warms the pages' translations */
		for (int round = 0; round < 2; round++)
		{
			uint64_t left = total_pages;
			int inflight[kBufs] = {};
			double t0 = now_ms(), wait_ms = 0;
			int nreq = 0;

			for (int b = 0; left > 0 || inflight[0] || inflight[1]; b = (b + 1) % kBufs)
			{
				if (inflight[b])
				{
					double w = now_ms();

					spin(ctl->done[b], 1);
					ctl->done[b].store(0);
					wait_ms += now_ms() - w;
					CK(cudaStreamWaitEvent(s, ev[b], 0));
					checksum<<<1024, 256, 0, s>>>((const uint64_t *) buf[b],
												  (uint64_t) ctl->npages[b] * kPage / 8, sum);
					CK(cudaEventRecord(mine[b], s));
					CK(cudaEventSynchronize(mine[b])); /* buffer b free again */
					inflight[b] = 0;
				}
				if (left > 0)
				{
					uint32_t n = (uint32_t) (left < batch ? left : batch);

					for (uint32_t i = 0; i < n; i++)
						index[(size_t) b * batch + i] = (uint32_t) (rng() % npages_seg);
					ctl->npages[b] = n;
					ctl->req[b].store(1, std::memory_order_release);
					inflight[b] = 1;
					left -= n;
					nreq++;
				}
			}
			double ms = now_ms() - t0;
			printf("backend round %d: %d requests, %.1f GB in %.0f ms = %.1f GB/s (waiting for the "
				   "service %.0f ms)\n",
				   round, nreq, total_pages * kPage / 1e9, ms, total_pages * kPage / 1e6 / ms,
				   wait_ms);
			fflush(stdout);
		}
		ctl->stop.store(1);
		_exit(0);
	}
	int st;
	waitpid(be, &st, 0);
	ctl->stop.store(1);
	waitpid(svc, &st, 0);

	/* against: one process mapping the segment itself and gathering its own pages */
	pid_t self = fork();
	if (self == 0)
	{
		uint8_t *dbase, *out;
		uint32_t *dindex;
		std::mt19937_64 rng(1);
		double a = now_ms(), b0;

		CK(cudaSetDevice(0));
		CK(cudaFree(nullptr));
		b0 = now_ms();
		CK(cudaHostRegister(seg, map_bytes(seg_bytes, batch), cudaHostRegisterMapped));
		CK(cudaHostGetDevicePointer((void **) &dbase, seg, 0));
		CK(cudaHostGetDevicePointer((void **) &dindex, index, 0));
		printf("self: context %.0f ms, mapping %.0f ms\n", b0 - a, now_ms() - b0);
		CK(cudaMalloc(&out, (size_t) batch * kPage));
		for (int round = 0; round < 2; round++)
		{
			double t0 = now_ms();

			for (uint64_t left = total_pages; left > 0;)
			{
				uint32_t n = (uint32_t) (left < batch ? left : batch);

				for (uint32_t i = 0; i < n; i++)
					index[i] = (uint32_t) (rng() % npages_seg);
				page_gather_kernel<<<1024, kGatherThreads>>>(dbase, dindex, n, kPage, out);
				CK(cudaDeviceSynchronize());
				left -= n;
			}
			double ms = now_ms() - t0;
			printf("self round %d: %.1f GB in %.0f ms = %.1f GB/s\n", round,
				   total_pages * kPage / 1e9, ms, total_pages * kPage / 1e6 / ms);
			fflush(stdout);
		}
		_exit(0);
	}
	waitpid(self, &st, 0);
	return 0;
}
