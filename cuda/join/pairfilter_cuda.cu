/*
 * pairfilter_cuda.cu
 *    The pair filter on the GPU (gpuops_device.h): each side's program
 *    columns stay on the device; a window of pairs is copied in, one
 *    thread per pair runs the program (expr_eval.hpp), and one result byte
 *    per pair comes back.
 */
#include <chrono>
#include <memory>

#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "expr_columns.cuh"
#include "launch.cuh"

namespace gpuops {
namespace cuda {
namespace {

__global__ void
filter_kernel(const GpuopsExprProgram *prog, ColumnsView outer, ColumnsView inner, const uint32_t *orows,
			  const uint32_t *irows, uint64_t n, uint8_t *results)
{
	uint64_t	k = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

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
	Runtime    *rt = nullptr;
	GpuopsSettings settings;
	GpuopsPairFilterSpec spec;
	cudaStream_t stream = nullptr;
	DeviceArray prog;
	DeviceColumns side[2];
	uint64_t	pairs = 0;
	double		ms = 0;
};

GpuopsStatus
cuda_pf_begin(const GpuopsSettings *settings, const GpuopsPairFilterSpec *spec,
			  GpuopsPairFilter **out) noexcept
{
	*out = nullptr;
	return guarded([&]() {
		maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
		const char *bad = expr_validate(&spec->program, spec->outer_ncols, spec->inner_ncols);

		if (bad)
			fail(GPUOPS_ERR_INTERNAL, "bad device program: %s", bad);
		Runtime    &rt = Runtime::get(*settings);
		auto		pf = std::make_unique<CudaPairFilter>();

		rt.set_limit(settings->device_memory_limit, settings->device_share);
		pf->rt = &rt;
		pf->settings = *settings;
		pf->spec = *spec;
		pf->stream = rt.stream(0);
		pf->prog.get(&rt, sizeof(GpuopsExprProgram), pf->stream);
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(pf->prog.as<void>(), &pf->spec.program,
										sizeof(GpuopsExprProgram), cudaMemcpyHostToDevice,
										pf->stream));
		::gpuops::cuda::sync_stream(pf->stream);
		*out = reinterpret_cast<GpuopsPairFilter *>(pf.release());
		return GPUOPS_OK;
	});
}

GpuopsStatus
cuda_pf_side(GpuopsPairFilter *h, int which, const GpuopsExprColumns *cols) noexcept
{
	return guarded([&]() {
		auto	   *pf = reinterpret_cast<CudaPairFilter *>(h);
		int			s = which ? 1 : 0;
		cudaStream_t st = pf->stream;
		auto		t0 = std::chrono::steady_clock::now();

		maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, pf->settings.fault);
		pf->side[s].upload(pf->rt, st, cols, s ? pf->spec.inner_ncols : pf->spec.outer_ncols);
		::gpuops::cuda::sync_stream(st);
		pf->ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cuda_pf_apply(GpuopsPairFilter *h, const uint32_t *outer_rows, const uint32_t *inner_rows,
			  uint64_t npairs, uint8_t *results) noexcept
{
	return guarded([&]() {
		auto	   *pf = reinterpret_cast<CudaPairFilter *>(h);
		cudaStream_t st = pf->stream;
		DeviceArray rows, res;
		auto		t0 = std::chrono::steady_clock::now();

		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, pf->settings.fault);
		if (npairs == 0)
			return GPUOPS_OK;
		rows.get(pf->rt, npairs * 8, st);
		res.get(pf->rt, npairs, st);
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(rows.as<uint32_t>(), outer_rows, npairs * 4,
										cudaMemcpyHostToDevice, st));
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(rows.as<uint32_t>() + npairs, inner_rows, npairs * 4,
										cudaMemcpyHostToDevice, st));
		filter_kernel<<<blocks(npairs), kThreads, 0, st>>>(
			pf->prog.as<GpuopsExprProgram>(),
			pf->side[0].view(), pf->side[1].view(),
			rows.as<uint32_t>(), rows.as<uint32_t>() + npairs, npairs, res.as<uint8_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("pair filter");
		::gpuops::cuda::copy_to_host(results, res.as<uint8_t>(), npairs, st);
		::gpuops::cuda::sync_stream(st);
		pf->pairs += npairs;
		pf->ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

void
cuda_pf_stats(const GpuopsPairFilter *h, uint64_t *pairs, double *ms) noexcept
{
	auto	   *pf = reinterpret_cast<const CudaPairFilter *>(h);

	*pairs = pf->pairs;
	*ms = pf->ms;
}

void
cuda_pf_end(GpuopsPairFilter *h) noexcept
{
	auto	   *pf = reinterpret_cast<CudaPairFilter *>(h);

	if (pf)
	{
		pf->prog.reset();
		pf->side[0].reset();
		pf->side[1].reset();
		(void) cudaStreamSynchronize(pf->stream);
	}
	delete pf;
}

const GpuopsPairFilterBackend cuda_pairfilter_backend = {
	"cuda", cuda_pf_begin, cuda_pf_side, cuda_pf_apply, cuda_pf_stats, cuda_pf_end,
};

}								/* namespace */
}								/* namespace cuda */
}								/* namespace gpuops */

extern "C" const GpuopsPairFilterBackend *
gpuops_cuda_pairfilter_backend(void) noexcept
{
	return &gpuops::cuda::cuda_pairfilter_backend;
}
