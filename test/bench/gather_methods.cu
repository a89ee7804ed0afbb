// How fast the page service can gather pages of mapped host memory into
// device memory, by method (cuda/query/page_gather.cuh is the first):
//   kernel    cuda/query/page_gather.cuh (a block a page, one 16-byte load
//             per thread at a time)
//   kernel4   the same, four loads in flight per thread
//   runs      one cudaMemcpyAsync per run of consecutive buffer numbers
//             (the copy engines, as a plain host-to-device copy)
// over lists of buffer numbers that are in order (a table loaded into
// fresh shared buffers) or shuffled (buffers reused at random), in
// requests of BATCH_PAGES pages.  Build and run on the GPU machine:
//   nvcc -O2 -std=c++17 -o /tmp/gather_methods test/bench/gather_methods.cu &&
//   /tmp/gather_methods SEGMENT_GB GATHER_GB [BATCH_PAGES]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "probe_common.cuh"

static const size_t kPage = 8192;

/* 128 threads a page, four 16-byte loads each issued before any store */
__global__ void
gather4(const uint8_t *base, const uint32_t *index, uint32_t n, uint8_t *out)
{
	for (uint32_t p = blockIdx.x; p < n; p += gridDim.x)
	{
		const uint4 *src = reinterpret_cast<const uint4 *>(base + (uint64_t) index[p] * kPage);
		uint4 *dst = reinterpret_cast<uint4 *>(out + (uint64_t) p * kPage);
		uint4 v[4];

#pragma unroll
		for (int k = 0; k < 4; k++)
			v[k] = src[threadIdx.x + k * 128];
#pragma unroll
		for (int k = 0; k < 4; k++)
			dst[threadIdx.x + k * 128] = v[k];
	}
}

int
main(int argc, char **argv)
{
	double seg_gb = argc > 1 ? atof(argv[1]) : 8;
	double gather_gb = argc > 2 ? atof(argv[2]) : 8;
	uint32_t batch = argc > 3 ? (uint32_t) atoi(argv[3]) : 4096;
	size_t seg_bytes = (size_t) (seg_gb * (1ull << 30)) / kPage * kPage;
	uint32_t nbuf = (uint32_t) (seg_bytes / kPage);
	uint8_t *host = nullptr, *dhost = nullptr, *out = nullptr;
	uint32_t *dindex = nullptr;
	cudaStream_t s;
	double t;

	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMallocHost(&host, seg_bytes)); /* pinned and mapped, as registered shared buffers */
	for (size_t i = 0; i < seg_bytes; i += 4096)
		host[i] = (uint8_t) i;
	CK(cudaHostGetDevicePointer((void **) &dhost, host, 0));
	CK(cudaMalloc(&out, (size_t) batch * kPage));
	CK(cudaMalloc(&dindex, (size_t) batch * 4));

	uint64_t pages = (uint64_t) (gather_gb * (1ull << 30)) / kPage;
	std::vector<uint32_t> order(nbuf);
	std::iota(order.begin(), order.end(), 0u);
	for (int shuffled = 0; shuffled < 2; shuffled++)
	{
		if (shuffled)
			std::shuffle(order.begin(), order.end(), std::mt19937(42));
		for (int method = 0; method < 3; method++)
		{
			const char *name[] = {"kernel", "kernel4", "runs"};
			uint64_t runs = 0;

			CK(cudaStreamSynchronize(s));
			t = now_ms();
			for (uint64_t done = 0; done < pages;)
			{
				uint32_t n = (uint32_t) std::min<uint64_t>(batch, pages - done);
				const uint32_t *idx = &order[done % (nbuf - batch)];

				if (method < 2)
				{
					CK(cudaMemcpyAsync(dindex, idx, (size_t) n * 4, cudaMemcpyHostToDevice, s));
					if (method == 0)
						page_gather_kernel<<<std::min(n, 4096u), kGatherThreads, 0, s>>>(
							dhost, dindex, n, kPage, out);
					else
						gather4<<<std::min(n, 4096u), 128, 0, s>>>(dhost, dindex, n, out);
				}
				else
					for (uint32_t p = 0; p < n;)
					{
						uint32_t q = p + 1;

						while (q < n && idx[q] == idx[q - 1] + 1)
							q++;
						CK(cudaMemcpyAsync(out + (size_t) p * kPage, host + (size_t) idx[p] * kPage,
										   (size_t) (q - p) * kPage, cudaMemcpyHostToDevice, s));
						runs++;
						p = q;
					}
				/* a request is answered once its gather is done */
				CK(cudaStreamSynchronize(s));
				done += n;
			}
			t = now_ms() - t;
			printf("%-9s %-8s %6.2f GB in %8.1f ms: %6.1f GB/s (%llu copies)\n", name[method],
				   shuffled ? "shuffled" : "in order", pages * kPage / 1e9, t,
				   pages * kPage / 1e6 / t, (unsigned long long) runs);
		}
	}
	return 0;
}
