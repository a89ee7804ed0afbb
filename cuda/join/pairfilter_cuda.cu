/*
 * pairfilter_cuda.cu
 *    The pair filter on the GPU (gpuops_device.h): each side's program
 *    columns stay on the device; a window of pairs is copied in, one
 *    thread per pair runs the program (expr_eval.hpp), and one result byte
 *    per pair comes back.
 */
#include <chrono>
#include <memory>

#include "backend_tables.hpp"
#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "expr_columns.cuh"
#include "launch.cuh"

namespace gpuops {
namespace cuda {
namespace {

__global__ void
filter_kernel(const GpuopsExprProgram *prog, ColumnsView outer, ColumnsView inner,
			  const uint32_t *orows, const uint32_t *irows, uint64_t n, uint8_t *results)
{
	uint64_t k = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (k < n)
	{
		/* a row beyond its side is a caller's bug: left to PostgreSQL to judge */
		if (orows[k] >= outer.n || irows[k] >= inner.n)
			results[k] = GPUOPS_EXPR_RECHECK;
		else
			results[k] = static_cast<uint8_t>(
				expr_eval(prog->steps, prog->nsteps, prog->consts, prog->const_null,
						  ColumnsRow{&outer, orows[k]}, ColumnsRow{&inner, irows[k]}));
	}
}

struct CudaPairFilter
{
	Runtime *rt = nullptr;
	GpuopsSettings settings;
	GpuopsPairFilterSpec spec;
	cudaStream_t stream = nullptr;
	DeviceArray prog;
	DeviceColumns side[2];
	uint64_t pairs = 0;
	double ms = 0;
	/* copied back (the results); pf_stats does not report it (gpuops_device.h) */
	uint64_t bytes_from_device = 0;

	/* the entry points (backend_tables.hpp) */
	CudaPairFilter(const GpuopsSettings *settings, const GpuopsPairFilterSpec *spec);
	~CudaPairFilter();
	GpuopsStatus pf_side(int which, const GpuopsExprColumns *cols);
	GpuopsStatus pf_apply(const uint32_t *outer_rows, const uint32_t *inner_rows, uint64_t npairs,
						  uint8_t *results);
	void pf_stats(uint64_t *pairs_out, double *ms_out) const;
};

CudaPairFilter::CudaPairFilter(const GpuopsSettings *settings, const GpuopsPairFilterSpec *spec)
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	const char *bad = expr_validate(&spec->program, spec->outer_ncols, spec->inner_ncols);

	if (bad)
		fail(GPUOPS_ERR_INTERNAL, "bad device program: %s", bad);
	rt = &Runtime::get(*settings);
	rt->set_limit(settings->device_memory_limit, settings->device_share);
	this->settings = *settings;
	this->spec = *spec;
	stream = rt->stream(0);
	prog.get(rt, sizeof(GpuopsExprProgram), stream);
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(prog.as<void>(), &this->spec.program, sizeof(GpuopsExprProgram),
									cudaMemcpyHostToDevice, stream));
	::gpuops::cuda::sync_stream(stream);
}

GpuopsStatus
CudaPairFilter::pf_side(int which, const GpuopsExprColumns *cols)
{
	int s = which ? 1 : 0;
	cudaStream_t st = stream;
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings.fault);
	side[s].upload(rt, st, cols, s ? spec.inner_ncols : spec.outer_ncols);
	::gpuops::cuda::sync_stream(st);
	ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CudaPairFilter::pf_apply(const uint32_t *outer_rows, const uint32_t *inner_rows, uint64_t npairs,
						 uint8_t *results)
{
	cudaStream_t st = stream;
	DeviceArray rows, res;
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	if (npairs == 0)
		return GPUOPS_OK;
	rows.get(rt, npairs * 8, st);
	res.get(rt, npairs, st);
	GPUOPS_CUDA_TRY(
		cudaMemcpyAsync(rows.as<uint32_t>(), outer_rows, npairs * 4, cudaMemcpyHostToDevice, st));
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(rows.as<uint32_t>() + npairs, inner_rows, npairs * 4,
									cudaMemcpyHostToDevice, st));
	filter_kernel<<<blocks(npairs), kThreads, 0, st>>>(prog.as<GpuopsExprProgram>(), side[0].view(),
													   side[1].view(), rows.as<uint32_t>(),
													   rows.as<uint32_t>() + npairs, npairs,
													   res.as<uint8_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("pair filter");
	::gpuops::cuda::copy_to_host(results, res.as<uint8_t>(), npairs, st, &bytes_from_device);
	::gpuops::cuda::sync_stream(st);
	pairs += npairs;
	ms += ms_since(t0);
	return GPUOPS_OK;
}

void
CudaPairFilter::pf_stats(uint64_t *pairs_out, double *ms_out) const
{
	*pairs_out = pairs;
	*ms_out = ms;
}

/* pf_end: the device memory goes back to the pool on the stream; then wait for it */
CudaPairFilter::~CudaPairFilter()
{
	prog.reset();
	side[0].reset();
	side[1].reset();
	(void) cudaStreamSynchronize(stream);
}

constexpr GpuopsPairFilterBackend cuda_pairfilter_backend =
	shell::make_pairfilter_backend<CudaPairFilter>("cuda");

} /* namespace */
} /* namespace cuda */
} /* namespace gpuops */

extern "C" const GpuopsPairFilterBackend *
gpuops_cuda_pairfilter_backend(void) noexcept
{
	return &gpuops::cuda::cuda_pairfilter_backend;
}
