/*
 * page_cache.hpp
 *    The page service's device page cache, its bookkeeping on the host:
 *    which page each slot of the cache's device memory holds, and for each
 *    page of a request whether it is copied from its slot (a hit), gathered
 *    over the bus and kept in a slot (a store), or only gathered.
 *    gpuops_page_service.h says why a page's buffer, relation, block and
 *    LSN name its contents; page_gather.cuh does the copies.
 */
#ifndef GPUOPS_PAGE_CACHE_HPP
#define GPUOPS_PAGE_CACHE_HPP

#include <cstdint>
#include <vector>

namespace gpuops {
namespace cuda {

/*
 * A page's op for page_gather_kernel: kPageNoCache, a slot to store the
 * gathered page in, or kPageHit | the slot to copy it from.
 */
constexpr uint32_t kPageHit = 0x80000000u;
constexpr uint32_t kPageNoCache = 0xffffffffu;

class PageCache
{
  public:
	/*
	 * nslots slots (at most 2^31 - 1) for shared buffers' nbuffers buffers.
	 * With a slot for every buffer, a buffer's slot is its own; with fewer, a
	 * buffer takes one when it is stored, from the clock.
	 */
	void init(uint32_t nslots, uint64_t nbuffers);
	void clear();
	uint32_t slots() const { return nslots_; }

	/*
	 * A new round of requests, whose copies run in order on one stream and
	 * are waited for before the next round: a slot used in a round keeps its
	 * page until the next, so that no copy of the round reads a slot another
	 * one of the round overwrites with another page.
	 */
	void next_round();

	/*
	 * Slots are also read after their round, by backends reading pages where
	 * they lie (gpuops_page_service.h, `direct`): a slot handed out so in
	 * a round from `first_unread` on may still be read, and is not written.
	 * Set before each round's lookups; round() is the round's number, for
	 * the caller's record of which round answered which request.
	 */
	void set_first_unread(uint64_t first_unread) { first_unread_ = first_unread; }
	uint64_t round() const { return round64_; }

	/*
	 * Page `buffer` (relation rel, block, LSN lsn as its lister read it):
	 * its op.  A hit when the buffer's slot holds that page at that LSN;
	 * otherwise a store into the buffer's slot (taken now if it has none),
	 * or kPageNoCache: lsn 0, no slot free this round, or the slot may
	 * still be read.  direct: the slot will be read after the round.
	 */
	uint32_t lookup(uint32_t buffer, const uint32_t rel[3], uint32_t block, uint64_t lsn,
					bool direct = false);

  private:
	static constexpr uint32_t kNone = 0xffffffffu;

	struct Key
	{
		uint32_t rel[3];
		uint32_t block;
		uint64_t lsn;
	};

	uint32_t take(uint32_t buffer);
	/*
	 * Whether slot s may be given another page: never handed out to be read
	 * later, or in a round before this one whose reads are all done.
	 */
	bool writable(uint32_t s) const
	{
		return read_round_[s] == 0 || (read_round_[s] < first_unread_ && read_round_[s] < round64_);
	}

	uint32_t nslots_ = 0;
	std::vector<Key> key_;			   /* per buffer: the page its slot holds */
	std::vector<uint32_t> slot_;	   /* per buffer: its slot, or kNone */
	std::vector<uint32_t> owner_;	   /* per slot: its buffer, or kNone */
	std::vector<uint32_t> round_;	   /* per slot: the round that used it last */
	std::vector<uint8_t> ref_;		   /* per slot: used since the clock passed it */
	std::vector<uint64_t> read_round_; /* per slot: the last round it was handed out to be read
										* later (round64_), or 0 */
	uint64_t round64_ = 1;			   /* the round, never wrapping */
	uint64_t first_unread_ = 0;		   /* set_first_unread */
	uint32_t hand_ = 0;
	uint32_t round_no_ = 1;
	bool full_ = false; /* no slot could be taken this round */
};

} /* namespace cuda */
} /* namespace gpuops */

#endif /* GPUOPS_PAGE_CACHE_HPP */
