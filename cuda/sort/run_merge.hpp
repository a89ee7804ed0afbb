/*
 * run_merge.hpp
 *    Sorting inputs larger than the device budget: sorted runs and their
 *    multiway merge on the host.
 *
 * When a sort's key words would not fit in the device memory budget, the
 * backend sorts the input in runs that do, and brings each sorted run back:
 * its row numbers and its key words in sorted order, row-major.  The runs
 * are then merged on the host by comparing key words (the hybrid radix
 * sort's out-of-core scheme; the merge is the CPU side of Gowanlock et al.).
 * Both backends use this code, so the CPU twin cuts and merges runs under
 * the same budget and the tests exercise the merge without a GPU.
 */
#ifndef GPUOPS_RUN_MERGE_HPP
#define GPUOPS_RUN_MERGE_HPP

#include <cstdint>
#include <vector>

namespace gpuops {

struct SortedRun
{
	std::vector<uint32_t> rows;	 /* global row numbers, in sorted order */
	std::vector<uint64_t> words; /* [i * nwords + j]: word j of sorted row i */
};

/*
 * Rows per run for a device budget of `budget` bytes and `nwords` key words
 * per row: the run's words twice (batches, then laid out contiguously), the
 * radix sort's key and row double buffers, and its temporary storage.
 * 0 = no budget (one run).
 */
uint64_t run_rows_for_budget(uint64_t budget, uint32_t nwords);

/*
 * Whether `rows` rows of `bytes` parked bytes (gpuops_sort.h) fit a budget
 * of `budget` bytes (0: no budget) with their sort: the bytes once, and per
 * row its offset and address and the out-of-core run's share
 * (run_rows_for_budget), so that the keys never need a second run.
 */
bool park_fits(uint64_t budget, uint32_t nwords, uint64_t bytes, uint64_t rows);

/*
 * Merges the runs into order[0..n); when ties is not null, sets bit i when
 * output row i equals output row i-1 in the first tie_words words.
 */
void merge_runs(const std::vector<SortedRun> &runs, uint32_t nwords, uint32_t tie_words,
				uint32_t *order, uint8_t *ties);

} /* namespace gpuops */

#endif
