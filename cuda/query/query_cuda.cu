/*
 * query_cuda.cu
 *    The query block backend on the GPU (gpuops_query.h): batches of
 *    expression columns through one kernel each, qual -> packed group key
 *    -> the group's slot in a table in device memory (query_table.cuh) ->
 *    every aggregate's state by 64-bit atomics.  The table persists across
 *    batches; only the groups come back, at finish.
 *
 * A batch's columns are copied on one stream into one of two input sets
 * and the call returns once the copy is done (the caller reuses its
 * buffers); its kernel runs on another stream while the next batch is
 * copied into the other set.  The next add (or finish) waits for it and
 * reads the counters: groups, rows deferred, the escape, rows passed.
 *
 * Rows the kernel could not place (a new group with the table at 3/4)
 * are listed; the table then doubles (a rehash kernel) and a kernel runs
 * those rows again, until none is left.  Between batches the table
 * doubles once half full, when the budget allows.  Past the device
 * budget, the failure is GPUOPS_ERR_OUT_OF_MEMORY and the caller runs the
 * block on the twin.
 *
 * While the table holds few groups, each block adds its rows into a small
 * cache of partial states in shared memory and adds those to the table
 * once at its end (query_table.cuh): one group over 60M rows (TPC-H Q6)
 * would otherwise serialize every row on the same global words.
 *
 * Escape: the least (row << 12 | what it was) by atomicMin, so the least
 * row wins, with what stopped it there (one row stops at one place: its
 * programs run in the twin's order).
 *
 * Files: this one holds the backend (begin, the uploads, the launches,
 * growth, finish); query_kernels.cuh the kernels; query_table.cuh the
 * table's slots and atomics; query_common.hpp what the twin shares.
 */
#include <algorithm>
#include <chrono>
#include <vector>

#include "backend_tables.hpp"
#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "page_service.cuh"
#include "query_dims.hpp"
#include "query_kernels.cuh"

namespace gpuops {
namespace cuda {
namespace gpuquery {
namespace {

/* One batch's columns on the device. */
struct InputSet
{
	DeviceArray words; /* column c's row i at c * n + i (expr_columns.hpp) */
	DeviceArray nulls;
	DeviceArray bytes;
	uint64_t rows = 0;					  /* what the arrays hold */
	DeviceArray pages, first_row, lineno; /* a pages batch, as the host gave it */
	DeviceArray index;					  /* pages read in place: their index */
	uint64_t page_bytes = 0, page_count = 0, lineno_rows = 0, index_count = 0; /* what those hold */
	cudaEvent_t uploaded = nullptr;				  /* the host's pages read */
	cudaEvent_t dstart = nullptr, dend = nullptr; /* the deforming (kernel time) */
	bool deformed = false;						  /* dstart .. dend not yet counted */
	cudaEvent_t copied = nullptr;
};

struct CudaQuery
{
	Runtime *rt = nullptr;
	GpuopsSettings settings;
	QueryLayout L;
	cudaStream_t cs = nullptr; /* copies */
	cudaStream_t ks = nullptr; /* kernels */
	/*
	 * A held batch's row index and page locations, copied up on another of
	 * the runtime's streams: the host waits for them (the caller's
	 * buffers), and on cs they would wait behind the last batch's
	 * deforming.  (With fewer streams it is ks or cs, whose order only
	 * makes the copies later.)
	 */
	cudaStream_t us = nullptr;
	unsigned max_grid = 1;
	int ntags = 0;
	uint32_t stride = 0;
	DeviceArray layout, programs, counters, table, lists[2];
	DeviceArray dim_arrays[GPUOPS_QUERY_MAX_DIMS][4]; /* idx, keys, words, nulls */
	QueryDims dims = {};							  /* over them */
	uint64_t list_rows = 0;
	uint64_t capacity = 0;
	InputSet sets[2];
	int next_set = 0;
	const uint8_t *mapped_host = nullptr; /* pages read in place: the last base, */
	const uint8_t *mapped_dev = nullptr;  /* and its device address */
	bool use_service = false;			  /* ... or the page service gathers them */
	GpuopsPageLink service = {};
	PageServiceTimes service_times;
	/*
	 * A held batch is deformed straight from its staging area (no copy out
	 * of it first); the area is asked into again only once that deforming,
	 * recorded by area_read, is done (free_area).
	 */
	cudaEvent_t area_read[2] = {nullptr, nullptr};
	bool area_busy[2] = {false, false};
	bool area_staged[2] = {false, false}; /* its last request put pages in the area itself */
	uint64_t area_seq[2] = {0, 0};		  /* the request each area was last asked for */
	uint64_t asked_seq = 0;				  /* this engine's last request */
	/*
	 * Held batches read where the service's answer says their pages lie
	 * (page_service.cuh, direct requests): mostly its device cache, which
	 * this context maps; per area the answer's locations, pinned.
	 */
	bool direct = false;
	const uint8_t *cache_dev = nullptr;
	int loc_buffer = -1;		  /* the runtime's pinned staging buffer they are in */
	uint32_t *loc_host = nullptr; /* 2 x GPUOPS_PAGE_SERVICE_PAGES */
	/*
	 * The batch held over one add (GpuopsQueryPages.may_hold): its pages
	 * asked of the page service into staging area `area`, its rows not yet
	 * counted; the caller keeps its pins and row index meanwhile.
	 */
	struct
	{
		bool active = false;
		GpuopsQueryBatch batch;
		GpuopsQueryPages pages;
		uint64_t seq = 0;
		uint32_t area = 0;
	} held;
	/* the batch whose kernel may still run */
	bool pending = false;
	int pending_set = 0;
	uint64_t pending_rows = 0;
	uint64_t pending_base = 0;
	cudaEvent_t kstart = nullptr, kend = nullptr;
	ull host_counters[kCounters];
	bool finished = false;
	std::vector<uint64_t> keys;
	std::vector<GpuopsAggResult> results;
	GpuopsQueryStats stats = {};
	bool has_shape = false; /* pages batches come (spec->tuple) */
	PageShape shape;

	/* the entry points (backend_tables.hpp) */
	CudaQuery(const GpuopsSettings *settings, const GpuopsQuerySpec *spec);
	~CudaQuery();
	GpuopsStatus query_add(const GpuopsQueryBatch *b);
	GpuopsStatus query_finish(uint64_t *ngroups_out);
	GpuopsStatus query_groups(const uint64_t **key_words, const GpuopsAggResult **results_out);
	void query_stats(GpuopsQueryStats *out) const;

	/* the constructor's work, and the destructor's (also after init failed) */
	void init(const GpuopsSettings *settings, const GpuopsQuerySpec *spec);
	void release() noexcept;

	void upload_dims(const GpuopsQuerySpec *spec);
	bool escaped() const
	{
		return host_counters[kEscape] != kNoEscape || stats.escape_row != GPUOPS_QUERY_NO_ESCAPE;
	}
	bool may_hold(const GpuopsQueryBatch *b) const;
	void add_held();
	void free_area(uint32_t area, bool whole = false);
	void await_held();
	uint64_t ask(const GpuopsQueryPages &P, uint32_t area);
	void add(const GpuopsQueryBatch *b, int area = -1);
	void upload(const GpuopsQueryBatch *b, InputSet &set, int area);
	void upload_pages(const GpuopsQueryBatch *b, InputSet &set, int area);
	void gather_pages(const GpuopsQueryPages &P, InputSet &set);
	void launch(const InputSet &set, const uint32_t *rows_in, uint64_t count, uint32_t *rows_out,
				bool first);
	void resolve();
	void read_counters();
	void grow(uint64_t new_capacity);
	uint64_t table_bytes(uint64_t slots) const { return slots * stride * 8; }
	QueryTable table_ref() const
	{
		return QueryTable{table.as<ull>(), capacity - 1, stride, counters.as<ull>() + kGroups,
						  capacity / 4 * 3};
	}
	void note_memory() { stats.device_bytes = std::max<uint64_t>(stats.device_bytes, rt->used()); }
};

/*
 * A failure in init leaves device memory taken so far (the programs, the
 * table) and events: release() gives them back before the exception goes
 * on to the shell, as CudaSort does.
 */
CudaQuery::CudaQuery(const GpuopsSettings *settings, const GpuopsQuerySpec *spec)
{
	try
	{
		init(settings, spec);
	}
	catch (...)
	{
		release();
		throw;
	}
}

void
CudaQuery::init(const GpuopsSettings *settings, const GpuopsQuerySpec *spec)
{
	std::vector<GpuopsExprProgram> progs(kQueryMaxPrograms);
	int nprograms = 0, device = 0, sms = 0;
	const char *bad;

	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	if ((bad = query_layout(*spec, &L, progs.data(), &nprograms)) != nullptr)
		fail(GPUOPS_ERR_INTERNAL, "bad query spec: %s", bad);
	if (spec->pages_service != nullptr)
	{
		service = *spec->pages_service;
		use_service = true;
	}
	if (spec->tuple != nullptr)
	{
		if ((bad = page_shape_init(*spec->tuple, spec->ncols, spec->bytes16, &shape)) != nullptr)
			fail(GPUOPS_ERR_INTERNAL, "bad query spec: %s", bad);
		has_shape = true;
	}
	rt = &Runtime::get(*settings);
	rt->set_limit(settings->device_memory_limit, settings->device_share);
	this->settings = *settings;
	ks = rt->stream(0);
	cs = rt->stream(1);
	GPUOPS_CUDA_TRY(cudaGetDevice(&device));
	GPUOPS_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
	max_grid = static_cast<unsigned>(std::max(1, sms * 4));
	maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings->fault);
	GPUOPS_CUDA_TRY(cudaEventCreate(&kstart));
	GPUOPS_CUDA_TRY(cudaEventCreate(&kend));
	if (use_service)
	{
		for (cudaEvent_t &e : area_read)
			GPUOPS_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
		us = rt->stream(2);
		cache_dev = page_service_cache(*rt, service);
		/* none free (or too small): the pages are copied, as without a cache */
		if (cache_dev != nullptr &&
			rt->buffer_bytes() >= 2 * GPUOPS_PAGE_SERVICE_PAGES * sizeof(uint32_t) &&
			(loc_buffer = rt->try_acquire_buffer()) >= 0)
		{
			loc_host = static_cast<uint32_t *>(rt->buffer(loc_buffer));
			direct = true;
		}
	}
	for (InputSet &set : sets)
	{
		GPUOPS_CUDA_TRY(cudaEventCreateWithFlags(&set.copied, cudaEventDisableTiming));
		if (spec->tuple != nullptr)
		{
			GPUOPS_CUDA_TRY(cudaEventCreateWithFlags(&set.uploaded, cudaEventDisableTiming));
			GPUOPS_CUDA_TRY(cudaEventCreate(&set.dstart));
			GPUOPS_CUDA_TRY(cudaEventCreate(&set.dend));
		}
	}

	stride = static_cast<uint32_t>(1 + L.key_words + L.state_words);
	if (L.state_words > 0)
		ntags = static_cast<int>(
			std::min<size_t>(kCacheMaxTags, kCacheBytes / ((1 + L.state_words) * 8)));
	layout.get(rt, sizeof(QueryLayout), ks);
	GPUOPS_CUDA_TRY(
		cudaMemcpyAsync(layout.as<void>(), &L, sizeof(QueryLayout), cudaMemcpyHostToDevice, ks));
	programs.get(rt, std::max(1, nprograms) * sizeof(GpuopsExprProgram), ks);
	if (nprograms > 0)
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(programs.as<void>(), progs.data(),
										nprograms * sizeof(GpuopsExprProgram),
										cudaMemcpyHostToDevice, ks));
	counters.get(rt, kCounters * sizeof(ull), ks);
	GPUOPS_CUDA_TRY(cudaMemsetAsync(counters.as<void>(), 0, kCounters * sizeof(ull), ks));
	GPUOPS_CUDA_TRY(cudaMemsetAsync(counters.as<ull>() + kEscape, 0xff, sizeof(ull), ks));
	std::fill(host_counters, host_counters + kCounters, 0ull);
	host_counters[kEscape] = kNoEscape;

	/* the planner's groups at half load; a guess takes at most an eighth of the budget */
	capacity = kMinCapacity;
	while (capacity < 2 * spec->group_capacity && table_bytes(2 * capacity) <= rt->limit() / 8)
		capacity *= 2;
	table.get(rt, table_bytes(capacity), ks);
	GPUOPS_CUDA_TRY(cudaMemsetAsync(table.as<void>(), 0, table_bytes(capacity), ks));
	stats.key_words = static_cast<uint32_t>(L.key_words);
	stats.escape_row = GPUOPS_QUERY_NO_ESCAPE;
	stats.escape_index = -1;
	stats.capacity = capacity;
	upload_dims(spec);
	note_memory();
	::gpuops::cuda::sync_stream(ks);
}

/*
 * The dimensions, built on the device: each one's keys copied up and
 * scattered into its lookup (the twin's shape, query_dim_shape), its
 * payload copied a column at a time from the caller's arrays.  The host
 * only scans the keys for their range; a host build filled a direct table
 * of 60M slots (TPC-H's o_orderkey) by writes all over it, then copied it
 * up.  A repeated key of an inner dimension escapes before any batch.
 */
void
CudaQuery::upload_dims(const GpuopsQuerySpec *spec)
{
	DeviceArray dup, keys[GPUOPS_QUERY_MAX_DIMS];
	unsigned dup_host[GPUOPS_QUERY_MAX_DIMS] = {};
	QueryDimShape shapes[GPUOPS_QUERY_MAX_DIMS];
	/* per open-addressed dimension, a free slot's key word: one outside its keys' range */
	ull empty[GPUOPS_QUERY_MAX_DIMS] = {};

	for (int d = 0; d < spec->ndims; d++)
	{
		const QueryDimShape &shape = shapes[d];

		query_dim_shape(spec->dims[d].keys, spec->dims[d].nrows, &shapes[d]);
		if (shape.direct)
			continue;
		if (shape.lo > INT64_MIN)
			empty[d] = static_cast<ull>(shape.lo - 1);
		else if (shape.hi < INT64_MAX)
			empty[d] = static_cast<ull>(shape.hi + 1);
		else
		{
			/* keys at both ends of int64: PostgreSQL's plan (the twin takes them) */
			stats.escape_row = 0;
			stats.escape_what = GPUOPS_QESC_DIM_RANGE;
			stats.escape_index = d;
			return;
		}
	}
	dup.get(rt, sizeof(dup_host), ks);
	GPUOPS_CUDA_TRY(cudaMemsetAsync(dup.as<void>(), 0, sizeof(dup_host), ks));
	for (int d = 0; d < spec->ndims; d++)
	{
		const GpuopsQueryDim &dim = spec->dims[d];
		const QueryDimShape &shape = shapes[d];
		QueryDimView v{};
		size_t n = dim.nrows;
		bool any_null = false;
		size_t bytes[4];
		void *dst[4] = {};

		for (int p = 0; p < dim.npayload; p++)
			any_null |= dim.nulls[p] != nullptr;
		bytes[0] = shape.slots * 4;
		bytes[1] = shape.direct ? 0 : shape.slots * 8;
		bytes[2] = (dim.npayload * n + 1) * 8;
		bytes[3] = any_null ? dim.npayload * n + 1 : 0;
		for (int i = 0; i < 4; i++)
		{
			if (bytes[i] == 0)
				continue;
			dim_arrays[d][i].get(rt, bytes[i], ks);
			dst[i] = dim_arrays[d][i].as<void>();
		}
		GPUOPS_CUDA_TRY(cudaMemsetAsync(dst[0], 0, bytes[0], ks));
		if (!shape.direct)
		{
			fill_kernel<ull>
				<<<std::max(1u, std::min(blocks(shape.slots), max_grid)), kThreads, 0, ks>>>(
					static_cast<ull *>(dst[1]), shape.slots, empty[d]);
			GPUOPS_CUDA_CHECK_LAUNCH("query dimension slots");
		}
		if (n > 0)
		{
			keys[d].get(rt, n * 8, ks);
			GPUOPS_CUDA_TRY(
				cudaMemcpyAsync(keys[d].as<void>(), dim.keys, n * 8, cudaMemcpyHostToDevice, ks));
			unsigned grid = std::max(1u, std::min(blocks(n), max_grid));

			if (shape.direct)
				dim_direct_kernel<<<grid, kThreads, 0, ks>>>(keys[d].as<ull>(), n, shape.min,
															 static_cast<uint32_t *>(dst[0]),
															 dup.as<unsigned>() + d);
			else
				dim_hash_kernel<<<grid, kThreads, 0, ks>>>(
					keys[d].as<ull>(), n, shape.mask, empty[d], static_cast<uint32_t *>(dst[0]),
					static_cast<ull *>(dst[1]), dup.as<unsigned>() + d);
			GPUOPS_CUDA_CHECK_LAUNCH("query dimension lookup");
		}
		for (int p = 0; p < dim.npayload && n > 0; p++)
		{
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(static_cast<uint64_t *>(dst[2]) + p * n, dim.words[p],
											n * 8, cudaMemcpyHostToDevice, ks));
			if (!any_null)
				continue;
			if (dim.nulls[p] != nullptr)
				GPUOPS_CUDA_TRY(cudaMemcpyAsync(static_cast<uint8_t *>(dst[3]) + p * n,
												dim.nulls[p], n, cudaMemcpyHostToDevice, ks));
			else
				GPUOPS_CUDA_TRY(cudaMemsetAsync(static_cast<uint8_t *>(dst[3]) + p * n, 0, n, ks));
		}
		v.min = shape.min;
		v.mask = shape.mask;
		v.idx = static_cast<const uint32_t *>(dst[0]);
		v.keys = static_cast<const uint64_t *>(dst[1]);
		v.words = static_cast<const uint64_t *>(dst[2]);
		v.nulls = static_cast<const uint8_t *>(dst[3]);
		v.nrows = n;
		v.direct = shape.direct ? 1 : 0;
		v.kind = dim.kind;
		dims.d[d] = v;
	}
	note_memory();
	/* the keys' copies go when this returns: the lookups must be built */
	::gpuops::cuda::copy_to_host(dup_host, dup.as<void>(), sizeof(dup_host), ks,
								 &stats.bytes_from_device);
	for (int d = 0; d < spec->ndims; d++)
		if (dup_host[d] != 0 && spec->dims[d].kind == GPUOPS_QDIM_INNER)
		{
			stats.escape_row = 0;
			stats.escape_what = GPUOPS_QESC_DIM_KEY;
			stats.escape_index = d;
			break;
		}
}

/* sync, after a failure too: nothing may run on memory given back */
CudaQuery::~CudaQuery()
{
	release();
}

void
CudaQuery::release() noexcept
{
	if (rt)
	{
		for (cudaStream_t s : {us, cs, ks})
			if (s && cudaStreamSynchronize(s) != cudaSuccess)
				(void) cudaGetLastError();
	}
	/* nothing reads the service's memory any more: its slots may change, its channel go */
	if (use_service && asked_seq > 0)
		page_service_read(service, asked_seq, false);
	if (loc_buffer >= 0)
		rt->release_now(loc_buffer); /* (the streams are synchronized) */
	loc_buffer = -1;
	loc_host = nullptr;
	for (InputSet &set : sets)
	{
		for (DeviceArray *a :
			 {&set.words, &set.nulls, &set.bytes, &set.pages, &set.first_row, &set.lineno})
			a->reset();
		for (cudaEvent_t *e : {&set.copied, &set.uploaded, &set.dstart, &set.dend})
		{
			if (*e)
				cudaEventDestroy(*e);
			*e = nullptr;
		}
	}
	for (DeviceArray *a : {&layout, &programs, &counters, &table, &lists[0], &lists[1]})
		a->reset();
	for (auto &arrays : dim_arrays)
		for (DeviceArray &a : arrays)
			a.reset();
	for (cudaEvent_t &e : area_read)
	{
		if (e)
			cudaEventDestroy(e);
		e = nullptr;
	}
	if (kstart)
		cudaEventDestroy(kstart);
	if (kend)
		cudaEventDestroy(kend);
	kstart = kend = nullptr;
	(void) cudaGetLastError();
}

/*
 * A batch's columns into an input set (its pages, when `area` >= 0,
 * already gathered by the page service into that staging area); returns
 * once the copy is done.
 */
void
CudaQuery::upload(const GpuopsQueryBatch *b, InputSet &set, int area)
{
	uint64_t n = b->nrows;

	if (set.rows < n)
	{
		set.words.get(rt, L.ncols * n * 8 + 8, cs);
		set.nulls.get(rt, L.ncols * n + 8, cs);
		if (L.nbytes > 0)
			set.bytes.get(rt, L.nbytes * n * 16 + 16, cs);
		set.rows = n;
		note_memory();
	}
	if (b->pages != nullptr)
	{
		upload_pages(b, set, area);
		return;
	}
	for (int c = 0; c < L.ncols; c++)
	{
		if (L.bytes_slot[c] >= 0)
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(set.bytes.as<uint64_t>() + L.bytes_slot[c] * n * 2,
											b->bytes16[c], n * 16, cudaMemcpyHostToDevice, cs));
		else
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(set.words.as<uint64_t>() + c * n, b->cols.words[c],
											n * 8, cudaMemcpyHostToDevice, cs));
		if (b->cols.nulls[c])
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(set.nulls.as<uint8_t>() + c * n, b->cols.nulls[c], n,
											cudaMemcpyHostToDevice, cs));
		else
			GPUOPS_CUDA_TRY(cudaMemsetAsync(set.nulls.as<uint8_t>() + c * n, 0, n, cs));
	}
	GPUOPS_CUDA_TRY(cudaEventRecord(set.copied, cs));
	::gpuops::cuda::sync_event(set.copied);
}

/*
 * A pages batch: the pages and their row index copied up, then deformed
 * into the set's columns on the copy stream (the batch kernel waits for
 * `copied`, recorded after the deforming).  Pages the page service
 * gathered already (area >= 0) are deformed where they lie, in its
 * staging area: copying 32 MB out of it first cost ~0.4 ms a batch in
 * the leader's hand-off.  Returns once the host's buffers are read: the
 * deforming overlaps the caller's next batch.
 */
void
CudaQuery::upload_pages(const GpuopsQueryBatch *b, InputSet &set, int area)
{
	const GpuopsQueryPages &P = *b->pages;
	uint64_t n = b->nrows;
	uint64_t bytes = (uint64_t) P.npages * P.page_size;
	GpuopsQueryPages dev = P;
	cudaStream_t up = area >= 0 ? us : cs; /* the row index's stream */
	bool grew = false;

	if (P.npages == 0 || P.page_size == 0)
		fail(GPUOPS_ERR_INTERNAL, "query pages batch of %u rows without pages", b->nrows);
	if (area < 0 && set.page_bytes < bytes)
	{
		set.pages.get(rt, bytes, cs);
		set.page_bytes = bytes;
	}
	if (set.page_count < P.npages + 1ull)
	{
		set.first_row.get(rt, (P.npages + 1ull) * 4, cs);
		set.page_count = P.npages + 1ull;
		grew = true;
	}
	if (((area < 0 && P.base != nullptr && !use_service) || (area >= 0 && direct)) &&
		set.index_count < P.npages)
	{
		set.index.get(rt, P.npages * 4ull, cs);
		set.index_count = P.npages;
		grew = true;
	}
	if (set.lineno_rows < n)
	{
		set.lineno.get(rt, n * 2 + 8, cs);
		set.lineno_rows = n;
		grew = true;
	}
	note_memory();
	if (up != cs)
	{
		/*
		 * The set's arrays are written once the deforming that last read
		 * them is done (`copied`); arrays just allocated on cs, once cs is
		 * (the first batches only)
		 */
		if (grew)
			::gpuops::cuda::sync_stream(cs);
		else
			GPUOPS_CUDA_TRY(cudaStreamWaitEvent(up, set.copied, 0));
	}
	dev.base = nullptr;
	dev.index = nullptr;
	if (area >= 0)
	{
		dev.pages = page_service_area(*rt, service, static_cast<uint32_t>(area));
		if (direct)
		{
			/* in the cache but for a few in the staging area (dev.pages): where, by index */
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(set.index.as<void>(),
											loc_host + area * GPUOPS_PAGE_SERVICE_PAGES,
											P.npages * 4ull, cudaMemcpyHostToDevice, up));
			static_assert(GPUOPS_PAGE_LOC_STAGING == GPUOPS_QUERY_PAGE_IN_PAGES,
						  "a page in the staging area is one of the batch's pages");
			dev.base = cache_dev;
			dev.index = set.index.as<uint32_t>();
		}
	}
	else if (P.base != nullptr)
		gather_pages(P, set);
	else
		GPUOPS_CUDA_TRY(
			cudaMemcpyAsync(set.pages.as<void>(), P.pages, bytes, cudaMemcpyHostToDevice, cs));
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(set.first_row.as<void>(), P.first_row, (P.npages + 1ull) * 4,
									cudaMemcpyHostToDevice, up));
	GPUOPS_CUDA_TRY(
		cudaMemcpyAsync(set.lineno.as<void>(), P.lineno, n * 2, cudaMemcpyHostToDevice, up));
	GPUOPS_CUDA_TRY(cudaEventRecord(set.uploaded, up));
	if (up != cs)
		GPUOPS_CUDA_TRY(cudaStreamWaitEvent(cs, set.uploaded, 0));
	if (area < 0)
		dev.pages = set.pages.as<uint8_t>();
	dev.first_row = set.first_row.as<uint32_t>();
	dev.lineno = set.lineno.as<uint16_t>();
	GPUOPS_CUDA_TRY(cudaEventRecord(set.dstart, cs));
	page_deform_kernel<<<std::max(1u, std::min(blocks(n), max_grid)), kThreads, 0, cs>>>(
		shape, dev,
		PageOut{set.words.as<uint64_t>(), set.nulls.as<uint8_t>(), set.bytes.as<uint64_t>(), n},
		b->nrows, stats.rows - n, counters.as<ull>() + kEscape);
	GPUOPS_CUDA_CHECK_LAUNCH("query page deform");
	GPUOPS_CUDA_TRY(cudaEventRecord(set.dend, cs));
	GPUOPS_CUDA_TRY(cudaEventRecord(set.copied, cs));
	set.deformed = true;
	if (area >= 0)
	{
		GPUOPS_CUDA_TRY(cudaEventRecord(area_read[area], cs));
		area_busy[area] = true;
	}
	::gpuops::cuda::sync_event(set.uploaded);
}

/*
 * Pages read in place into the set's pages: gathered by the page service
 * now (copied from its staging area, waited for), or their index copied
 * up, then the pages gathered from this process's mapping (the `uploaded`
 * event, which the host waits for before it lets the pages go, follows).
 */
void
CudaQuery::gather_pages(const GpuopsQueryPages &P, InputSet &set)
{
	if (use_service)
	{
		if (P.base != service.service->base)
			fail(GPUOPS_ERR_INTERNAL, "query pages in place: not shared buffers' pages");
		free_area(0, true); /* page_service_gather asks into area 0, and copies it whole */
		asked_seq = page_service_gather(*rt, service, P, set.pages.as<uint8_t>(), cs, set.uploaded,
										&service_times);
		return;
	}
	if (P.base != mapped_host)
	{
		void *dev = nullptr;

		GPUOPS_CUDA_TRY(cudaHostGetDevicePointer(&dev, const_cast<uint8_t *>(P.base), 0));
		mapped_host = P.base;
		mapped_dev = static_cast<const uint8_t *>(dev);
	}
	if ((reinterpret_cast<uintptr_t>(mapped_dev) | P.page_size) % 16 != 0)
		fail(GPUOPS_ERR_INTERNAL, "query pages in place: base or page size not 16-byte aligned");
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(set.index.as<void>(), P.index, (uint64_t) P.npages * 4,
									cudaMemcpyHostToDevice, cs));
	page_gather_kernel<<<std::max(1u, std::min(P.npages, max_grid)), kGatherThreads, 0, cs>>>(
		mapped_dev, set.index.as<uint32_t>(), P.npages, P.page_size, set.pages.as<uint8_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("query page gather");
}

/* One kernel over rows of the pending batch's set (rows_in, or all of them). */
void
CudaQuery::launch(const InputSet &set, const uint32_t *rows_in, uint64_t count, uint32_t *rows_out,
				  bool first)
{
	BatchArgs A;
	bool cache = ntags > 0 && (L.nkeys == 0 || host_counters[kGroups] <= kCacheMaxGroups);
	unsigned grid = std::max(1u, std::min(blocks(count), max_grid));

	A.layout = layout.as<QueryLayout>();
	A.progs = programs.as<GpuopsExprProgram>();
	A.cols = ColumnsView{set.words.as<uint64_t>(), set.nulls.as<uint8_t>(), pending_rows};
	A.bytes = set.bytes.as<uint64_t>();
	A.base = pending_base;
	A.rows_in = rows_in;
	A.count = count;
	A.rows_out = rows_out;
	A.table = table_ref();
	A.dims = dims;
	A.counters = counters.as<ull>();
	A.ntags = cache ? ntags : 0;
	A.first = first ? 1 : 0;
	GPUOPS_CUDA_TRY(cudaStreamWaitEvent(ks, set.copied, 0));
	GPUOPS_CUDA_TRY(cudaMemsetAsync(counters.as<ull>() + kDeferred, 0, sizeof(ull), ks));
	GPUOPS_CUDA_TRY(cudaEventRecord(kstart, ks));
	if (cache)
		batch_kernel<true><<<grid, kThreads, A.ntags *(1 + L.state_words) * sizeof(ull), ks>>>(A);
	else
		batch_kernel<false><<<grid, kThreads, 0, ks>>>(A);
	GPUOPS_CUDA_CHECK_LAUNCH("query batch");
	GPUOPS_CUDA_TRY(cudaEventRecord(kend, ks));
}

/* Waits for the kernel stream and reads the counters (and the kernel's time). */
void
CudaQuery::read_counters()
{
	ull e;

	::gpuops::cuda::copy_to_host(host_counters, counters.as<void>(), sizeof(host_counters), ks,
								 &stats.bytes_from_device);
	stats.kernel_ms += elapsed_ms(kstart, kend);
	e = host_counters[kEscape];
	if (e != kNoEscape)
	{
		uint32_t code = static_cast<uint32_t>(e & ((1u << kEscapeShift) - 1));

		stats.escape_row = e >> kEscapeShift;
		stats.escape_what = query_escape_what(code);
		stats.escape_index = query_escape_index(code);
	}
	stats.passed = host_counters[kPassed];
	stats.groups = host_counters[kGroups];
}

/* The table at new_capacity slots, every group placed again (on the kernel stream). */
void
CudaQuery::grow(uint64_t new_capacity)
{
	DeviceArray bigger;
	QueryTable t;

	bigger.get(rt, table_bytes(new_capacity), ks);
	GPUOPS_CUDA_TRY(cudaMemsetAsync(bigger.as<void>(), 0, table_bytes(new_capacity), ks));
	t = QueryTable{bigger.as<ull>(), new_capacity - 1, stride, counters.as<ull>() + kGroups,
				   new_capacity / 4 * 3};
	rehash_kernel<<<std::max(1u, std::min(blocks(capacity), max_grid)), kThreads, 0, ks>>>(
		table.as<ull>(), capacity, t, L.key_words);
	GPUOPS_CUDA_CHECK_LAUNCH("query rehash");
	note_memory();
	table.swap(bigger); /* the old table is given back after the rehash, in stream order */
	capacity = new_capacity;
	stats.capacity = capacity;
	stats.grows++;
}

/*
 * The pending batch done: its kernel waited for, and the rows it deferred
 * run again after growth, until none is left.
 */
void
CudaQuery::resolve()
{
	int in = 0;

	if (!pending)
		return;
	read_counters();
	if (sets[pending_set].deformed)
	{
		/* the batch kernel waited for the deforming: both events are past */
		stats.kernel_ms += elapsed_ms(sets[pending_set].dstart, sets[pending_set].dend);
		sets[pending_set].deformed = false;
	}
	while (host_counters[kDeferred] > 0)
	{
		uint64_t deferred = host_counters[kDeferred];

		check_interrupt();
		grow(capacity * 2);
		launch(sets[pending_set], lists[in].as<uint32_t>(), deferred, lists[in ^ 1].as<uint32_t>(),
			   false);
		in ^= 1;
		read_counters();
	}
	pending = false;
}

/*
 * Whether b may be held over this add: its pages in place, asked of the
 * page service in one request, and the caller keeps them (may_hold).
 */
bool
CudaQuery::may_hold(const GpuopsQueryBatch *b) const
{
	const GpuopsQueryPages *P = b->pages;

	return use_service && P != nullptr && P->may_hold && P->base != nullptr && b->nrows > 0 &&
		P->npages > 0 && P->npages <= GPUOPS_PAGE_SERVICE_PAGES;
}

/* The held batch added, its pages waited for (dropped once the groups are incomplete). */
void
CudaQuery::add_held()
{
	if (!held.active)
		return;
	held.active = false;
	stats.pages_held = 0;
	if (escaped())
	{
		stats.rows += held.batch.nrows; /* read, as an add after the escape counts them */
		return;
	}
	await_held();
	add(&held.batch, static_cast<int>(held.area));
}

/* The held batch's answer waited for; a direct one's locations kept for its deforming. */
void
CudaQuery::await_held()
{
	area_staged[held.area] = page_service_await(service, held.seq, &service_times) > 0;
	if (direct)
		memcpy(loc_host + held.area * GPUOPS_PAGE_SERVICE_PAGES, page_service_loc(service),
			   held.pages.npages * sizeof(uint32_t));
}

/* P's pages asked of the page service into staging area `area` (read where they lie if direct). */
uint64_t
CudaQuery::ask(const GpuopsQueryPages &P, uint32_t area)
{
	asked_seq = page_service_ask(*rt, service, P, 0, P.npages, area, direct);
	area_seq[area] = asked_seq;
	return asked_seq;
}

/*
 * Staging area `area` no longer read by a deforming: the service may
 * gather into it (whole: all of it, for page_service_gather).  A direct
 * request that put no page in its area left nothing there to read: its
 * deforming is waited for only when it is done already (then its reads
 * are reported), so that the host does not wait on the device for
 * each batch; a later report, or the finish's, covers it otherwise.
 */
void
CudaQuery::free_area(uint32_t area, bool whole)
{
	if (!area_busy[area])
		return;
	if (!whole && !area_staged[area])
	{
		cudaError_t e = cudaEventQuery(area_read[area]);

		if (e == cudaErrorNotReady)
		{
			(void) cudaGetLastError();
			return;
		}
	}
	::gpuops::cuda::sync_event(area_read[area]);
	area_busy[area] = false;
	page_service_read(service, area_seq[area]);
}

/*
 * One batch through the kernel: copied (or its pages gathered, or deformed
 * from staging area `area`) into the free input set while the other set's
 * kernel (the batch before) runs, that kernel waited for, the table grown
 * when half full, and this batch's kernel launched.
 */
void
CudaQuery::add(const GpuopsQueryBatch *b, int area)
{
	auto t0 = std::chrono::steady_clock::now();
	uint64_t n = b->nrows;
	int set = next_set;

	stats.rows += n;
	next_set ^= 1;
	upload(b, sets[set], area);
	stats.copy_ms += ms_since(t0);
	resolve();
	if (host_counters[kEscape] != kNoEscape)
		return;
	if (2 * host_counters[kGroups] > capacity &&
		rt->used() + table_bytes(2 * capacity) <= rt->limit())
		grow(2 * capacity);
	if (list_rows < n)
	{
		lists[0].get(rt, n * 4, ks);
		lists[1].get(rt, n * 4, ks);
		list_rows = n;
		note_memory();
	}
	pending_set = set;
	pending_rows = n;
	pending_base = stats.rows - n;
	pending = true;
	launch(sets[set], nullptr, n, lists[0].as<uint32_t>(), true);
}

/*
 * A batch the caller may hold (may_hold) is only asked of the page service
 * here: the add before's (held) answer is waited for, this batch's request
 * made into the other staging area, and the held batch added while the
 * service gathers; this one is added by the next add or the finish.  So
 * the service gathers while the host deforms, launches and fetches the
 * next batch, instead of between them.
 */
GpuopsStatus
CudaQuery::query_add(const GpuopsQueryBatch *b)
{
	auto t0 = std::chrono::steady_clock::now();
	uint64_t n = b->nrows;
	bool hold;

	query_check_batch(L, b, has_shape, finished);
	if (n > 0)
		stats.batches++; /* (an empty one only reads the held batch) */
	hold = may_hold(b) && !escaped();
	if (hold && held.active)
	{
		/* the held pages are in their area: this batch's go to the other one */
		uint32_t area = held.area ^ 1u;

		await_held();
		free_area(area);
		uint64_t seq = ask(*b->pages, area);
		stats.copy_ms += ms_since(t0);
		held.active = false;
		add(&held.batch, static_cast<int>(held.area));
		held.seq = seq;
		held.area = area;
	}
	else
	{
		add_held();
		if (hold)
		{
			free_area(0);
			held.seq = ask(*b->pages, 0);
			held.area = 0;
			stats.copy_ms += ms_since(t0);
		}
	}
	if (hold)
	{
		held.active = true;
		held.batch = *b;
		held.pages = *b->pages;
		held.batch.pages = &held.pages;
		stats.pages_held = 1;
		return GPUOPS_OK;
	}
	stats.pages_held = 0;
	/* nothing to do, or the groups are incomplete already (a dimension escaped at begin) */
	if (n == 0 || escaped())
	{
		stats.rows += n;
		return GPUOPS_OK;
	}
	add(b);
	return GPUOPS_OK;
}

GpuopsStatus
CudaQuery::query_finish(uint64_t *ngroups_out)
{
	uint64_t ngroups;
	int kw = L.key_words, sw = L.state_words;

	if (finished)
		fail(GPUOPS_ERR_INTERNAL, "query finished twice");
	add_held();
	resolve();
	/* (the kernel waited for every deforming: no page of the service's is read any more) */
	if (use_service && asked_seq > 0)
		page_service_read(service, asked_seq);
	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	ngroups = host_counters[kGroups];
	keys.assign(ngroups * kw, 0);
	results.assign(ngroups * L.naggs, GpuopsAggResult{});
	if (ngroups > 0)
	{
		DeviceArray dkeys, dstates;
		std::vector<uint64_t> states(ngroups * sw);

		dkeys.get(rt, ngroups * kw * 8 + 8, ks);
		dstates.get(rt, ngroups * sw * 8 + 8, ks);
		note_memory();
		GPUOPS_CUDA_TRY(cudaMemsetAsync(counters.as<ull>() + kCompacted, 0, sizeof(ull), ks));
		compact_kernel<<<std::max(1u, std::min(blocks(capacity), max_grid)), kThreads, 0, ks>>>(
			table.as<ull>(), capacity, stride, kw, counters.as<ull>() + kCompacted, dkeys.as<ull>(),
			dstates.as<ull>());
		GPUOPS_CUDA_CHECK_LAUNCH("query compact");
		if (kw > 0)
			::gpuops::cuda::copy_to_host(keys.data(), dkeys.as<void>(), ngroups * kw * 8, ks,
										 &stats.bytes_from_device);
		if (sw > 0)
			::gpuops::cuda::copy_to_host(states.data(), dstates.as<void>(), ngroups * sw * 8, ks,
										 &stats.bytes_from_device);
		::gpuops::cuda::sync_stream(ks);
		for (uint64_t g = 0; g < ngroups; g++)
		{
			check_interrupt_every(g);
			for (int a = 0; a < L.naggs; a++)
				query_result(L, a, &states[g * sw + L.state_off[a]], &results[g * L.naggs + a]);
		}
	}
	finished = true;
	stats.groups = ngroups;
	*ngroups_out = ngroups;
	return GPUOPS_OK;
}

GpuopsStatus
CudaQuery::query_groups(const uint64_t **key_words, const GpuopsAggResult **results_out)
{
	if (!finished)
		fail(GPUOPS_ERR_INTERNAL, "query groups before finish");
	*key_words = keys.data();
	*results_out = results.data();
	return GPUOPS_OK;
}

void
CudaQuery::query_stats(GpuopsQueryStats *out) const
{
	*out = stats;
	out->service_requests = service_times.requests;
	out->service_ms = service_times.wait_ms;
	out->service_pages = service_times.pages;
	out->service_cached = service_times.cached;
}

constexpr GpuopsQueryBackend cuda_query_backend = shell::make_query_backend<CudaQuery>("cuda");

} /* namespace */
} /* namespace gpuquery */
} /* namespace cuda */
} /* namespace gpuops */

extern "C" const GpuopsQueryBackend *
gpuops_cuda_query_backend(void) noexcept
{
	return &gpuops::cuda::gpuquery::cuda_query_backend;
}
