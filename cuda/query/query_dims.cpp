/*
 * query_dims.cpp
 *    A dimension's lookup (query_dims.hpp).  Direct addressing needs one
 *    load a probe, which is what a fact row pays per dimension, so it is
 *    taken whenever the key range allows: up to 4 slots a row, or 64K
 *    slots (SSB's date keys span 61K values for 2556 rows).
 */
#include "query_dims.hpp"

#include "device_common.hpp"

namespace gpuops {

void
query_dim_shape(const uint64_t *keys, uint64_t n, QueryDimShape *s)
{
	*s = QueryDimShape{};
	if (n == 0)
	{
		/* nothing matches: a direct table of one empty slot */
		s->direct = true;
		return;
	}
	s->lo = s->hi = static_cast<int64_t>(keys[0]);
	for (uint64_t i = 1; i < n; i++)
	{
		int64_t k = static_cast<int64_t>(keys[i]);

		s->lo = k < s->lo ? k : s->lo;
		s->hi = k > s->hi ? k : s->hi;
	}
	/* the span as an unsigned difference: exact, since hi >= lo */
	uint64_t span = static_cast<uint64_t>(s->hi) - static_cast<uint64_t>(s->lo);
	uint64_t room = 4 * n > (1u << 16) ? 4 * n : (1u << 16);

	if (span < room)
	{
		s->direct = true;
		s->min = static_cast<uint64_t>(s->lo);
		s->mask = span;
		s->slots = span + 1;
		return;
	}
	s->slots = 16;
	while (s->slots < 2 * n)
		s->slots *= 2;
	s->mask = s->slots - 1;
}

bool
query_dim_build(const uint64_t *keys, uint64_t n, QueryDimTable *t, bool repeats)
{
	QueryDimShape s;

	query_dim_shape(keys, n, &s);
	*t = QueryDimTable{};
	t->direct = s.direct;
	t->min = s.min;
	t->mask = s.mask;
	t->idx.assign(s.slots, 0);
	if (s.direct)
	{
		for (uint64_t i = 0; i < n; i++)
		{
			uint32_t &slot = t->idx[keys[i] - t->min];

			if (slot != 0 && !repeats)
				return false;
			if (slot == 0)
				slot = static_cast<uint32_t>(i + 1);
			check_interrupt_every(i);
		}
		return true;
	}
	t->keys.assign(s.slots, 0);
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t pos = query_dim_hash(keys[i]) & t->mask;
		bool seen = false;

		for (; t->idx[pos] != 0 && !seen; pos = (pos + 1) & t->mask)
			seen = t->keys[pos] == keys[i];
		if (seen && !repeats)
			return false;
		if (!seen)
		{
			t->idx[pos] = static_cast<uint32_t>(i + 1);
			t->keys[pos] = keys[i];
		}
		check_interrupt_every(i);
	}
	return true;
}

int
query_dims_build(const GpuopsQuerySpec &spec, std::vector<QueryDimHost> *dims)
{
	dims->assign(spec.ndims, QueryDimHost{});
	for (int d = 0; d < spec.ndims; d++)
	{
		const GpuopsQueryDim &dim = spec.dims[d];
		QueryDimHost &h = (*dims)[d];
		uint64_t n = dim.nrows;

		if (!query_dim_build(dim.keys, n, &h.table, dim.kind != GPUOPS_QDIM_INNER))
			return d;
		h.kind = dim.kind;
		h.nrows = n;
		h.words.resize(dim.npayload * n + 1);
		for (int p = 0; p < dim.npayload; p++)
		{
			if (n > 0)
				memcpy(&h.words[p * n], dim.words[p], n * sizeof(uint64_t));
			if (dim.nulls[p] != nullptr && h.nulls.empty())
				h.nulls.assign(dim.npayload * n + 1, 0);
			if (dim.nulls[p] != nullptr && n > 0)
				memcpy(&h.nulls[p * n], dim.nulls[p], n);
		}
	}
	return -1;
}

QueryDimView
query_dim_view(const QueryDimHost &h)
{
	QueryDimView v{};

	v.min = h.table.min;
	v.mask = h.table.mask;
	v.idx = h.table.idx.data();
	v.keys = h.table.keys.empty() ? nullptr : h.table.keys.data();
	v.words = h.words.data();
	v.nulls = h.nulls.empty() ? nullptr : h.nulls.data();
	v.nrows = h.nrows;
	v.direct = h.table.direct ? 1 : 0;
	v.kind = h.kind;
	return v;
}

} /* namespace gpuops */
