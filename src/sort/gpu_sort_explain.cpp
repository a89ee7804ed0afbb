/*
 * gpu_sort_explain.cpp
 *    GpuSort in EXPLAIN: keys, method, placement, and with ANALYZE the
 *    device's, the staging's and the spill's figures.
 */
#include "gpu_sort_exec.h"

void
GpuSortExplain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuSortState *st = (GpuSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List *context;
	List *keys = NIL;
	List *computed = NIL;
	int words = 0;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	for (int k = 0; k < st->nkeys; k++)
	{
		const GpuSortKeyInfo *key = &st->keys[k];
		TargetEntry *tle = (TargetEntry *) list_nth(cscan->custom_scan_tlist, key->col);
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf,
							   deparse_expression((Node *) tle->expr, context,
												  GpuopsExplainUsePrefix(es), false));
		if (key->program != NULL)
			computed = lappend(computed, pstrdup(buf.data));
		/* as PostgreSQL's show_sortorder_options */
		if (OidIsValid(key->collation) && key->collation != exprCollation((Node *) tle->expr))
		{
			char *name = get_collation_name(key->collation);

			if (name)
				appendStringInfo(&buf, " COLLATE %s", quote_identifier(name));
		}
		if (key->descending)
			appendStringInfoString(&buf, " DESC");
		if (key->nulls_first && !key->descending)
			appendStringInfoString(&buf, " NULLS FIRST");
		else if (!key->nulls_first && key->descending)
			appendStringInfoString(&buf, " NULLS LAST");
		keys = lappend(keys, buf.data);
		words += 1 + gpuops_key_value_words(key->kind);
	}
	ExplainPropertyList("Sort Key", keys, es);
	if (computed != NIL)
		ExplainPropertyList("Keys Computed on Device", computed, es);
	ExplainPropertyText("Sort Method",
						psprintf("radix on %d-byte keys%s%s", words * 8,
								 st->has_prefix_keys ? ", ties by comparator" : "",
								 st->bound ? ", top-N" : ""),
						es);
	if (st->bound)
		ExplainPropertyInteger("Row Bound", NULL, (int64) st->bound, es);
	if (st->placement == GPUSORT_ON_HOST)
		ExplainPropertyText("Sorts On", "cpu (small bound)", es);
	else if (st->placement == GPUSORT_WORKERS_ON_HOST)
		ExplainPropertyText("Sorts On", "device in the leader, cpu in workers", es);

	if (es->analyze && st->runs > 0)
	{
		GpuopsExplainDeviceRun(es, st->backend_name, st->fallback, &st->stats, st->staging_ms,
							   st->host_memory);
		if (es->timing)
			ExplainPropertyFloat("Reorder Time", "ms", st->reorder_ms, 3, es);
		if (st->has_prefix_keys)
			ExplainPropertyInteger("Tie Runs", NULL, (int64) st->tie_runs, es);
		if (st->bound)
		{
			ExplainPropertyInteger("Compactions", NULL, (int64) st->compactions, es);
			ExplainPropertyInteger("Rows Removed by Bound", NULL, (int64) st->cut.dropped, es);
		}
		if (st->parked_rows > 0)
		{
			/* rows over the host memory limit, held in device memory (sort_park.h) */
			ExplainPropertyInteger("Parked Rows", NULL, (int64) st->parked_rows, es);
			ExplainPropertyInteger("Parked Memory", "kB", (int64) (st->parked_bytes / 1024), es);
			if (st->device_runs > 1)
				ExplainPropertyInteger("Device Runs", NULL, st->device_runs, es);
			if (es->timing)
				ExplainPropertyFloat("Device Sort Time", "ms", st->device_sort_ms, 3, es);
		}
		if (st->spilled_runs > 0)
		{
			ExplainPropertyInteger("Spilled Runs", NULL, st->spilled_runs, es);
			ExplainPropertyInteger("Spilled Disk", "kB", (int64) (st->spilled_bytes / 1024), es);
		}
	}
	GpuopsNodeExplainInputs(st, es);
}

/* The boundary: every callback PostgreSQL calls runs through GpuopsGuard. */
