/*
 * query_text_test.h
 *    A test of one text column against constants, which GpuQuery computes
 *    as it reads the row: = or <> a constant, IN or NOT IN a list, LIKE or
 *    NOT LIKE a constant pattern, under a deterministic collation (where
 *    equal means equal bytes).  The fact table's host reader evaluates it
 *    on the bytes of a pinned page, on any thread; the pages form's
 *    deformer (the device, or the CPU twin) on the page's bytes; staging a
 *    dimension on the child's value.  Programs read the result as a bool
 *    column: a word 0 or 1, or NULL where the text is NULL (every function
 *    tested is strict) or the list holds a NULL.
 *
 * Why a column and not a device program: words hold at most 16 bytes of
 * text, and TPC-H's flags and modes are tested in filters that also read
 * `l_shipinstruct` (25 bytes) or a 2M-row dimension's `p_type`.  A test
 * turns any length into one word, read once.
 */
#ifndef GPUOPS_QUERY_TEXT_TEST_H
#define GPUOPS_QUERY_TEXT_TEST_H

extern "C" {
#include "postgres.h"

#include "nodes/primnodes.h"
}

#include "gpuops_query.h"

/* The engine's (gpuops_query.h): its evaluation is text_test.hpp's, one code for host and device. */
typedef GpuopsQueryTextTest QueryTextTest;

/*
 * Is expr such a test?  Then true, with *var its column (a Var of text,
 * varchar or bpchar) and, when t is not NULL, *t filled.  Backend only
 * (reads the catalog: collations, arrays).
 */
extern bool QueryTextTestOf(Node *expr, Var **var, QueryTextTest *t);

/* The test on a value's bytes (a varlena's data, n bytes): 1, 0 or -1 for NULL.  Pure. */
extern int QueryTextTestEval(const QueryTextTest *t, const char *data, size_t n) noexcept;

#endif /* GPUOPS_QUERY_TEXT_TEST_H */
