/*
 * pair_window.cuh
 *    A join's next window of pairs (pair_window.hpp), written on the
 *    device: the one copy of what the hash, merge and nested-loop joins'
 *    CUDA backends do around their own write kernels.
 */
#ifndef GPUOPS_PAIR_WINDOW_CUH
#define GPUOPS_PAIR_WINDOW_CUH

#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "pair_window.hpp"

namespace gpuops {
namespace cuda {

/*
 * The next window of pw's probe: launch(from, m, pout, bout) queues the
 * join's write kernel for pairs [from, from + m) into the device arrays
 * pout and bout on stream s (and checks the launch); both arrays come back
 * and the host waits for them.  *device_bytes keeps the peak the runtime
 * had in use; *bytes_from_device counts the two copies.
 */
template <class Launch>
void
write_pair_window(PairWindow &pw, Runtime *rt, cudaStream_t s, uint64_t *device_bytes,
				  uint64_t *bytes_from_device, GpuopsJoinPairs *pairs, Launch launch)
{
	uint64_t from = pw.written;
	uint64_t m = pw.next_size();
	DeviceArray pout, bout;

	pout.get(rt, m * 4 + 4, s);
	bout.get(rt, m * 4 + 4, s);
	if (m > 0)
		launch(from, m, pout.as<uint32_t>(), bout.as<uint32_t>());
	pw.probe_out.resize(m);
	pw.build_out.resize(m);
	if (m > 0)
	{
		::gpuops::cuda::copy_to_host(pw.probe_out.data(), pout.as<uint32_t>(), m * 4, s,
									 bytes_from_device);
		::gpuops::cuda::copy_to_host(pw.build_out.data(), bout.as<uint32_t>(), m * 4, s,
									 bytes_from_device);
	}
	::gpuops::cuda::sync_stream(s);
	*device_bytes = std::max<uint64_t>(*device_bytes, rt->used());
	pw.hand_out(m, pairs);
}

} /* namespace cuda */
} /* namespace gpuops */

#endif
