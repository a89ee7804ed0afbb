/*
 * query_dims.hpp
 *    A query block's dimensions built for lookup (query_common.hpp's
 *    QueryDimView), once per query: on the host by the twin, on the
 *    device by the CUDA backend (query_cuda.cu), to the same shape.
 */
#ifndef GPUOPS_QUERY_DIMS_HPP
#define GPUOPS_QUERY_DIMS_HPP

#include <vector>

#include "query_common.hpp"

namespace gpuops {

/* One dimension's lookup arrays (QueryDimView without its payload). */
struct QueryDimTable
{
	bool direct = false;
	uint64_t min = 0;
	uint64_t mask = 0;
	std::vector<uint32_t> idx;
	std::vector<uint64_t> keys; /* open addressing only */
};

/*
 * A lookup's shape, from its n keys: direct where the keys span a range at
 * most a few times n (surrogate keys, dates), else open addressing at most
 * half full.  Both builds take it from here, so both backends probe the
 * same way.
 */
struct QueryDimShape
{
	bool direct = false;
	uint64_t min = 0;		/* direct: the least key */
	uint64_t mask = 0;		/* direct: the span; else slots - 1 */
	uint64_t slots = 1;		/* idx's length (and keys', open addressing) */
	int64_t lo = 0, hi = 0; /* the keys' range, as signed words (n > 0) */
};

void query_dim_shape(const uint64_t *keys, uint64_t n, QueryDimShape *s);

/*
 * Builds the lookup of n keys on the host.  A repeated key: false, or with
 * repeats set (a semi or anti dimension, which only tests) its first row.
 */
bool query_dim_build(const uint64_t *keys, uint64_t n, QueryDimTable *t, bool repeats = false);

/* A dimension on the host: its lookup and its payload, column after column. */
struct QueryDimHost
{
	QueryDimTable table;
	GpuopsQueryDimKind kind = GPUOPS_QDIM_INNER;
	uint64_t nrows = 0;
	std::vector<uint64_t> words;
	std::vector<uint8_t> nulls; /* empty: no NULL */
};

/*
 * Every dimension of a spec built on the host, the caller's payload arrays
 * copied into words/nulls (the twin's build): -1, or the first inner
 * dimension whose keys repeat (the rest then unbuilt).
 */
int query_dims_build(const GpuopsQuerySpec &spec, std::vector<QueryDimHost> *dims);

/* A built dimension as QueryDimView, over its host arrays. */
QueryDimView query_dim_view(const QueryDimHost &h);

} /* namespace gpuops */

#endif
