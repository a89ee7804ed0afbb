/*
 * page_cache.cpp
 *    The page service's device page cache, its bookkeeping (page_cache.hpp).
 */
#include "page_cache.hpp"

#include <cstring>

namespace gpuops {
namespace cuda {

void
PageCache::init(uint32_t nslots, uint64_t nbuffers)
{
	clear();
	if (nslots == 0 || nslots >= kPageHit || nbuffers == 0 || nbuffers >= kNone)
		return;
	if (nslots > nbuffers)
		nslots = (uint32_t) nbuffers;
	nslots_ = nslots;
	key_.assign(nbuffers, Key{{0, 0, 0}, 0, 0}); /* LSN 0: no lookup matches */
	slot_.assign(nbuffers, kNone);
	owner_.assign(nslots, kNone);
	round_.assign(nslots, 0);
	ref_.assign(nslots, 0);
	read_round_.assign(nslots, 0);
	if (nslots == nbuffers)
		for (uint32_t b = 0; b < nslots; b++)
			slot_[b] = owner_[b] = b;
}

void
PageCache::clear()
{
	*this = PageCache();
}

void
PageCache::next_round()
{
	if (++round_no_ == 0)
		round_no_ = 1;
	round64_++;
	full_ = false;
}

/*
 * The clock: the next slot not used this round nor since the hand last
 * passed it, nor possibly still read.
 */
uint32_t
PageCache::take(uint32_t buffer)
{
	if (full_)
		return kNone;
	for (uint64_t step = 0; step < 2 * (uint64_t) nslots_; step++)
	{
		uint32_t s = hand_;

		hand_ = hand_ + 1 == nslots_ ? 0 : hand_ + 1;
		if (round_[s] == round_no_ || !writable(s))
			continue;
		if (ref_[s])
		{
			ref_[s] = 0;
			continue;
		}
		if (owner_[s] != kNone)
			slot_[owner_[s]] = kNone;
		owner_[s] = buffer;
		slot_[buffer] = s;
		return s;
	}
	full_ = true;
	return kNone;
}

uint32_t
PageCache::lookup(uint32_t buffer, const uint32_t rel[3], uint32_t block, uint64_t lsn, bool direct)
{
	if (nslots_ == 0 || lsn == 0 || buffer >= slot_.size())
		return kPageNoCache;

	Key want{{rel[0], rel[1], rel[2]}, block, lsn};
	Key &have = key_[buffer];
	uint32_t s = slot_[buffer];
	bool hit = s != kNone && memcmp(&have, &want, sizeof(Key)) == 0;

	if (s == kNone && (s = take(buffer)) == kNone)
		return kPageNoCache;
	/* another page where a backend may still read this one: the staging area takes it */
	if (!hit && !writable(s))
		return kPageNoCache;
	round_[s] = round_no_;
	ref_[s] = 1;
	if (direct)
		read_round_[s] = round64_;
	if (hit)
		return s | kPageHit;
	have = want;
	return s;
}

} /* namespace cuda */
} /* namespace gpuops */
