/*
 * query_dims.hpp
 *    A query block's dimensions built for lookup (query_common.hpp's
 *    QueryDimView), on the host, once per query, by both backends: the
 *    CUDA backend copies the result to the device.
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
 * Builds the lookup of n keys: direct where the keys span a range at most
 * a few times n (surrogate keys, dates), else open addressing at most half
 * full.  False when a key repeats.
 */
bool query_dim_build(const uint64_t *keys, uint64_t n, QueryDimTable *t);

/* A dimension on the host: its lookup and its payload, column after column. */
struct QueryDimHost
{
	QueryDimTable table;
	uint64_t nrows = 0;
	std::vector<uint64_t> words;
	std::vector<uint8_t> nulls; /* empty: no NULL */
};

/*
 * Every dimension of a spec built (the caller's payload arrays copied
 * into words/nulls, unless payload is false: the CUDA backend uploads
 * them from the caller's arrays): -1, or the first dimension whose keys
 * repeat (the rest then unbuilt).
 */
int query_dims_build(const GpuopsQuerySpec &spec, std::vector<QueryDimHost> *dims,
					 bool payload = true);

/* A built dimension as QueryDimView, over its host arrays. */
QueryDimView query_dim_view(const QueryDimHost &h);

} /* namespace gpuops */

#endif
