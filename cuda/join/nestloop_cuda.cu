/*
 * nestloop_cuda.cu
 *    The nested-loop join on the GPU (gpuops_device.h describes it): He et
 *    al.'s blocked nested loop with a device program as the predicate.
 *
 * A probe launches a grid of (outer rows / 256) x (inner chunks) blocks.
 * Each block loads the program into shared memory and walks its chunk of
 * the inner side one 256-row tile at a time, the tile's columns staged in
 * shared memory, each thread testing its outer row against every row of
 * the tile.  Count pass: each (outer row, chunk) counts its pairs; CUB
 * prefix-sums the counts in (outer row, chunk) order, which is nested-loop
 * order, so the output size is exact.  Write pass, per window of pairs:
 * the same walk, each thread writing its pairs that fall in the window
 * (threads with none there leave at once).  Evaluation is cheap next to
 * the executor moving the rows, so the pass is run twice rather than
 * buffering pairs of unknown number.
 */
#include <chrono>
#include <memory>

#include "backend_tables.hpp"
#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "expr_columns.cuh"
#include "launch.cuh"
#include "nestloop_common.hpp"
#include "nestloop_index.cuh"
#include "pair_window.cuh"
#include "prefix_sum.cuh"

namespace gpuops {
namespace cuda {
namespace {

struct TileRow
{
	const uint64_t *words;
	const uint8_t *nulls;
	uint32_t j;

	__device__ uint64_t word(int c) const { return words[c * kNlTile + j]; }
	__device__ bool null(int c) const { return nulls[c * kNlTile + j] != 0; }
};

struct Probe
{
	ColumnsView outer;
	ColumnsView inner;
	int inner_ncols;
	uint64_t chunk_rows;
	uint32_t nchunks;
	int first_only;
};

/*
 * The walk of both passes.  Count (kWrite false): counts[o * nchunks + c].
 * Write: pairs numbered [from, to) of the probe, at their number - from.
 */
template <bool kWrite>
__global__ void __launch_bounds__(kNlTile)
	nl_kernel(const GpuopsExprProgram *prog, Probe pr, uint64_t *counts, const uint64_t *offsets,
			  uint64_t from, uint64_t to, uint32_t *pout, uint32_t *bout)
{
	__shared__ GpuopsExprStep steps[GPUOPS_EXPR_MAX_STEPS];
	__shared__ uint64_t consts[GPUOPS_EXPR_MAX_CONSTS];
	__shared__ uint8_t const_null[GPUOPS_EXPR_MAX_CONSTS];
	extern __shared__ uint64_t tile[]; /* inner_ncols words, then null bytes, per tile row */
	uint64_t *tw = tile;
	uint8_t *tn = reinterpret_cast<uint8_t *>(tile + (size_t) pr.inner_ncols * kNlTile);
	const int nsteps = prog->nsteps;
	uint64_t o = blockIdx.x * (uint64_t) kNlTile + threadIdx.x;
	uint32_t c = blockIdx.y;
	uint64_t j0 = c * pr.chunk_rows;
	uint64_t j1 = pr.inner.n < j0 + pr.chunk_rows ? pr.inner.n : j0 + pr.chunk_rows;
	uint64_t idx = o * pr.nchunks + c;
	uint64_t base = 0;
	uint64_t cnt = 0;
	bool active = o < pr.outer.n;
	ColumnsRow orow{&pr.outer, o};

	for (int i = threadIdx.x; i < nsteps; i += kNlTile)
		steps[i] = prog->steps[i];
	for (int i = threadIdx.x; i < prog->nconsts; i += kNlTile)
	{
		consts[i] = prog->consts[i];
		const_null[i] = prog->const_null[i];
	}
	if (kWrite && active)
	{
		base = offsets[idx];
		active = offsets[idx + 1] > base && offsets[idx + 1] > from && base < to;
	}
	for (uint64_t t = j0; t < j1; t += kNlTile)
	{
		uint32_t m = (uint32_t) (j1 - t < kNlTile ? j1 - t : kNlTile);

		/* the whole block leaves once no thread has work (also before the first tile) */
		if (!__syncthreads_or(active))
			break;
		if (threadIdx.x < m)
			for (int col = 0; col < pr.inner_ncols; col++)
			{
				tw[col * kNlTile + threadIdx.x] =
					pr.inner.words[col * pr.inner.n + t + threadIdx.x];
				tn[col * kNlTile + threadIdx.x] =
					pr.inner.nulls[col * pr.inner.n + t + threadIdx.x];
			}
		__syncthreads();
		for (uint32_t jj = 0; active && jj < m; jj++)
		{
			GpuopsExprResult r = expr_eval(steps, nsteps, consts, const_null, orow,
										   TileRow{tw, tn, jj});

			if (r == GPUOPS_EXPR_FALSE)
				continue;
			if (kWrite)
			{
				uint64_t k = base + cnt;

				if (k >= to)
				{
					active = false;
					break;
				}
				if (k >= from)
				{
					pout[k - from] = static_cast<uint32_t>(o);
					bout[k - from] = static_cast<uint32_t>(t + jj) |
						(r == GPUOPS_EXPR_RECHECK ? GPUOPS_NL_RECHECK : 0);
				}
			}
			cnt++;
			if (r == GPUOPS_EXPR_TRUE && pr.first_only)
				active = false;
		}
	}
	if (!kWrite && o < pr.outer.n)
		counts[idx] = cnt;
}

struct CudaNestLoop
{
	Runtime *rt = nullptr;
	GpuopsSettings settings;
	GpuopsNestLoopSpec spec;
	cudaStream_t stream = nullptr;
	DeviceArray prog;
	DeviceColumns inner;
	/* the current probe */
	DeviceColumns outer;
	DeviceArray offsets; /* per (outer row, chunk) or item: its first pair; [last] = total */
	Probe probe = {};
	/* indexed (spec.index.column >= 0): the sorted block, the probe's items */
	DeviceArray index; /* spec.index */
	DeviceArray keys;
	DeviceArray perm;
	uint64_t nkeys = 0;
	DeviceArray ranges;
	DeviceArray item_off;
	IndexProbe iprobe = {};
	PairWindow window;
	GpuopsNestLoopStats stats = {};

	/* the entry points (backend_tables.hpp) */
	CudaNestLoop(const GpuopsSettings *settings, const GpuopsNestLoopSpec *spec);
	~CudaNestLoop();
	GpuopsStatus nl_inner(const GpuopsExprColumns *cols);
	GpuopsStatus nl_probe(const GpuopsExprColumns *outer_cols, GpuopsJoinPairs *pairs);
	GpuopsStatus nl_next_pairs(GpuopsJoinPairs *pairs);
	uint64_t nl_capacity() const;
	uint32_t nl_probe_rows() const;
	void nl_stats(GpuopsNestLoopStats *out) const;
};

size_t
tile_bytes(const CudaNestLoop *nl)
{
	return (size_t) nl->spec.inner_ncols * kNlTile * 9 + 8;
}

dim3
grid(const CudaNestLoop *nl)
{
	return dim3(blocks(nl->probe.outer.n), nl->probe.nchunks);
}

void
write_window(CudaNestLoop *nl, GpuopsJoinPairs *pairs)
{
	cudaStream_t s = nl->stream;

	write_pair_window(nl->window, nl->rt, s, &nl->stats.device_bytes, &nl->stats.bytes_from_device,
					  pairs, [&](uint64_t from, uint64_t m, uint32_t *pout, uint32_t *bout) {
						  if (nl->spec.index.column >= 0)
						  {
							  nl_index_kernel<true><<<blocks(nl->iprobe.nitems), kThreads, 0, s>>>(
								  nl->prog.as<GpuopsExprProgram>(), nl->iprobe, nullptr,
								  nl->offsets.as<uint64_t>(), from, from + m, pout, bout);
							  GPUOPS_CUDA_CHECK_LAUNCH("indexed nested loop write");
						  }
						  else
						  {
							  nl_kernel<true><<<grid(nl), kNlTile, tile_bytes(nl), s>>>(
								  nl->prog.as<GpuopsExprProgram>(), nl->probe, nullptr,
								  nl->offsets.as<uint64_t>(), from, from + m, pout, bout);
							  GPUOPS_CUDA_CHECK_LAUNCH("nested loop write");
						  }
					  });
	/* the window's pairs the program could not decide */
	for (uint64_t i = 0; i < pairs->npairs; i++)
		nl->stats.rechecks += (nl->window.build_out[i] & GPUOPS_NL_RECHECK) != 0;
}

/*
 * The indexed probe's count pass: each outer row's range and items, each
 * item's pairs, their prefix sums (nl->offsets) and total.
 */
void
index_count(CudaNestLoop *nl)
{
	Runtime *rt = nl->rt;
	cudaStream_t s = nl->stream;
	uint64_t n = nl->outer.n;
	IndexProbe &pr = nl->iprobe;
	DeviceArray items, counts, cands;

	pr.outer = nl->outer.view();
	pr.inner = nl->inner.view();
	pr.perm = nl->perm.as<uint32_t>();
	pr.chunk = nl_chunk_rows(nl->inner.n);
	pr.first_only = nl->spec.first_only;
	nl->ranges.get(rt, n * 16 + 8, s);
	nl->item_off.get(rt, (n + 1) * 8, s);
	items.get(rt, (n + 1) * 8, s);
	cands.get(rt, 8, s);
	GPUOPS_CUDA_TRY(cudaMemsetAsync(items.as<uint64_t>(), 0, (n + 1) * 8, s));
	GPUOPS_CUDA_TRY(cudaMemsetAsync(cands.as<uint64_t>(), 0, 8, s));
	if (n > 0)
	{
		nl_index_range_kernel<<<blocks(n), kThreads, 0, s>>>(
			nl->index.as<GpuopsNestLoopIndex>(), pr.outer, nl->keys.as<uint64_t>(), nl->nkeys,
			nl->inner.n, pr.chunk, nl->ranges.as<uint64_t>(), items.as<uint64_t>(),
			cands.as<unsigned long long>());
		GPUOPS_CUDA_CHECK_LAUNCH("indexed nested loop ranges");
	}
	exclusive_sum(rt, s, items, nl->item_off, n);
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt->pinned_scalar(), nl->item_off.as<uint64_t>() + n, 8,
									cudaMemcpyDeviceToHost, s));
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt->pinned_scalar() + 1, cands.as<uint64_t>(), 8,
									cudaMemcpyDeviceToHost, s));
	nl->stats.bytes_from_device += 16;
	::gpuops::cuda::sync_stream(s);
	pr.nitems = rt->pinned_scalar()[0];
	nl->stats.pairs_tested += rt->pinned_scalar()[1];
	pr.range_start = nl->ranges.as<uint64_t>();
	pr.item_off = nl->item_off.as<uint64_t>();
	items.reset();

	counts.get(rt, (pr.nitems + 1) * 8, s);
	nl->offsets.get(rt, (pr.nitems + 1) * 8, s);
	GPUOPS_CUDA_TRY(cudaMemsetAsync(counts.as<uint64_t>(), 0, (pr.nitems + 1) * 8, s));
	if (pr.nitems > 0)
	{
		nl_index_kernel<false>
			<<<blocks(pr.nitems), kThreads, 0, s>>>(nl->prog.as<GpuopsExprProgram>(), pr,
													counts.as<uint64_t>(), nullptr, 0, 0, nullptr,
													nullptr);
		GPUOPS_CUDA_CHECK_LAUNCH("indexed nested loop count");
	}
	exclusive_sum(rt, s, counts, nl->offsets, pr.nitems);
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt->pinned_scalar(), nl->offsets.as<uint64_t>() + pr.nitems, 8,
									cudaMemcpyDeviceToHost, s));
	nl->stats.bytes_from_device += 8;
	::gpuops::cuda::sync_stream(s);
	nl->window.start(rt->pinned_scalar()[0]);
	nl->stats.pairs += nl->window.total;
}

CudaNestLoop::CudaNestLoop(const GpuopsSettings *settings, const GpuopsNestLoopSpec *spec)
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	const char *bad = nl_validate(spec);

	if (bad)
		fail(GPUOPS_ERR_INTERNAL, "bad device program: %s", bad);
	rt = &Runtime::get(*settings);
	rt->set_limit(settings->device_memory_limit, settings->device_share);
	this->settings = *settings;
	this->spec = *spec;
	stream = rt->stream(0);
	window.max_pairs = join_window_pairs_for_budget(rt->limit());
	prog.get(rt, sizeof(GpuopsExprProgram), stream);
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(prog.as<void>(), &this->spec.program, sizeof(GpuopsExprProgram),
									cudaMemcpyHostToDevice, stream));
	if (spec->index.column >= 0)
	{
		index.get(rt, sizeof(GpuopsNestLoopIndex), stream);
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(index.as<void>(), &this->spec.index,
										sizeof(GpuopsNestLoopIndex), cudaMemcpyHostToDevice,
										stream));
	}
	::gpuops::cuda::sync_stream(stream);
}

GpuopsStatus
CudaNestLoop::nl_inner(const GpuopsExprColumns *cols)
{
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings.fault);
	if (cols->nrows >= GPUOPS_NL_RECHECK)
		fail(GPUOPS_ERR_UNSUPPORTED, "inner block over %u rows", GPUOPS_NL_RECHECK - 1);
	inner.upload(rt, stream, cols, spec.inner_ncols);
	if (spec.index.column >= 0)
		nl_index_build(rt, stream, spec.index, spec.inner_ncols, inner, keys, perm, &nkeys,
					   &stats.bytes_from_device);
	::gpuops::cuda::sync_stream(stream);
	stats.inner_rows += cols->nrows;
	stats.blocks++;
	stats.copy_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CudaNestLoop::nl_probe(const GpuopsExprColumns *outer_cols, GpuopsJoinPairs *pairs)
{
	cudaStream_t s = stream;
	uint64_t n = outer_cols->nrows;
	DeviceArray counts;
	uint64_t ncounts;
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	offsets.reset();
	outer.upload(rt, s, outer_cols, spec.outer_ncols);
	if (spec.index.column >= 0)
	{
		index_count(this);
		write_window(this, pairs);
		stats.outer_rows += n;
		stats.probes++;
		stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	}
	probe.outer = outer.view();
	probe.inner = inner.view();
	probe.inner_ncols = spec.inner_ncols;
	probe.chunk_rows = nl_chunk_rows(inner.n);
	probe.nchunks = static_cast<uint32_t>(nl_chunks(inner.n));
	probe.first_only = spec.first_only;
	ncounts = n * probe.nchunks;
	counts.get(rt, (ncounts + 1) * 8, s);
	offsets.get(rt, (ncounts + 1) * 8, s);
	GPUOPS_CUDA_TRY(cudaMemsetAsync(counts.as<uint64_t>(), 0, (ncounts + 1) * 8, s));
	if (n > 0 && inner.n > 0)
	{
		nl_kernel<false><<<grid(this), kNlTile, tile_bytes(this), s>>>(prog.as<GpuopsExprProgram>(),
																	   probe, counts.as<uint64_t>(),
																	   nullptr, 0, 0, nullptr,
																	   nullptr);
		GPUOPS_CUDA_CHECK_LAUNCH("nested loop count");
	}
	exclusive_sum(rt, s, counts, offsets, ncounts);
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt->pinned_scalar(), offsets.as<uint64_t>() + ncounts, 8,
									cudaMemcpyDeviceToHost, s));
	stats.bytes_from_device += 8;
	::gpuops::cuda::sync_stream(s);
	window.start(rt->pinned_scalar()[0]);
	counts.reset();
	write_window(this, pairs);
	stats.outer_rows += n;
	stats.pairs_tested += n * inner.n;
	stats.pairs += window.total;
	stats.probes++;
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CudaNestLoop::nl_next_pairs(GpuopsJoinPairs *pairs)
{
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	stats.windows++;
	write_window(this, pairs);
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

uint64_t
CudaNestLoop::nl_capacity() const
{
	return nl_inner_rows_for_budget(rt->limit(), spec.inner_ncols, spec.index.column >= 0);
}

uint32_t
CudaNestLoop::nl_probe_rows() const
{
	return nl_probe_rows_for_budget(rt->limit(), spec.outer_ncols);
}

void
CudaNestLoop::nl_stats(GpuopsNestLoopStats *out) const
{
	*out = stats;
}

/* nl_end */
CudaNestLoop::~CudaNestLoop()
{
	prog.reset();
	index.reset();
	keys.reset();
	perm.reset();
	ranges.reset();
	item_off.reset();
	inner.reset();
	outer.reset();
	offsets.reset();
	(void) cudaStreamSynchronize(stream);
}

constexpr GpuopsNestLoopBackend cuda_nestloop_backend = shell::make_nestloop_backend<CudaNestLoop>(
	"cuda");

} /* namespace */
} /* namespace cuda */
} /* namespace gpuops */

extern "C" const GpuopsNestLoopBackend *
gpuops_cuda_nestloop_backend(void) noexcept
{
	return &gpuops::cuda::cuda_nestloop_backend;
}
