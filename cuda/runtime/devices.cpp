/*
 * devices.cpp
 *    The two engines' tables (GpuopsDevice): each operator's CUDA backend,
 *    and each operator's CPU twin.  Built on first use, after every
 *    backend's own static table exists.
 */
#include "gpuops_device.h"

const GpuopsDevice *
gpuops_cuda_device(void) noexcept
{
	static const GpuopsDevice device = {
		"cuda",
		gpuops_cuda_backend(),
		gpuops_cuda_join_backend(),
		gpuops_cuda_nestloop_backend(),
		gpuops_cuda_mergejoin_backend(),
		gpuops_cuda_agg_backend(),
		gpuops_cuda_pairfilter_backend(),
		gpuops_cuda_query_backend(),
		gpuops_cuda_topn_backend(),
	};

	return &device;
}

const GpuopsDevice *
gpuops_cpu_device(void) noexcept
{
	static const GpuopsDevice device = {
		"cpu",
		gpuops_cpu_backend(),
		gpuops_cpu_join_backend(),
		gpuops_cpu_nestloop_backend(),
		gpuops_cpu_mergejoin_backend(),
		gpuops_cpu_agg_backend(),
		gpuops_cpu_pairfilter_backend(),
		gpuops_cpu_query_backend(),
		gpuops_cpu_topn_backend(),
	};

	return &device;
}
