/*
 * run_merge.cpp
 *    Multiway merge of sorted runs; see run_merge.hpp.
 */
#include "run_merge.hpp"

#include "device_common.hpp"

#include <cstring>

namespace gpuops {

uint64_t
run_rows_for_budget(uint64_t budget, uint32_t nwords)
{
	if (budget == 0)
		return 0;
	/*
	 * words twice, keys + alt, rows + alt, staging; and only half the
	 * budget, leaving room for CUB's temporary storage and the pool's
	 * rounding
	 */
	uint64_t per_row = 16ull * nwords + 2 * 8 + 2 * 4 + 16;
	uint64_t rows = budget / 2 / per_row;

	return rows < 64 ? 64 : rows;
}

bool
park_fits(uint64_t budget, uint32_t nwords, uint64_t bytes, uint64_t rows)
{
	/* offset (4), address (8), output offset (8), order (4) */
	uint64_t per_row = 24 + 2 * (16ull * nwords + 2 * 8 + 2 * 4 + 16);

	if (budget == 0)
		return true;
	return bytes <= budget && rows <= (budget - bytes) / per_row;
}

namespace {

inline int
compare_words(const uint64_t *a, const uint64_t *b, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++)
		if (a[j] != b[j])
			return a[j] < b[j] ? -1 : 1;
	return 0;
}

} /* namespace */

/*
 * A binary heap of run cursors, smallest head first; equal heads go in run
 * order, so the merge is stable like the sort of each run (runs hold
 * consecutive row ranges in input order).
 */
void
merge_runs(const std::vector<SortedRun> &runs, uint32_t nwords, uint32_t tie_words, uint32_t *order,
		   uint8_t *ties)
{
	struct Cursor
	{
		uint32_t run;
		uint64_t pos;
	};
	std::vector<Cursor> heap;
	auto head = [&](const Cursor &c) { return &runs[c.run].words[c.pos * nwords]; };
	auto less = [&](const Cursor &a, const Cursor &b) {
		int c = compare_words(head(a), head(b), nwords);

		return c < 0 || (c == 0 && a.run < b.run);
	};
	auto sift_down = [&](size_t i) {
		size_t n = heap.size();

		for (;;)
		{
			size_t l = 2 * i + 1, m = i;

			if (l < n && less(heap[l], heap[m]))
				m = l;
			if (l + 1 < n && less(heap[l + 1], heap[m]))
				m = l + 1;
			if (m == i)
				return;
			std::swap(heap[i], heap[m]);
			i = m;
		}
	};

	for (uint32_t r = 0; r < runs.size(); r++)
		if (!runs[r].rows.empty())
			heap.push_back(Cursor{r, 0});
	for (size_t i = heap.size(); i-- > 0;)
		sift_down(i);

	uint64_t out = 0;
	const uint64_t *prev = nullptr;

	while (!heap.empty())
	{
		Cursor c = heap[0];
		const uint64_t *w = head(c);

		check_interrupt_every(out);
		order[out] = runs[c.run].rows[c.pos];
		if (ties && out > 0 && compare_words(w, prev, tie_words) == 0)
			ties[out >> 3] |= static_cast<uint8_t>(1 << (out & 7));
		prev = w;
		out++;
		if (++heap[0].pos == runs[c.run].rows.size())
		{
			heap[0] = heap.back();
			heap.pop_back();
		}
		if (!heap.empty())
			sift_down(0);
	}
}

} /* namespace gpuops */
