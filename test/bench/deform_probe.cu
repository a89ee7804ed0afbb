// What GpuQuery's page deforming costs on the device (doc/gpuquery.md,
// step 16): SSB lineorder-shaped heap pages (17 attributes, two bpchar
// varlenas before the integers most queries read, 65 tuples a page),
// batches of 4096 pages, deformed into Q1.1's four columns or Q4.1's
// seven.  The engine's kernel (cuda/query/query_kernels.cuh: a block
// stages its pages in shared memory) against the kernel it replaced (a
// thread a row, reading its tuple where the page lies, its page found by a
// binary search), kept here.  The pages lie contiguous (a staging area) or
// scattered over a 16 GB allocation (the page service's cache), and L2 is
// flushed before each run, as the cache's pages are not in it.  Both
// kernels' columns are compared.  Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icuda/include/gpuops -Icuda/query \
//     -Icuda/runtime -o /tmp/deform_probe test/bench/deform_probe.cu &&
//   /tmp/deform_probe [CACHE_GB]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "../../cuda/query/query_kernels.cuh"

using namespace gpuops;
using namespace gpuops::cuda;
using namespace gpuops::cuda::gpuquery;

#define CK(x) \
	do \
	{ \
		cudaError_t e_ = (x); \
		if (e_ != cudaSuccess) \
		{ \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
			exit(1); \
		} \
	} while (0)

static const uint32_t kPage = 8192;
static const uint32_t kBatch = 4096;

/* the kernel before step 16 */
__global__ void __launch_bounds__(kThreads)
	row_deform_kernel(const __grid_constant__ PageShape S, GpuopsQueryPages P, PageOut o,
					  uint32_t nrows, ull base, ull *escape)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nrows; i += gridDim.x * blockDim.x)
	{
		uint32_t code = page_deform_row(S, P, page_of_row(P.first_row, P.npages, i), i, o);

		if (code != kQueryPass)
			atomicMin(escape, ((base + i) << kEscapeShift) | code);
	}
}

/* lineorder's attributes: lengths (-1 varlena) and the bytes a bpchar stores */
static const int16_t kLen[17] = {8, 4, 4, 4, 4, 4, -1, -1, 4, 4, 4, 4, 4, 4, 4, 4, -1};
static const int kChars[17] = {0, 0, 0, 0, 0, 0, 15, 1, 0, 0, 0, 0, 0, 0, 0, 0, 10};

static uint32_t
put_tuple(uint8_t *page, uint32_t at, uint64_t seed)
{
	uint8_t t[256];
	uint32_t off = 24; /* MAXALIGN(23), no null bitmap */

	memset(t, 0, sizeof(t));
	t[kTupInfomask2Off] = 17;
	t[kTupHoffOff] = 24;
	for (int a = 0; a < 17; a++)
	{
		if (kLen[a] == -1)
		{
			t[off] = (uint8_t) (((kChars[a] + 1) << 1) | 1);
			for (int c = 0; c < kChars[a]; c++)
				t[off + 1 + c] = (uint8_t) ('A' + (seed + c) % 26);
			off += kChars[a] + 1;
			continue;
		}
		off = (off + kLen[a] - 1) & ~(uint32_t) (kLen[a] - 1);
		uint64_t v = seed * 31 + a * 7919;
		memcpy(t + off, &v, kLen[a]);
		off += kLen[a];
	}
	uint32_t start = (at - off) & ~7u;
	memcpy(page + start, t, off);
	return (start) | (1u << 15) | (off << 17);
}

int
main(int argc, char **argv)
{
	size_t cache_gb = argc > 1 ? atoi(argv[1]) : 16;
	size_t slots = cache_gb * (1ull << 30) / kPage;
	std::vector<uint8_t> pages((size_t) kBatch * kPage, 0);
	std::vector<uint32_t> first(kBatch + 1);
	std::vector<uint16_t> lineno;
	int dev;
	cudaDeviceProp prop;

	CK(cudaGetDevice(&dev));
	CK(cudaGetDeviceProperties(&prop, dev));
	/* the batch: 65 tuples a page, as lineorder's fill */
	for (uint32_t p = 0; p < kBatch; p++)
	{
		uint8_t *pg = &pages[(size_t) p * kPage];
		uint32_t at = kPage, n = 0, lower = 24;

		first[p] = (uint32_t) lineno.size();
		while (at > lower + 4 + 128)
		{
			uint32_t lp = put_tuple(pg, at, (uint64_t) p * 1000 + n);

			at = lp & 0x7FFF;
			memcpy(pg + 24 + 4 * n, &lp, 4);
			n++;
			lower += 4;
			/* every row listed but a few (tuples the snapshot does not see) */
			if (n % 9 != 0)
				lineno.push_back((uint16_t) n);
		}
	}
	first[kBatch] = (uint32_t) lineno.size();
	uint32_t nrows = (uint32_t) lineno.size();

	printf("device %s, %d SMs; batch %u pages, %u rows; cache %zu GB\n", prop.name,
		   prop.multiProcessorCount, kBatch, nrows, cache_gb);

	uint8_t *cache, *contig, *flush;
	uint32_t *d_first, *d_index_seq, *d_index_rand;
	uint16_t *d_lineno;
	uint64_t *words[2];
	uint8_t *nulls[2];
	ull *esc;
	size_t flush_bytes = 256ull << 20;

	CK(cudaMalloc(&cache, slots * kPage));
	CK(cudaMalloc(&contig, (size_t) kBatch * kPage));
	CK(cudaMalloc(&flush, flush_bytes));
	CK(cudaMalloc(&d_first, (kBatch + 1) * 4));
	CK(cudaMalloc(&d_index_seq, kBatch * 4));
	CK(cudaMalloc(&d_index_rand, kBatch * 4));
	CK(cudaMalloc(&d_lineno, nrows * 2));
	CK(cudaMalloc(&esc, 8));
	for (int k = 0; k < 2; k++)
	{
		CK(cudaMalloc(&words[k], (size_t) nrows * 8 * 8));
		CK(cudaMalloc(&nulls[k], (size_t) nrows * 8));
	}
	CK(cudaMemcpy(contig, pages.data(), pages.size(), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(d_first, first.data(), (kBatch + 1) * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(d_lineno, lineno.data(), nrows * 2, cudaMemcpyHostToDevice));

	/* the cache's slots: a run of consecutive ones, and one spread over all of it */
	std::vector<uint32_t> seq(kBatch), rnd(kBatch);
	std::mt19937_64 rng(42);
	std::vector<uint32_t> all(slots);
	std::iota(all.begin(), all.end(), 0u);
	std::shuffle(all.begin(), all.end(), rng);
	for (uint32_t p = 0; p < kBatch; p++)
	{
		seq[p] = (uint32_t) (slots / 3) + p;
		rnd[p] = all[p];
		CK(cudaMemcpy(cache + (size_t) seq[p] * kPage, &pages[(size_t) p * kPage], kPage,
					  cudaMemcpyHostToDevice));
		CK(cudaMemcpy(cache + (size_t) rnd[p] * kPage, &pages[(size_t) p * kPage], kPage,
					  cudaMemcpyHostToDevice));
	}
	CK(cudaMemcpy(d_index_seq, seq.data(), kBatch * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(d_index_rand, rnd.data(), kBatch * 4, cudaMemcpyHostToDevice));

	/* Q1.1's columns (lo_orderdate, lo_quantity, lo_extendedprice, lo_discount), Q4.1's seven */
	const int q11[] = {5, 8, 9, 11};
	const int q41[] = {2, 3, 4, 5, 12, 13, 15};
	struct Cols
	{
		const char *name;
		const int *attr;
		int n;
	} colsets[] = {{"Q1.1 4 cols", q11, 4}, {"Q4.1 7 cols", q41, 7}};

	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	int fails = 0;

	for (auto &cs : colsets)
	{
		GpuopsQueryTuple T;
		uint8_t bytes16[GPUOPS_QUERY_MAX_COLS] = {0};
		PageShape S;

		memset(&T, 0, sizeof(T));
		T.natts = 16;
		for (int a = 0; a < 16; a++)
		{
			T.attlen[a] = kLen[a];
			T.attalign[a] = kLen[a] == -1 ? 4 : (uint8_t) kLen[a];
		}
		for (int c = 0; c < cs.n; c++)
		{
			T.attr[c] = (int16_t) cs.attr[c];
			T.form[c] = GPUOPS_QPF_INT;
		}
		if (const char *why = page_shape_init(T, cs.n, bytes16, &S))
		{
			fprintf(stderr, "shape: %s\n", why);
			return 1;
		}
		struct Place
		{
			const char *name;
			const uint32_t *index;
		} places[] = {{"contiguous", nullptr},
					  {"cache, consecutive", d_index_seq},
					  {"cache, scattered", d_index_rand}};
		for (auto &pl : places)
		{
			GpuopsQueryPages P;

			memset(&P, 0, sizeof(P));
			P.npages = kBatch;
			P.page_size = kPage;
			P.first_row = d_first;
			P.lineno = d_lineno;
			if (pl.index)
			{
				P.base = cache;
				P.index = pl.index;
				P.pages = contig;
			}
			else
				P.pages = contig;
			float best[2] = {1e9f, 1e9f}, sum[2] = {0, 0};
			const int runs = 20;
			for (int r = 0; r < runs; r++)
				for (int k = 0; k < 2; k++)
				{
					PageOut o{words[k], nulls[k], nullptr, nrows};
					uint32_t group = deform_group(kPage);
					float ms;

					CK(cudaMemset(flush, r & 0xff, flush_bytes)); /* L2 holds none of the pages */
					CK(cudaMemset(esc, 0xff, 8));
					CK(cudaEventRecord(e0));
					if (k == 0)
						row_deform_kernel<<<std::min((nrows + kThreads - 1) / (uint32_t) kThreads,
													 (uint32_t) prop.multiProcessorCount * 4),
											kThreads>>>(S, P, o, nrows, 0, esc);
					else
						page_deform_kernel<<<std::min((kBatch + group - 1) / group,
													  (uint32_t) prop.multiProcessorCount * 8),
											 kThreads, group * kPage>>>(S, P, o, 0, esc);
					CK(cudaGetLastError());
					CK(cudaEventRecord(e1));
					CK(cudaEventSynchronize(e1));
					CK(cudaEventElapsedTime(&ms, e0, e1));
					best[k] = std::min(best[k], ms);
					if (r > 0)
						sum[k] += ms;
				}
			/* same columns from both */
			std::vector<uint64_t> w0((size_t) nrows * cs.n), w1((size_t) nrows * cs.n);
			ull e;
			CK(cudaMemcpy(w0.data(), words[0], w0.size() * 8, cudaMemcpyDeviceToHost));
			CK(cudaMemcpy(w1.data(), words[1], w1.size() * 8, cudaMemcpyDeviceToHost));
			CK(cudaMemcpy(&e, esc, 8, cudaMemcpyDeviceToHost));
			/* and the CPU twin's walk of the host's pages */
			std::vector<uint64_t> wh((size_t) nrows * cs.n);
			std::vector<uint8_t> nh((size_t) nrows * cs.n);
			GpuopsQueryPages H;
			memset(&H, 0, sizeof(H));
			H.npages = kBatch;
			H.page_size = kPage;
			H.pages = pages.data();
			H.first_row = first.data();
			H.lineno = lineno.data();
			for (uint32_t p = 0; p < kBatch; p++)
				for (uint32_t i = first[p]; i < first[p + 1]; i++)
					page_deform_row(S, H, p, i, PageOut{wh.data(), nh.data(), nullptr, nrows});
			bool same = w0 == w1 && w1 == wh && e == ~0ull;
			fails += same ? 0 : 1;
			printf("%-12s %-20s row kernel %7.1f us (best %6.1f)  staged kernel %7.1f us (best "
				   "%6.1f)  %.2fx  %s\n",
				   cs.name, pl.name, 1000 * sum[0] / (runs - 1), 1000 * best[0],
				   1000 * sum[1] / (runs - 1), 1000 * best[1], sum[0] / sum[1],
				   same ? "same columns" : "COLUMNS DIFFER");
		}
	}
	printf("%s\n", fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}
