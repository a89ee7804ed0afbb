/*
 * explain_device.cpp
 *    What a gpuops node reports under EXPLAIN ANALYZE: where it ran, how the
 *    work was batched, and where the time went.  Through ExplainProperty*,
 *    so TEXT, JSON, YAML and XML all work.
 */
extern "C" {
#include "postgres.h"

#include "pg_compat.h"
}

#include "explain_device.h"

void
GpuopsExplainDeviceRun(ExplainState *es, const char *backend, const char *fallback,
					   const GpuopsStats *stats, double staging_ms, Size host_memory)
{
	ExplainPropertyText("Backend", backend ? backend : "none", es);
	if (fallback)
		ExplainPropertyText("Fallback", fallback, es);
	ExplainPropertyInteger("Batches", NULL, stats->batches, es);
	ExplainPropertyInteger("Rows", NULL, (int64) stats->rows, es);
	ExplainPropertyInteger("Runs", NULL, stats->runs, es);
	ExplainPropertyInteger("Sort Passes", NULL, stats->sort_passes, es);
	ExplainPropertyInteger("Sort Bits", NULL, stats->sort_bits, es);
	if (es->timing)
	{
		ExplainPropertyFloat("Staging Time", "ms", staging_ms, 3, es);
		ExplainPropertyFloat("Copy Time", "ms", stats->copy_ms, 3, es);
		ExplainPropertyFloat("Kernel Time", "ms", stats->kernel_ms, 3, es);
	}
	ExplainPropertyInteger("Device Memory", "kB", (int64) (stats->device_bytes / 1024), es);
	ExplainPropertyInteger("Host Memory", "kB", (int64) (host_memory / 1024), es);
}
