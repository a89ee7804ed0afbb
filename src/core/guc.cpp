/*
 * guc.cpp
 *    Every gpuops configuration parameter, in one place.
 *
 * Defaults aim at a typical server with one GPU: planner switches on, the
 * GPU used when present, a device failure finishing the query on the CPU with
 * a NOTICE, 256 MB of pinned staging memory per backend that uses the GPU,
 * split into 16 MB batches (PCIe reaches full speed from about 8 MB).
 */
#include <climits>

extern "C" {
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "utils/guc.h"
}

#include "guc.h"
#include "gpuops_page_service.h"

bool gpuops_enabled = true;
bool gpuops_enable_sort = true;
bool gpuops_enable_topn = true;
bool gpuops_enable_hashjoin = true;
bool gpuops_enable_mergejoin = true;
bool gpuops_enable_nestloop = true;
bool gpuops_enable_nestloop_index = true;
bool gpuops_enable_shared_build = true;
bool gpuops_enable_agg = true;
bool gpuops_enable_query = true;
bool gpuops_enable_query_join = true;
double gpuops_query_page_cost = 0.1;
bool gpuops_enable_float_aggs = false;
bool gpuops_enable_parallel_staging = true;
bool gpuops_enable_sort_park = true;
bool gpuops_enable_direct_scan = true;
bool gpuops_enable_device_exprs = true;
int gpuops_device_mode = GPUOPS_DEVICE_AUTO;
int gpuops_cpu_fallback = GPUOPS_FALLBACK_NOTICE;
int gpuops_min_rows = 100000;
int gpuops_topn_device_min_bound = 65536;
int gpuops_agg_hash_max_groups = 1048576;
int gpuops_device_memory_limit_mb = 0;
int gpuops_host_memory_limit_kb = -1;
int gpuops_pinned_pool_mb = 256;
int gpuops_batch_size_mb = 16;
int gpuops_streams = 4;
double gpuops_startup_cost = 1000.0;
double gpuops_parallel_startup_cost = 500000.0;
double gpuops_tuple_cost = 0.04;
double gpuops_transfer_cost = 2.0;
int gpuops_fault_injection = GPUOPS_FAULT_NONE;
int gpuops_max_device_sessions = -1;
int gpuops_device_session_wait = 1000;
int gpuops_reader_threads = 8;
int gpuops_query_read_pages = GPUOPS_READ_PAGES_AUTO;
int gpuops_query_pages_in_place = GPUOPS_READ_PAGES_AUTO;
int gpuops_page_service_channels = 8;
int gpuops_page_cache_size = -1;

static const struct config_enum_entry device_options[] = {{"auto", GPUOPS_DEVICE_AUTO, false},
														  {"gpu", GPUOPS_DEVICE_GPU, false},
														  {"cpu", GPUOPS_DEVICE_CPU, false},
														  {NULL, 0, false}};

static const struct config_enum_entry fallback_options[] = {
	{"off", GPUOPS_FALLBACK_OFF, false},	   {"on", GPUOPS_FALLBACK_ON, false},
	{"notice", GPUOPS_FALLBACK_NOTICE, false}, {"false", GPUOPS_FALLBACK_OFF, true},
	{"true", GPUOPS_FALLBACK_ON, true},		   {"no", GPUOPS_FALLBACK_OFF, true},
	{"yes", GPUOPS_FALLBACK_ON, true},		   {"0", GPUOPS_FALLBACK_OFF, true},
	{"1", GPUOPS_FALLBACK_ON, true},		   {NULL, 0, false}};

static const struct config_enum_entry read_pages_options[] = {
	{"auto", GPUOPS_READ_PAGES_AUTO, false}, {"on", GPUOPS_READ_PAGES_ON, false},
	{"off", GPUOPS_READ_PAGES_OFF, false},	 {"true", GPUOPS_READ_PAGES_ON, true},
	{"false", GPUOPS_READ_PAGES_OFF, true},	 {NULL, 0, false}};

static const struct config_enum_entry fault_options[] = {
	{"none", GPUOPS_FAULT_NONE, false},
	{"no_device", GPUOPS_FAULT_NO_DEVICE, false},
	{"out_of_memory", GPUOPS_FAULT_OUT_OF_MEMORY, false},
	{"kernel_error", GPUOPS_FAULT_KERNEL_ERROR, false},
	{NULL, 0, false}};

/* One planner switch per operator; descriptions are literals (they must outlive _PG_init's memory context). */
static void
DefineOperatorSwitch(const char *name, const char *desc, bool *var)
{
	DefineCustomBoolVariable(name, desc, NULL, var, true, PGC_USERSET, 0, NULL, NULL, NULL);
}

void
GpuopsDefineGucs(void)
{
	DefineCustomBoolVariable("gpuops.enabled", "Enables gpuops: planning of GPU operators.",
							 "When off, every query keeps PostgreSQL's own plan.", &gpuops_enabled,
							 true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineOperatorSwitch("gpuops.enable_sort", "Enables gpuops' GPU sort (GpuSort).",
						 &gpuops_enable_sort);
	DefineOperatorSwitch("gpuops.enable_topn",
						 "Enables gpuops' top-N read by row position (GpuTopN: ORDER BY ... "
						 "LIMIT over a table's pages, rows fetched by TID).",
						 &gpuops_enable_topn);
	DefineOperatorSwitch("gpuops.enable_hashjoin", "Enables gpuops' GPU hash join (GpuHashJoin).",
						 &gpuops_enable_hashjoin);
	DefineOperatorSwitch("gpuops.enable_mergejoin",
						 "Enables gpuops' GPU merge join (GpuMergeJoin).",
						 &gpuops_enable_mergejoin);
	DefineOperatorSwitch("gpuops.enable_nestloop",
						 "Enables gpuops' GPU nested-loop join (GpuNestLoop).",
						 &gpuops_enable_nestloop);
	DefineOperatorSwitch(
		"gpuops.enable_nestloop_index",
		"Enables GpuNestLoop's indexed form: the inner side sorted on a column the join bounds, each outer row testing only its range.",
		&gpuops_enable_nestloop_index);
	DefineOperatorSwitch(
		"gpuops.enable_shared_build",
		"Enables GpuHashJoin's shared build in parallel plans: the leader builds on the GPU and looks up the workers' probe keys, so workers create no CUDA context.",
		&gpuops_enable_shared_build);
	DefineOperatorSwitch("gpuops.enable_agg", "Enables gpuops' GPU aggregation (GpuAgg).",
						 &gpuops_enable_agg);
	DefineOperatorSwitch(
		"gpuops.enable_query",
		"Enables GpuQuery: a query block (scan, filters, star and snowflake joins, GROUP BY aggregates) run whole on the GPU, which returns only the groups.",
		&gpuops_enable_query);
	DefineOperatorSwitch(
		"gpuops.enable_query_join",
		"Lets GpuQuery take query blocks that join tables: the largest read from its pages, the others looked up on the GPU (star and snowflake joins).",
		&gpuops_enable_query_join);
	DefineCustomRealVariable(
		"gpuops.query_page_cost",
		"Planner's cost of GpuQuery's backend work per heap page (visibility, pins), besides seq_page_cost.",
		NULL, &gpuops_query_page_cost, 0.1, 0.0, 1e6, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable(
		"gpuops.enable_float_aggs",
		"Lets GpuAgg compute float sums, averages, variances and standard deviations.",
		"Their partial states combine as PostgreSQL's parallel aggregation combines them "
		"(float8_combine), in another grouping than a serial plan's rows, so the last "
		"digits can differ from PostgreSQL's serial answer. Off keeps PostgreSQL's plan for them.",
		&gpuops_enable_float_aggs, false, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineOperatorSwitch(
		"gpuops.enable_parallel_staging",
		"Enables parallel workers reading a GPU operator's input into shared memory (GpuStage).",
		&gpuops_enable_parallel_staging);
	DefineOperatorSwitch(
		"gpuops.enable_sort_park",
		"Enables a GpuSort larger than gpuops.host_memory_limit keeping its rows in device memory instead of writing sorted runs to temporary files.",
		&gpuops_enable_sort_park);
	DefineOperatorSwitch(
		"gpuops.enable_direct_scan",
		"Enables gpuops operators reading a plain sequential scan's heap pages themselves, column by column, instead of tuple by tuple through the scan.",
		&gpuops_enable_direct_scan);
	DefineOperatorSwitch(
		"gpuops.enable_device_exprs",
		"Enables GPU operators computing aggregate arguments themselves, from the columns those read, instead of the input's projection computing them.",
		&gpuops_enable_device_exprs);

	DefineCustomEnumVariable("gpuops.device", "Where gpuops operators run: auto, gpu or cpu.",
							 "auto uses the GPU when one is present and otherwise keeps "
							 "PostgreSQL's plans; gpu plans GPU operators even when the "
							 "GPU turns out to be missing (then gpuops.cpu_fallback "
							 "applies); cpu runs them on gpuops' CPU backend.",
							 &gpuops_device_mode, GPUOPS_DEVICE_AUTO, device_options, PGC_USERSET,
							 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuops.cpu_fallback",
							 "What happens when the device fails at run time.",
							 "off raises an error; on finishes the query on the CPU "
							 "backend; notice does the same and says so with a NOTICE.",
							 &gpuops_cpu_fallback, GPUOPS_FALLBACK_NOTICE, fallback_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable(
		"gpuops.max_device_sessions", "How many processes may hold a CUDA context at once.",
		"Each costs several hundred MB of device memory whether busy or idle; a "
		"query that finds none free waits gpuops.device_session_wait, then runs on "
		"the CPU. -1 means one per 2 GB of the GPU's memory.",
		&gpuops_max_device_sessions, -1, -1, 10000, PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable(
		"gpuops.page_service_channels",
		"Queries that the page service can gather shared buffers' pages for at once.",
		"The page service is a background worker that maps shared buffers for the GPU "
		"once, so that GpuQuery reads pages in place from a session's first query; each "
		"channel holds 64 MB of device memory (two staging areas). 0: no service (each session copies its pages, "
		"or maps shared buffers itself once it has read enough).",
		&gpuops_page_service_channels, 8, 0, GPUOPS_PAGE_SERVICE_MAX_CHANNELS, PGC_POSTMASTER, 0,
		NULL, NULL, NULL);
	DefineCustomIntVariable(
		"gpuops.page_cache_size",
		"Device memory in which the page service keeps the table pages it gathers.",
		"A page gathered again at the same LSN is copied within the GPU instead of over "
		"PCIe; pages of unlogged and temporary tables are never kept. No more than "
		"shared_buffers is used. -1 means shared_buffers' size, up to a quarter of the "
		"GPU's memory; 0 keeps none.",
		&gpuops_page_cache_size, -1, -1, INT_MAX, PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable(
		"gpuops.device_session_wait",
		"How long a query waits for a free device session before it runs on the CPU.", NULL,
		&gpuops_device_session_wait, 1000, 0, INT_MAX, PGC_USERSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable(
		"gpuops.reader_threads", "Threads that turn a GpuQuery's table pages into device columns.",
		"The backend decides which rows are visible; these threads read their values. "
		"0: the backend reads them too.",
		&gpuops_reader_threads, 8, 0, 64, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable(
		"gpuops.query_read_pages",
		"Whether GpuQuery hands its table's pages to the device whole, for the device to deform.",
		"auto does so when the block runs on the GPU and its columns allow (no text test); on "
		"also on the CPU backend; off turns rows into columns on the host.",
		&gpuops_query_read_pages, GPUOPS_READ_PAGES_AUTO, read_pages_options, PGC_USERSET, 0, NULL,
		NULL, NULL);
	DefineCustomEnumVariable(
		"gpuops.query_pages_in_place",
		"Whether GpuQuery's device reads the table's pages where they lie in shared buffers.",
		"Instead of copying each page, the reading process keeps it pinned until the device has "
		"read it.  auto does so on the GPU for a table of at least a quarter of shared_buffers "
		"once shared buffers are mapped for the device, which a session starts in the "
		"background after it has copied as many pages as they hold (0.15-0.7 s a GB of "
		"shared_buffers, once a session); on maps them for any table at once, and reads in "
		"place on the CPU backend too; off always copies.",
		&gpuops_query_pages_in_place, GPUOPS_READ_PAGES_AUTO, read_pages_options, PGC_USERSET, 0,
		NULL, NULL, NULL);
	DefineCustomIntVariable("gpuops.min_rows",
							"Inputs estimated below this many rows keep PostgreSQL's plan.", NULL,
							&gpuops_min_rows, 100000, 0, INT_MAX, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable(
		"gpuops.topn_device_min_bound",
		"GpuSort with a LIMIT (plus OFFSET) below this sorts on the CPU, without starting the device.",
		"Such a bounded sort keeps at most max(2 x bound, 256K) rows at a time, which the host "
		"sorts in milliseconds, less than a CUDA context takes to start. 0 means always the device.",
		&gpuops_topn_device_min_bound, 65536, 0, INT_MAX, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable(
		"gpuops.agg_hash_max_groups",
		"GpuAgg hashes on the device when it expects at most this many groups, else sorts.",
		"0 means always sort.", &gpuops_agg_hash_max_groups, 1048576, 0, 16 * 1024 * 1024,
		PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuops.device_memory_limit",
							"Device memory one backend may use; 0 means 90% of the GPU's memory.",
							NULL, &gpuops_device_memory_limit_mb, 0, 0, INT_MAX / 2, PGC_SUSET,
							GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable(
		"gpuops.host_memory_limit",
		"Host memory a GpuSort may hold rows in before it writes sorted runs to temporary files.",
		"-1 means work_mem, as for PostgreSQL's own sort.", &gpuops_host_memory_limit_kb, -1, -1,
		INT_MAX, PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuops.pinned_pool_size",
							"Pinned host memory for staging, allocated once per backend.",
							"Takes effect in backends that have not used the GPU yet.",
							&gpuops_pinned_pool_mb, 256, 16, 64 * 1024, PGC_SUSET, GUC_UNIT_MB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("gpuops.batch_size", "Size of one staging batch (one pinned buffer).",
							"Takes effect in backends that have not used the GPU yet.",
							&gpuops_batch_size_mb, 16, 1, 1024, PGC_SUSET, GUC_UNIT_MB, NULL, NULL,
							NULL);
	DefineCustomIntVariable("gpuops.streams",
							"CUDA streams per backend, to overlap copies and kernels.",
							"Takes effect in backends that have not used the GPU yet.",
							&gpuops_streams, 4, 1, 32, PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("gpuops.startup_cost", "Planner's cost of starting a GPU operator.",
							 NULL, &gpuops_startup_cost, 1000.0, 0.0, 1e12, PGC_USERSET, 0, NULL,
							 NULL, NULL);
	DefineCustomRealVariable("gpuops.parallel_startup_cost",
							 "Planner's cost of parallel workers starting the GPU.",
							 "Workers are new processes: each creates a CUDA context and "
							 "pins its staging memory in every query (together about "
							 "1.5 s for 8 workers).",
							 &gpuops_parallel_startup_cost, 500000.0, 0.0, 1e12, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomRealVariable("gpuops.tuple_cost",
							 "Planner's cost of staging one row into a column batch.", NULL,
							 &gpuops_tuple_cost, 0.04, 0.0, 1e6, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("gpuops.transfer_cost",
							 "Planner's cost of moving one megabyte between host and GPU.", NULL,
							 &gpuops_transfer_cost, 2.0, 0.0, 1e9, PGC_USERSET, 0, NULL, NULL,
							 NULL);
	DefineCustomEnumVariable("gpuops.fault_injection",
							 "Forces a device failure, to test fallback and errors.", NULL,
							 &gpuops_fault_injection, GPUOPS_FAULT_NONE, fault_options, PGC_SUSET,
							 GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);

	MarkGUCPrefixReserved("gpuops");
}

Size
GpuopsHostMemoryLimit(void)
{
	int kb = gpuops_host_memory_limit_kb < 0 ? work_mem : gpuops_host_memory_limit_kb;

	return (Size) Max(kb, 64) * 1024;
}

GpuopsSettings
GpuopsCurrentSettings(void)
{
	return GpuopsSettingsFor(IsInParallelMode());
}

GpuopsSettings
GpuopsSettingsFor(bool shared)
{
	GpuopsSettings s;

	s.pinned_pool_bytes = (size_t) gpuops_pinned_pool_mb << 20;
	s.batch_bytes = (size_t) gpuops_batch_size_mb << 20;
	if (s.batch_bytes > s.pinned_pool_bytes / 2)
		s.batch_bytes = s.pinned_pool_bytes / 2;
	s.streams = gpuops_streams;
	s.device_memory_limit = (size_t) gpuops_device_memory_limit_mb << 20;
	/*
	 * The leader and the workers of a parallel query share the device and
	 * each pins its own staging pool: each gets a share of both (a worker
	 * stages only its part of the input; pinning is slow when many
	 * processes do it at once).
	 */
	s.device_share = shared ? (uint32_t) max_parallel_workers_per_gather + 1 : 1;
	if (s.device_share > 1)
		s.pinned_pool_bytes = Min(s.pinned_pool_bytes,
								  Max(s.pinned_pool_bytes / s.device_share, (size_t) 32 << 20));
	if (s.batch_bytes > s.pinned_pool_bytes / 2)
		s.batch_bytes = s.pinned_pool_bytes / 2;
	s.fault = (GpuopsFault) gpuops_fault_injection;
	return s;
}
