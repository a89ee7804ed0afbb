/*
 * sort_cuda.cuh
 *    The GPU sort's state, CudaSort, and the helpers its three files share.
 *
 * The sort is one class (its entry points, backend_tables.hpp) in three
 * files, one per phase, so that each stays readable: sort_cuda.cu holds
 * the backend (begin and end, the results and computed values brought back
 * to the host, the table), sort_stage_cuda.cu the batches' staging, upload
 * and normalization, sort_run_cuda.cu the radix sort of a run, the runs cut
 * under the budget and their merge.  A kernel lives in the file that
 * launches it.
 */
#ifndef GPUOPS_SORT_CUDA_CUH
#define GPUOPS_SORT_CUDA_CUH

#include <vector>

#include "cuda_runtime.cuh"
#include "run_merge.hpp"
#include "sort_computed.hpp"

namespace gpuops {
namespace cuda {
namespace gpusort {

constexpr int kThreads = 256;

/* blocks for n elements, at most 65535 * 16 (the kernels loop over the rest) */
inline unsigned
grid_for(uint64_t n)
{
	uint64_t blocks = (n + kThreads - 1) / kThreads;

	return static_cast<unsigned>(blocks > 65535u * 16 ? 65535u * 16 : (blocks ? blocks : 1));
}

/* The sort spec as a kernel parameter (passed by value, < 1 KB). */
struct KernelSpec
{
	int nkeys;
	uint32_t nwords;
	uint8_t kind[GPUOPS_MAX_SORT_KEYS];
	uint8_t desc[GPUOPS_MAX_SORT_KEYS];
	uint8_t nulls_first[GPUOPS_MAX_SORT_KEYS];
	uint8_t computed[GPUOPS_MAX_SORT_KEYS]; /* read from `comp`, not `raw` */
	uint64_t values_off[GPUOPS_MAX_SORT_KEYS];
	uint64_t nulls_off[GPUOPS_MAX_SORT_KEYS];
};

struct DevPtr
{
	void *p = nullptr;
	size_t bytes = 0;
};

struct Batch
{
	DevPtr words;		/* [word][row] for this batch's rows */
	DevPtr computed;	/* computed keys' values (computed_layout), until fetched */
	uint64_t first = 0; /* its first row */
	uint32_t rows = 0;
	cudaEvent_t copy_start = nullptr;
	cudaEvent_t copy_end = nullptr;
	cudaEvent_t kernel_end = nullptr;
};

/* A block of parked rows on the device: the rows, then their offsets (uint32). */
struct ParkBlock
{
	DevPtr mem;
	uint64_t first = 0; /* its first row */
	uint32_t rows = 0;
	uint64_t data_bytes = 0; /* the offsets follow at this offset */
};

/* One of the two chunks of sorted rows on their way back (sort_park_next). */
struct ParkOut
{
	int buffer = -1; /* pinned buffer, held from the first chunk on */
	DevPtr dev;		 /* the chunk laid out on the device */
	cudaEvent_t done = nullptr;
	bool launched = false;
	bool big = false; /* one row larger than a chunk: in park_big instead */
	uint64_t first = 0, end = 0;
	uint64_t bytes = 0;
};

struct CudaSort
{
	Runtime *rt = nullptr;
	GpuopsSettings settings;
	GpuopsSortSpec spec;
	KernelSpec kspec;
	uint32_t nwords = 0;
	uint32_t stage_rows = 0;
	size_t values_off[GPUOPS_MAX_SORT_KEYS];
	size_t nulls_off[GPUOPS_MAX_SORT_KEYS];
	size_t input_off = 0; /* program columns in the staging buffer */
	bool has_programs = false;
	DevPtr programs[GPUOPS_MAX_SORT_KEYS]; /* computed keys' programs */
	DevPtr recheck;						   /* the first row a program stopped at */
	ComputedValues computed;			   /* computed values fetched to the host */
	int held_buffer = -1;				   /* pinned buffer handed to the caller */
	std::vector<Batch> batches;
	size_t run_first_batch = 0;	 /* batches of the current run start here */
	uint64_t rows = 0;			 /* all rows submitted */
	uint64_t run_base = 0;		 /* first row of the current run */
	uint64_t run_rows = 0;		 /* rows per run under the budget */
	std::vector<SortedRun> runs; /* finished runs, when there are several */
	bool merged = false;		 /* order and ties come from the host merge */
	std::vector<uint32_t> host_order;
	std::vector<uint8_t> host_ties;
	double runs_kernel_ms = 0;
	int next_stream = 0;
	std::vector<DevPtr> owned; /* device memory to free at the end */
	DevPtr words;			   /* all rows' key words [word][row] */
	DevPtr sorted_rows;		   /* row numbers in sorted order */
	bool identity = false;	   /* nothing to sort: input order is sorted */
	bool finished = false;
	cudaEvent_t sort_start = nullptr;
	cudaEvent_t sort_end = nullptr;
	double result_copy_ms = 0;
	GpuopsStats stats = {};

	/* parked rows (sort_park_cuda.cu) */
	std::vector<ParkBlock> park_blocks;
	uint64_t park_rows = 0;
	uint64_t park_bytes = 0;
	int park_held = -1;		 /* pinned buffer handed to the caller */
	bool park_ready = false; /* addresses, order, offsets and ties laid out */
	DevPtr park_addr;		 /* per row (submission order) its address */
	DevPtr park_order;		 /* the order, when not sorted_rows (merged runs) */
	DevPtr park_off;		 /* per sorted row its offset in the output, n + 1 */
	DevPtr park_ties;		 /* ties bitmap, 32 rows a word, with tie_words */
	DevPtr park_end;		 /* a chunk's end and offsets, from the device */
	ParkOut park_out[2];
	int park_turn = 0;	   /* the slot whose chunk goes out next */
	uint64_t park_pos = 0; /* the first row not yet launched */
	uint64_t park_cap = 0; /* row bytes in one chunk */
	std::vector<uint8_t> park_big;

	/* the entry points (backend_tables.hpp) */
	static GpuopsStatus probe(GpuopsDeviceInfo *info);
	CudaSort(const GpuopsSettings *settings, const GpuopsSortSpec *spec);
	~CudaSort();
	/* the constructor's work, and the destructor's (also after init failed) */
	void init(const GpuopsSettings *settings, const GpuopsSortSpec *spec);
	void release() noexcept;
	GpuopsStatus sort_stage(GpuopsStageBuffer *buf);
	GpuopsStatus sort_submit(uint32_t nrows);
	GpuopsStatus sort_finish();
	GpuopsStatus sort_poll();
	GpuopsStatus sort_result(uint32_t *order, uint64_t nrows);
	GpuopsStatus sort_ties(uint8_t *ties, uint64_t nrows);
	void sort_stats(GpuopsStats *out) const;
	GpuopsStatus sort_recheck(uint64_t *row);
	GpuopsStatus sort_values(int key, uint64_t first, uint32_t n, void *values, uint8_t *nulls);
	GpuopsStatus sort_park_room(uint64_t bytes, uint32_t nrows, int *fits);
	GpuopsStatus sort_park_stage(GpuopsParkBuffer *buf);
	GpuopsStatus sort_park_submit(uint64_t bytes, uint32_t nrows);
	GpuopsStatus sort_park_next(GpuopsParkChunk *chunk);
	GpuopsStatus sort_park_rewind();
	void park_release() noexcept;
};

/* device memory and events of a sort (sort_cuda.cu) */
cudaEvent_t new_event();
DevPtr take(CudaSort *s, size_t bytes, cudaStream_t st);
void give_back(CudaSort *s, DevPtr d, cudaStream_t st);
double copy_to_host(CudaSort *s, const void *dev, size_t bytes, void *host);
void fetch_computed(CudaSort *s);

/* a run's sort and its cut (sort_run_cuda.cu) */
void sort_run(CudaSort *s);
void cut_run(CudaSort *s);
DevPtr ties_on_device(CudaSort *s);

} /* namespace gpusort */
} /* namespace cuda */
} /* namespace gpuops */

#endif
