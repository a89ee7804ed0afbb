/*
 * query_text_test.h
 *    A test of one text column against constants, which GpuQuery computes
 *    before the device sees the row: = or <> a constant, IN or NOT IN a
 *    list, LIKE or NOT LIKE a constant pattern, under a deterministic
 *    collation (where equal means equal bytes).  The fact table's reader
 *    evaluates it on the bytes of a pinned page, on any thread; staging a
 *    dimension evaluates it on the child's value.  The device reads the
 *    result as a bool column: a word 0 or 1, or NULL where the text is
 *    NULL (every function tested is strict) or the list holds a NULL.
 *
 * Why not on the device: its words hold at most 16 bytes of text, and
 * TPC-H's flags and modes are tested in filters that also read
 * `l_shipinstruct` (25 bytes) or a 2M-row dimension's `p_type`.  A test
 * turns any length into one word, read once.
 */
#ifndef GPUOPS_QUERY_TEXT_TEST_H
#define GPUOPS_QUERY_TEXT_TEST_H

extern "C" {
#include "postgres.h"

#include "nodes/primnodes.h"
}

#define QUERY_TEXT_TEST_BYTES 256	  /* the constants' bytes, all together */
#define QUERY_TEXT_TEST_MAX_VALUES 32 /* an IN list's values */

typedef enum QueryTextTestKind
{
	QTT_EQ_ANY = 0, /* equal to one of the values (=, IN; negated: <>, NOT IN) */
	QTT_LIKE		/* matches the pattern (LIKE; negated: NOT LIKE) */
} QueryTextTestKind;

/* LIKE's pattern, compiled: per byte what it is */
enum
{
	QTT_PAT_BYTE = 0, /* a literal byte (escaped ones too) */
	QTT_PAT_ANY,	  /* %: any run of characters */
	QTT_PAT_ONE		  /* _: one character */
};

/* Fixed-size and pointer-free: it travels to parallel workers in shared memory. */
typedef struct QueryTextTest
{
	uint8 kind;		 /* QueryTextTestKind */
	bool trim;		 /* bpchar's =: trailing blanks do not count, on either side */
	bool negate;	 /* <>, NOT IN, NOT LIKE */
	bool null_value; /* the list holds a NULL: no match is NULL, not false */
	bool utf8;		 /* LIKE's _ is one UTF-8 character (else one byte) */
	uint8 nvalues;	 /* EQ_ANY: values; LIKE: 1, the pattern */
	uint16 off[QUERY_TEXT_TEST_MAX_VALUES + 1]; /* value v is bytes[off[v] .. off[v + 1]) */
	char bytes[QUERY_TEXT_TEST_BYTES];
	uint8 pat[QUERY_TEXT_TEST_BYTES]; /* LIKE: per pattern byte its QTT_PAT_* */
} QueryTextTest;

/*
 * Is expr such a test?  Then true, with *var its column (a Var of text,
 * varchar or bpchar) and, when t is not NULL, *t filled.  Backend only
 * (reads the catalog: collations, arrays).
 */
extern bool QueryTextTestOf(Node *expr, Var **var, QueryTextTest *t);

/* The test on a value's bytes (a varlena's data, n bytes): 1, 0 or -1 for NULL.  Pure. */
extern int QueryTextTestEval(const QueryTextTest *t, const char *data, size_t n) noexcept;

#endif /* GPUOPS_QUERY_TEXT_TEST_H */
