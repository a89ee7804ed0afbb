/*
 * device_array.cuh
 *    Device memory that frees itself: an allocation from the runtime's
 *    stream-ordered pool, counted against the budget and released (on its
 *    stream) when the holder drops it, also while an exception unwinds.
 */
#ifndef GPUOPS_DEVICE_ARRAY_CUH
#define GPUOPS_DEVICE_ARRAY_CUH

#include <utility>

#include "cuda_runtime.cuh"

namespace gpuops {
namespace cuda {

class DeviceArray
{
  public:
	DeviceArray() = default;
	DeviceArray(const DeviceArray &) = delete;
	DeviceArray &operator=(const DeviceArray &) = delete;
	~DeviceArray() { reset(); }

	void *get(Runtime *rt, size_t bytes, cudaStream_t s)
	{
		reset();
		rt_ = rt;
		stream_ = s;
		p_ = rt->alloc(bytes, s);
		bytes_ = bytes;
		return p_;
	}
	void reset() noexcept
	{
		if (p_)
			rt_->free(p_, bytes_, stream_);
		p_ = nullptr;
		bytes_ = 0;
	}
	template <typename T>
	T *as() const
	{
		return static_cast<T *>(p_);
	}
	void swap(DeviceArray &o) noexcept
	{
		std::swap(rt_, o.rt_);
		std::swap(stream_, o.stream_);
		std::swap(p_, o.p_);
		std::swap(bytes_, o.bytes_);
	}

  private:
	Runtime *rt_ = nullptr;
	cudaStream_t stream_ = nullptr;
	void *p_ = nullptr;
	size_t bytes_ = 0;
};

} /* namespace cuda */
} /* namespace gpuops */

#endif
