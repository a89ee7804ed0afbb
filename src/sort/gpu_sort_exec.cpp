/*
 * gpu_sort_exec.cpp
 *    GpuSort execution: a key-pointer sort.
 *
 * The child's rows are pulled into column batches (batch.h) that stay on the
 * host.  As each batch fills, its key columns (contiguous arrays; for
 * C-collation text a 16-byte prefix per row) and their null bitmaps are
 * copied into a pinned staging buffer and submitted to the device, so the
 * copy and the normalize kernel of one batch overlap the pulling of the
 * next.  The device orders the rows by their normalized key words and
 * returns row numbers.  Where a text key was longer than its prefix, runs of
 * rows whose words are all equal are then ordered with PostgreSQL's own
 * comparator (GPUTeraSort's tie resolution).  The columns are gathered into
 * that order and the rows emitted.
 *
 * Computed keys (gpu_sort.h): the batch stages the columns a key's
 * program reads instead of the key, the device computes the key, and its
 * values come back into the store's computed column after the sort, so
 * that tie resolution, spilling and the rows emitted see them as any other
 * column.  A row the device stops at is one PostgreSQL raises an error
 * for: its own evaluation of the key on that row raises it.
 *
 * Device failures: the failing call is reported once (GpuopsDeviceFailed);
 * with gpuops.cpu_fallback the store, which still holds every row, is sorted
 * again by the CPU backend.  Device resources are released through a
 * memory-context callback on the query context, since EndCustomScan is not
 * called when the query errors or is cancelled.
 */
#include "gpu_sort_exec.h"

/* The store's rows changed wholesale: staging and truncation marks start over. */
static void
ForgetTruncated(GpuSortState *st)
{
	st->staged_batches = 0;
	st->truncated = NULL; /* it lived in the store's memory */
	st->truncated_bytes = 0;
	st->any_truncated = false;
}

/*
 * Sorts every row now in the store (on the device when healthy, else on the
 * CPU backend) and returns their order, ties resolved; the device sort is
 * released.
 */
static uint32 *
SortStoredRows(GpuSortState *st)
{
	uint32 *sorted;
	uint8 *ties = NULL;

	if (st->store()->nrows > UINT32_MAX)
		ereport(
			ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("gpuops: GpuSort cannot hold more than %u rows in memory", UINT32_MAX),
			 errhint("Lower gpuops.host_memory_limit so that sorted runs are spilled sooner.")));
	sorted = (uint32 *) MemoryContextAllocHuge(st->store()->cxt,
											   Max(st->store()->nrows, 1) * sizeof(uint32));
	GpuSortStagePending(st, true);
	if (st->healthy)
	{
		GpuopsStatus rc = GpuSortDeviceFinish(st, sorted, &ties);

		if (rc != GPUOPS_OK)
			GpuSortDeviceFailedMidway(st, rc);
	}
	if (!st->healthy)
		GpuSortStoredOnCpu(st, sorted, &ties);
	st->backend_name = st->dev->backend->name;
	GpuSortDeviceRelease(st->dev); /* free device memory before emitting */
	if (ties)
	{
		GpuSortResolveTies(st, sorted, ties);
		pfree(ties);
	}
	st->host_memory = Max(st->host_memory,
						  GpuopsRowStoreMemory(st->store()) +
							  (st->input[0].stage ? GpuStageBytes(st->input[0].stage) : 0));
	return sorted;
}

/*
 * After a compaction the store's rows are the best `bound` so far, in
 * order: the last one's first key becomes the cut, and the source drops
 * every row whose first key sorts after it without copying the row.  On
 * input in random order only about bound * ln(rows / bound) rows pass, so
 * a top-N reads its input at the cost of one key comparison a row, as
 * PostgreSQL's bounded heap does (whose rows are copied before they are
 * compared).
 */
static void
SetCut(GpuSortState *st)
{
	const GpuopsColumnDesc *col = &st->store()->cols[st->keys[0].col];
	Datum d;
	bool isnull;

	if (st->store()->nrows < st->bound || st->input[0].source->cut == NULL)
		return;
	GpuSortEnsureComparators(st);
	d = GpuopsRowStoreDatum(st->store(), st->bound - 1, st->keys[0].col, &isnull);
	MemoryContextReset(st->cut_cxt);
	/*
	 * The store's memory goes at the next compaction: keep a copy, and a
	 * plain one of a toasted value, which every comparison would otherwise
	 * fetch and decompress again.
	 */
	if (!isnull)
	{
		MemoryContext old = MemoryContextSwitchTo(st->cut_cxt);

		if (col->typlen == -1)
			d = PointerGetDatum(pg_detoast_datum_copy((struct varlena *) DatumGetPointer(d)));
		else
			d = datumCopy(d, col->typbyval, col->typlen);
		MemoryContextSwitchTo(old);
	}
	st->cut.value = isnull ? (Datum) 0 : d;
	st->cut.isnull = isnull;
	st->cut.ssup = &st->ssup[0];
	st->cut.active = true;
}

/*
 * Bounded sort (top-N): the store has grown to compact_rows; keep only the
 * best `bound` rows and go on.  The kept rows are staged again (full batches
 * now; the last, partial one when it fills) for the next device sort.
 */
static void
KeepBestRows(GpuSortState *st)
{
	uint32 *order = SortStoredRows(st);

	GpuopsRowStoreKeep(st->store(), order, Min(st->bound, st->store()->nrows), st->scratch);
	ForgetTruncated(st);
	st->compactions++;
	SetCut(st);
	GpuSortStartDevice(st, false);
	GpuSortStagePending(st, false);
}

/*
 * The store holds more than gpuops.host_memory_limit: sort it, write it out
 * as a run (only the first `bound` rows when bounded) and start over.
 */
static void
SpillRun(GpuSortState *st)
{
	uint32 *order = SortStoredRows(st);
	uint64 n = st->bound ? Min(st->bound, st->store()->nrows) : st->store()->nrows;

	GpuSortEnsureComparators(st);
	if (st->spill == NULL)
		st->spill = GpuopsSortRunsCreate(st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
										 st->nkeys, st->key_cols, st->ssup, st->sort_cxt);
	GpuopsRowStorePermute(st->store(), order, n);
	GpuopsSortRunsWrite(st->spill, st->store(), n);
	GpuopsRowStoreReset(st->store());
	ForgetTruncated(st);
	st->spilled_runs = GpuopsSortRunsCount(st->spill);
	st->spilled_bytes = GpuopsSortRunsBytes(st->spill);
	GpuSortStartDevice(st, false);
}

/* With spilled runs: start merging them with the in-memory run. */
static void
BeginSpillMerge(GpuSortState *st)
{
	GpuopsSortRunsBeginMerge(st->spill, st->store(), st->norder, st->bound);
	if (!st->random_access)
		return;
	/* backward scans: keep the merged output in a tuplestore (it spills too) */
	st->replay = tuplestore_begin_heap(true, false, work_mem);
	while (GpuopsSortRunsNext(st->spill, st->replay_slot))
	{
		tuplestore_puttupleslot(st->replay, st->replay_slot);
		CHECK_FOR_INTERRUPTS();
	}
}

static void ForgetSpill(GpuSortState *st);
static void GpuSortExecute(GpuSortState *st);

/*
 * The device failed with rows parked on it, before any went out (and
 * gpuops.cpu_fallback allows): read the input again and sort it on the CPU
 * backend, spilling runs to files as PostgreSQL would.
 */
static void
RedoOnCpu(GpuSortState *st)
{
	GpuSortDeviceRelease(st->dev);
	ForgetSpill(st);
	GpuopsNodeRestartInput(st, 0);
	ForgetTruncated(st);
	st->park_failed = false;
	st->cpu_only = true;
	st->parked_rows = st->parked_bytes = 0;
	st->device_runs = 0;
	st->spilled_runs = 0;
	st->spilled_bytes = 0;
	GpuSortExecute(st);
}

static void
GpuSortExecute(GpuSortState *st)
{
	bool more = st->input[0].stage == NULL;
	uint32 *sorted;
	instr_time t0, t1;

	INSTR_TIME_SET_CURRENT(t0);
	st->healthy = !st->cpu_only;
	st->staged_batches = 0;
	/*
	 * Staged input: the workers read the rows before the device sees them,
	 * so the device starts after them.  Starting it first would wait for
	 * the CUDA context (made on the prewarm thread) before launching them.
	 * The chunks become the store's batches, full ones in place.  A sort
	 * that may park takes them as they come and parks them once past the
	 * host memory limit, freeing them (sort_park.h); otherwise they are not
	 * spilled however large (the planner then offers this plan only when
	 * the estimate fits the limit): their memory is already taken, and only
	 * Gather's shutdown frees it.
	 */
	if (st->input[0].stage != NULL)
	{
		GpuSortParkStreamBegin(st);
		GpuopsNodeCollectStaged(st, 0);
		GpuSortParkStreamEnd(st);
		if (st->park_failed)
			return RedoOnCpu(st);
	}
	if (st->park == NULL)
		GpuSortStartDevice(st, true);
	while (more)
	{
		GpuopsBatch *batch = GpuopsRowStoreOpenBatch(st->store());

		/* fill returns with the batch full, or at the end of the input */
		more = GpuopsNodeFill(st, 0, batch);
		CHECK_FOR_INTERRUPTS();
		if (st->park)
		{
			/* parking: each batch goes to the device as it fills */
			GpuSortParkStore(st, !more);
			if (st->park_failed)
				return RedoOnCpu(st);
			continue;
		}
		GpuSortStagePending(st, !more);
		if (!more)
			break;
		/*
		 * Bounded: compact at the row count, or when the rows outgrow the
		 * memory limit and compacting at least halves them (spilling would
		 * write only `bound` rows of them anyway).
		 */
		if (st->bound > 0 &&
			(st->store()->nrows >= (st->cut.active ? st->compact_rows : st->first_compact_rows) ||
			 (st->store()->nrows >= 2 * st->bound &&
			  GpuopsRowStoreMemory(st->store()) > st->mem_limit)))
			KeepBestRows(st);
		if (GpuopsRowStoreMemory(st->store()) > st->mem_limit)
		{
			/* over the host limit: the rows go to the device, or to files */
			if (!GpuSortParkBegin(st))
				SpillRun(st);
			else if (st->park_failed)
				return RedoOnCpu(st);
		}
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	st->staging_ms += INSTR_TIME_GET_MILLISEC(t1);
	if (st->park)
	{
		GpuSortParkFinish(st);
		if (st->park_failed)
			return RedoOnCpu(st);
		st->norder = st->parked_rows;
		st->runs++;
		st->sorted = true;
		INSTR_TIME_SET_CURRENT(st->emit_start);
		return;
	}

	sorted = SortStoredRows(st);
	st->norder = st->bound ? Min(st->bound, st->store()->nrows) : st->store()->nrows;
	/* rows go out in order: lay the columns out in that order first */
	INSTR_TIME_SET_CURRENT(t0);
	GpuopsRowStorePermute(st->store(), sorted, st->norder);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	st->reorder_ms += INSTR_TIME_GET_MILLISEC(t1);
	pfree(sorted);
	if (st->spill)
		BeginSpillMerge(st);
	st->runs++;
	st->sorted = true;
	st->pos = 0;
	st->eof = false;
	INSTR_TIME_SET_CURRENT(st->emit_start);
}

/* DEBUG1: how long returning the rows took, the nodes above included. */
static void
ReportEmission(GpuSortState *st)
{
	instr_time now;

	if (!message_level_is_interesting(DEBUG1))
		return;
	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, st->emit_start);
	elog(DEBUG1, "GpuSort: " UINT64_FORMAT " rows returned in %.3f ms", st->norder,
		 INSTR_TIME_GET_MILLISEC(now));
}

static TupleTableSlot *
GpuSortNext(ScanState *ss)
{
	GpuSortState *st = (GpuSortState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	uint64 row;

	if (!st->sorted)
		GpuSortExecute(st);
	if (st->park)
	{
		Assert(ScanDirectionIsForward(ss->ps.state->es_direction));
		if (GpuSortParkNext(st, slot))
			return slot;
		if (!st->eof)
			ReportEmission(st);
		st->eof = true;
		return ExecClearTuple(slot);
	}
	if (st->replay)
	{
		/* spilled, with backward scans allowed: read the merged tuplestore */
		if (!tuplestore_gettupleslot(st->replay, ScanDirectionIsForward(ss->ps.state->es_direction),
									 false, st->replay_slot))
			return ExecClearTuple(slot);
		return ExecCopySlot(slot, st->replay_slot);
	}
	if (st->spill)
	{
		Assert(ScanDirectionIsForward(ss->ps.state->es_direction));
		GpuopsSortRunsNext(st->spill, slot);
		return slot;
	}
	if (ScanDirectionIsForward(ss->ps.state->es_direction))
	{
		if (st->pos >= st->norder)
		{
			if (!st->eof)
				ReportEmission(st);
			st->eof = true;
			return ExecClearTuple(slot);
		}
		row = st->pos++;
	}
	else
	{
		/* as tuplesort: after EOF the last row, else the one before the last returned */
		if (st->pos == 0)
			return ExecClearTuple(slot);
		if (st->eof)
			st->eof = false;
		else if (--st->pos == 0)
			return ExecClearTuple(slot);
		row = st->pos - 1;
	}
	/* no prefetch: the permutation laid every column, values too, out in this order */
	GpuopsRowStoreFetchOutput(st->store(), row, slot);
	return slot;
}

static Node *
CreateGpuSortStateImpl(CustomScan *cscan)
{
	GpuSortState *st = NewCustomScanState<GpuSortState>(cscan, &gpu_sort_exec_methods);
	GpuSortPlan *plan = GpuSortReadPlan(cscan->custom_private);

	st->nkeys = plan->nkeys;
	st->bound = (uint64) plan->bound;
	/*
	 * bounded: sort and cut at twice the bound (amortizing each cut over as
	 * many new rows as it keeps), and at least every 4 batches (256K rows)
	 */
	st->compact_rows = Max(2 * st->bound, (uint64) 4 * GPUOPS_BATCH_ROWS);
	/* the first compaction sets the cut: the sooner, the fewer rows copied */
	st->first_compact_rows = Max(2 * st->bound, (uint64) GPUOPS_BATCH_ROWS);
	st->placement = plan->placement;
	for (int k = 0; k < st->nkeys; k++)
	{
		GpuSortKeyInfo *key = &st->keys[k];
		const GpuSortKeyPlan *kp = &plan->keys[k];
		TargetEntry *tle;

		key->col = kp->col;
		key->kind = kp->kind;
		key->descending = kp->descending;
		key->nulls_first = kp->nulls_first;
		key->prefix_only = kp->prefix_only;
		key->sortop = kp->sortop;
		key->collation = kp->collation;
		st->key_cols[k] = key->col;
		tle = (TargetEntry *) list_nth(cscan->custom_scan_tlist, key->col);
		key->bpchar = exprType((Node *) tle->expr) == BPCHAROID;
		st->has_prefix_keys |= key->prefix_only;
		st->has_abbrev_keys |= key->kind == GPUOPS_KEY_NUMERIC_ABBREV ||
			key->kind == GPUOPS_KEY_ABBREV_UNSIGNED;
	}
	if (plan->programs != NIL)
	{
		st->prog_ncols = plan->prog_ncols;
		memcpy(st->prog_cols, plan->prog_cols, sizeof(int) * plan->prog_ncols);
		memcpy(st->prog_types, plan->prog_types, sizeof(Oid) * plan->prog_ncols);
		for (int k = 0; k < st->nkeys; k++)
		{
			List *prog = (List *) list_nth(plan->programs, k);

			if (prog == NIL)
				continue;
			st->keys[k].program = (GpuopsExprProgram *) palloc(sizeof(GpuopsExprProgram));
			DeviceExprProgramFromList(prog, st->keys[k].program);
			st->ncomputed++;
		}
	}
	st->checks = plan->checks;
	pfree(plan);
	return (Node *) st;
}

static void
BeginGpuSortImpl(CustomScanState *node, EState *estate, int eflags)
{
	GpuSortState *st = (GpuSortState *) node;

	/*
	 * The store holds every row (the child never needs to go backward), in
	 * the scan tuple's columns: the child's, then the computed keys.
	 */
	GpuopsNodeBegin(st, estate, eflags, 1, node->ss.ss_ScanTupleSlot->tts_tupleDescriptor);
	/*
	 * Over GpuStage the workers only read rows, and a bounded sort's
	 * workers sort on the CPU: the device budget and the pinned pool are
	 * this process's alone, not a share of them.
	 */
	st->device_shared &= st->placement == GPUSORT_ON_DEVICE;
	/*
	 * A bounded sort planned so sorts its few rows (what passes the cut)
	 * with the CPU backend, in every process or in parallel workers only: it
	 * opens no CUDA context, which would take longer than reading its share.
	 */
	st->primary = st->placement == GPUSORT_ON_HOST ||
			(st->placement == GPUSORT_WORKERS_ON_HOST && IsParallelWorker())
		? gpuops_cpu_device()->sort
		: GpuopsPrimaryDevice()->sort;
	if (st->primary != gpuops_cpu_device()->sort)
		GpuopsNodePrewarm(st, eflags);
	/*
	 * No cut with computed keys: a row dropped unread would never have its
	 * keys computed, where PostgreSQL computes (and may fail on) every one.
	 */
	if (st->bound > 0 && st->ncomputed == 0)
	{
		st->cut.col = st->keys[0].col;
		st->input[0].source->cut = &st->cut;
	}
	if (st->ncomputed > 0)
	{
		List *checks = st->checks;
		int j = 0;

		/* the computed keys are the scan tuple's last columns, filled after the sort */
		GpuopsRowStoreSetInputColumns(st->store(), st->store()->ncols - st->ncomputed);
		for (int k = 0; k < st->nkeys; k++)
		{
			Expr *e;

			if (st->keys[k].program == NULL)
				continue;
			e = (Expr *) copyObject(list_nth(checks, j++));
			fix_opfuncids((Node *) e);
			st->keys[k].check = ExecInitExpr(e, &node->ss.ps);
		}
		st->check_slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(st->input[0].ps),
												&TTSOpsVirtual);
	}
	st->tmp_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuSort staging",
										ALLOCSET_DEFAULT_SIZES);
	st->sort_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuSort", ALLOCSET_DEFAULT_SIZES);
	st->cut_cxt = AllocSetContextCreate(st->sort_cxt, "GpuSort cut", ALLOCSET_SMALL_SIZES);
	st->scratch = ExecAllocTableSlot(&estate->es_tupleTable,
									 node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
									 &TTSOpsVirtual);
	st->replay_slot = ExecAllocTableSlot(&estate->es_tupleTable,
										 node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
										 &TTSOpsMinimalTuple);
	st->mem_limit = GpuopsHostMemoryLimit();
	st->random_access = (eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0;
	st->dev = GpuopsNodeDevice<GpuSortDevice, GpuSortDeviceRelease>(st, estate);
	/*
	 * Parked rows come back as MinimalTuples.  A virtual scan slot (what
	 * PostgreSQL 15 gives a CustomScan) would deform every column of every
	 * row as it goes out; a minimal slot keeps the tuple, and the nodes
	 * above read only the columns they need, as above PostgreSQL's Sort.
	 * Rows from the store still go in as virtual tuples (any slot takes
	 * those).  Swapped only where nothing was compiled against the virtual
	 * slot yet: no qual, no projection; the node's result is then this slot.
	 */
	if (GpuSortMayPark(st) && node->ss.ps.qual == NULL && node->ss.ps.ps_ProjInfo == NULL)
	{
		ExecInitScanTupleSlot(estate, &node->ss, node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
							  &TTSOpsMinimalTuple);
		node->ss.ps.resultops = &TTSOpsMinimalTuple;
	}
}

static TupleTableSlot *
ExecGpuSortImpl(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;

	/*
	 * Sorted rows in memory, nothing to filter or project, no EvalPlanQual
	 * recheck (the usual case): the next row straight from the store,
	 * without ExecScan's per-row checks and context reset.  Emission bounds
	 * a large sort (50M rows at about 60 ns each).
	 */
	if (st->sorted && st->spill == NULL && st->replay == NULL && node->ss.ps.qual == NULL &&
		node->ss.ps.ps_ProjInfo == NULL && node->ss.ps.state->es_epq_active == NULL)
	{
		CHECK_FOR_INTERRUPTS();
		GpuopsNodeCountRun(st);
		return GpuopsNodeCountRow(st, GpuSortNext(&node->ss));
	}
	return GpuopsExecScan<GpuSortNext>(node);
}

/* Closes (deletes) the spilled runs and their replay store. */
static void
ForgetSpill(GpuSortState *st)
{
	if (st->replay)
		tuplestore_end(st->replay);
	st->replay = NULL;
	if (st->spill)
		GpuopsSortRunsClose(st->spill);
	st->spill = NULL;
	GpuSortParkForget(st);
}

static void
EndGpuSortImpl(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;
	instr_time t0, t1;

	INSTR_TIME_SET_CURRENT(t0);
	ForgetSpill(st);
	GpuopsNodeStatDevice(st, st->stats.rows, st->stats.copy_ms, st->stats.kernel_ms,
						 st->stats.bytes_from_device);
	GpuopsNodeEnd(st);
	/* DEBUG1, beside ReportEmission's: only for a sort that ran */
	if (st->runs > 0 && message_level_is_interesting(DEBUG1))
	{
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		elog(DEBUG1, "GpuSort: ended in %.3f ms", INSTR_TIME_GET_MILLISEC(t1));
	}
}

static void
ReScanGpuSortImpl(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;

	GpuopsNodeRescanParams(st);
	if (!st->sorted)
		return;
	/*
	 * Staged rows (and the text values the sorted columns point to) live in
	 * the parallel query's shared memory: read again (GpuopsNodeInputChanged).
	 */
	if (!GpuopsNodeInputChanged(st, 0))
	{
		/* same input: replay the sorted rows */
		st->pos = 0;
		st->eof = false;
		if (st->park)
			GpuSortParkRewind(st);
		else if (st->replay)
			tuplestore_rescan(st->replay);
		else if (st->spill)
			GpuopsSortRunsBeginMerge(st->spill, st->store(), st->norder, st->bound);
		return;
	}
	/* the input changes with the new parameters: sort again */
	GpuSortDeviceRelease(st->dev);
	ForgetSpill(st);
	GpuopsNodeRestartInput(st, 0);
	ForgetTruncated(st);
	st->cut.active = false; /* the new input's rows decide it again */
	st->norder = 0;
	st->sorted = false;
}

const CustomExecMethods gpu_sort_exec_methods = {
	GPUSORT_NAME,
	GuardedBegin<BeginGpuSortImpl>,
	GuardedExec<ExecGpuSortImpl>,
	GuardedEnd<EndGpuSortImpl>,
	GuardedReScan<ReScanGpuSortImpl>,
	NULL, /* MarkPosCustomScan */
	NULL, /* RestrPosCustomScan */
	NULL, /* EstimateDSMCustomScan */
	NULL, /* InitializeDSMCustomScan */
	NULL, /* ReInitializeDSMCustomScan */
	NULL, /* InitializeWorkerCustomScan */
	NULL, /* ShutdownCustomScan */
	GuardedExplain<GpuSortExplain>,
};

const CustomScanMethods gpu_sort_scan_methods = {
	GPUSORT_NAME,
	GuardedCreateState<CreateGpuSortStateImpl>,
};

void
GpuSortRegister(void)
{
	RegisterCustomScanMethods(&gpu_sort_scan_methods);
}
