/*
 * host_radix.hpp
 *    The CPU backends' stable LSD radix sort of (64-bit key, row) pairs,
 *    8-bit digits, skipping digits every key shares: the host form of the
 *    device's CUB radix sorts, so both order ties the same way (by row).
 */
#ifndef GPUOPS_HOST_RADIX_HPP
#define GPUOPS_HOST_RADIX_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

#include "device_common.hpp"

namespace gpuops {

/* Stable LSD radix sort of (key, row) pairs on bits [0, end_bit). */
inline void
radix_sort_pairs(std::vector<uint64_t> &keys, std::vector<uint32_t> &rows, unsigned end_bit)
{
	size_t n = keys.size();
	std::vector<uint64_t> keys_alt(n);
	std::vector<uint32_t> rows_alt(n);

	for (unsigned shift = 0; shift < end_bit; shift += 8)
	{
		size_t count[256] = {0};
		bool trivial = false;
		size_t pos = 0;

		for (size_t i = 0; i < n; i++)
		{
			check_interrupt_every(i);
			count[(keys[i] >> shift) & 0xff]++;
		}
		for (size_t c : count)
			trivial |= (c == n); /* every key has the same digit here */
		if (trivial)
			continue;
		for (size_t &c : count)
		{
			size_t here = c;

			c = pos;
			pos += here;
		}
		for (size_t i = 0; i < n; i++)
		{
			size_t dst = count[(keys[i] >> shift) & 0xff]++;

			check_interrupt_every(i);
			keys_alt[dst] = keys[i];
			rows_alt[dst] = rows[i];
		}
		keys.swap(keys_alt);
		rows.swap(rows_alt);
	}
}

} /* namespace gpuops */

#endif
