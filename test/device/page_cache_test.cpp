/*
 * page_cache_test.cpp
 *    The page service's device cache bookkeeping (cuda/query/page_cache.hpp),
 *    host code alone: which op each lookup gets, and that a slot handed
 *    out to be read where it lies (a direct request) keeps its page until
 *    its reads are done.  A wrong answer here is a page overwritten under a
 *    backend's deforming: wrong rows, not an error.
 */
#include "../../cuda/query/page_cache.hpp"

#include <string>

#include "device_test.h"

namespace dt {
namespace {

using gpuops::cuda::kPageHit;
using gpuops::cuda::kPageNoCache;
using gpuops::cuda::PageCache;

const uint32_t kRel[3] = {1663, 5, 16384};

bool
is_hit(uint32_t op)
{
	return op != kPageNoCache && (op & kPageHit) != 0;
}

bool
is_store(uint32_t op)
{
	return op != kPageNoCache && (op & kPageHit) == 0;
}

void
expect(bool ok, const std::string &what)
{
	if (!ok)
		throw std::runtime_error(what);
}

/* A slot for every buffer: the buffer's slot is its own. */
void
check_own_slots(Outcome &out)
{
	PageCache c;
	uint32_t op;

	c.init(8, 8);
	c.next_round();
	c.set_first_unread(UINT64_MAX);
	expect(is_store(c.lookup(3, kRel, 10, 100)), "a first lookup stores");
	expect(c.lookup(3, kRel, 10, 0) == kPageNoCache, "LSN 0 is never cached");
	c.next_round();
	c.set_first_unread(UINT64_MAX);
	op = c.lookup(3, kRel, 10, 100);
	expect(is_hit(op) && (op & ~kPageHit) == 3, "the same page at the same LSN hits its slot");
	expect(is_store(c.lookup(3, kRel, 10, 101)), "a later LSN stores again (plain request)");

	/* a direct request's slot: read after its round */
	c.next_round();
	const uint64_t r = c.round();
	c.set_first_unread(UINT64_MAX);
	expect(is_hit(c.lookup(3, kRel, 10, 101, true)), "a direct hit");
	expect(c.lookup(3, kRel, 10, 102) == kPageNoCache,
		   "the page changed in the round that handed its slot out: the staging area");
	c.next_round();
	c.set_first_unread(r); /* that answer is unread */
	expect(c.lookup(3, kRel, 10, 102) == kPageNoCache,
		   "the page changed while its slot may be read: the staging area");
	expect(c.lookup(3, kRel, 11, 102, true) == kPageNoCache,
		   "another block in the buffer while its slot may be read: the staging area");
	expect(is_hit(c.lookup(3, kRel, 10, 101)), "the old page still there, unread answer or not");
	c.next_round();
	c.set_first_unread(r + 1); /* read now */
	expect(is_store(c.lookup(3, kRel, 10, 102)), "once read, the slot takes the new page");
	out.info = "host bookkeeping only";
}

/* Fewer slots than buffers: the clock passes over slots that may still be read. */
void
check_clock(Outcome &out)
{
	PageCache c;
	uint32_t held[2];

	c.init(2, 16);
	c.next_round();
	const uint64_t r = c.round();
	c.set_first_unread(UINT64_MAX);
	held[0] = c.lookup(0, kRel, 0, 5, true);
	held[1] = c.lookup(1, kRel, 1, 5, true);
	expect(is_store(held[0]) && is_store(held[1]) && held[0] != held[1],
		   "two buffers take the two slots");
	expect(c.lookup(2, kRel, 2, 5) == kPageNoCache, "no slot free in the same round");
	for (int k = 0; k < 3; k++)
	{
		c.next_round();
		c.set_first_unread(r);
		expect(c.lookup(2, kRel, 2, 5) == kPageNoCache,
			   "no slot taken from a page that may still be read (round " + std::to_string(k) +
				   ")");
	}
	expect(is_hit(c.lookup(0, kRel, 0, 5)) && is_hit(c.lookup(1, kRel, 1, 5)),
		   "both pages still in their slots");
	c.next_round();
	c.next_round();
	c.set_first_unread(UINT64_MAX);
	expect(is_store(c.lookup(2, kRel, 2, 5)), "once read, the clock takes a slot");
	out.info = "host bookkeeping only";
}

} /* namespace */

void
page_cache_tests()
{
	run_case("page cache: own slots, a page changed while its slot may be read",
			 [](Outcome &out) { check_own_slots(out); });
	run_case("page cache: the clock keeps slots that may be read",
			 [](Outcome &out) { check_clock(out); });
}

} /* namespace dt */
