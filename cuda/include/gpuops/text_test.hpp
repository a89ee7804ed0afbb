/*
 * text_test.hpp
 *    A text test (gpuops_query.h's GpuopsQueryTextTest) on a value's bytes:
 *    one code for the host reader (src/input/query_text_test.cpp) and the
 *    page deformer (page_deform.hpp: the CUDA kernel and the CPU twin), so
 *    that both forms of a read decide every row alike.
 */
#ifndef GPUOPS_TEXT_TEST_HPP
#define GPUOPS_TEXT_TEST_HPP

#include <stddef.h>
#include <stdint.h>

#include "gpuops_query.h"
#include "hd.hpp"

namespace gpuops {

/* Bytes of the character at s (at most left). */
GPUOPS_HD size_t
text_test_char_len(const GpuopsQueryTextTest &t, const uint8_t *s, size_t left)
{
	uint8_t c = s[0];
	size_t len = 1;

	if (t.utf8 && c >= 0x80)
		len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
	return len < left ? len : left;
}

/*
 * LIKE: the greedy match that returns to the last % on a mismatch, which
 * decides % and _ patterns exactly (a later % only ever needs the
 * earliest placement of what precedes it).
 */
GPUOPS_HD bool
text_test_like(const GpuopsQueryTextTest &t, const uint8_t *s, size_t n)
{
	const uint8_t *p = reinterpret_cast<const uint8_t *>(t.bytes);
	const uint8_t *mark = t.pat;
	size_t plen = t.off[1];
	size_t si = 0, pi = 0;
	size_t star_p = (size_t) -1, star_s = 0;

	while (si < n)
	{
		if (pi < plen && mark[pi] == GPUOPS_QTT_PAT_ANY)
		{
			star_p = ++pi;
			star_s = si;
			continue;
		}
		if (pi < plen && mark[pi] == GPUOPS_QTT_PAT_ONE)
		{
			si += text_test_char_len(t, s + si, n - si);
			pi++;
			continue;
		}
		if (pi < plen && p[pi] == s[si])
		{
			si++;
			pi++;
			continue;
		}
		if (star_p == (size_t) -1)
			return false;
		pi = star_p;
		star_s += text_test_char_len(t, s + star_s, n - star_s);
		si = star_s;
	}
	while (pi < plen && mark[pi] == GPUOPS_QTT_PAT_ANY)
		pi++;
	return pi == plen;
}

/* The test on n bytes of a value (a varlena's data): 1, 0, or -1 for NULL. */
GPUOPS_HD int
text_test_eval(const GpuopsQueryTextTest &t, const uint8_t *data, size_t n)
{
	if (t.kind == GPUOPS_QTT_LIKE)
		return text_test_like(t, data, n) != (t.negate != 0) ? 1 : 0;
	for (int v = 0; v < t.nvalues; v++)
	{
		size_t len = (size_t) (t.off[v + 1] - t.off[v]);
		const uint8_t *val = reinterpret_cast<const uint8_t *>(t.bytes) + t.off[v];
		bool same = len <= n;

		/*
		 * The value's first bytes first (most rows differ there); bpchar's =
		 * then wants only blanks after them (a stored char(n) is padded)
		 */
		for (size_t i = 0; same && i < len; i++)
			same = val[i] == data[i];
		if (!same)
			continue;
		for (size_t i = len; same && i < n; i++)
			same = t.trim && data[i] == ' ';
		if (same)
			return t.negate ? 0 : 1;
	}
	return t.null_value ? -1 : t.negate ? 1 : 0;
}

} /* namespace gpuops */

#endif /* GPUOPS_TEXT_TEST_HPP */
