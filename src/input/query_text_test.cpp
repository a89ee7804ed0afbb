/*
 * query_text_test.cpp
 *    Text tests GpuQuery computes off the device (query_text_test.h).
 *
 * Equality under a deterministic collation is byte equality (varstr_cmp
 * and texteq compare bytes when the collation is deterministic; bpchar's
 * drop trailing blanks first).  LIKE under one compares bytes too
 * (GenericMatchText: literal bytes equal, _ one character, % any run, \
 * escapes the next byte), whatever the collation's locale; it is taken
 * only where the database's encoding is single-byte or UTF-8, whose
 * characters never start inside another's bytes, so that a literal's
 * bytes found after % start a character as they do in PostgreSQL's match.
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "mb/pg_wchar.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
}

#include "query_text_test.h"
#include "text_test.hpp"

static bool
TextType(Oid type)
{
	return type == TEXTOID || type == VARCHAROID || type == BPCHAROID;
}

/* The column under a binary-compatible relabelling (varchar read as text). */
static Var *
TextVar(Node *node)
{
	while (node != NULL && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (node == NULL || !IsA(node, Var) || ((Var *) node)->varlevelsup != 0 ||
		!TextType(((Var *) node)->vartype))
		return NULL;
	return (Var *) node;
}

static bool
DeterministicCollation(Oid collation)
{
	return OidIsValid(collation) && get_collation_isdeterministic(collation);
}

/* Adds a value to an EQ_ANY test; false when the room is spent. */
static bool
AddValue(QueryTextTest *t, Datum value)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
	const char *data = VARDATA_ANY(v);
	size_t n = VARSIZE_ANY_EXHDR(v);
	size_t at = t->off[t->nvalues];

	while (t->trim && n > 0 && data[n - 1] == ' ')
		n--;
	if (t->nvalues >= GPUOPS_QTT_MAX_VALUES || at + n > GPUOPS_QTT_BYTES)
		return false;
	memcpy(t->bytes + at, data, n);
	t->nvalues++;
	t->off[t->nvalues] = (uint16) (at + n);
	return true;
}

/* LIKE's pattern compiled into t; false where PostgreSQL would raise an error or the room is spent. */
static bool
CompilePattern(QueryTextTest *t, Datum pattern)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(pattern);
	const char *data = VARDATA_ANY(v);
	size_t n = VARSIZE_ANY_EXHDR(v);
	size_t k = 0;

	if (pg_database_encoding_max_length() > 1 && GetDatabaseEncoding() != PG_UTF8)
		return false;
	t->utf8 = GetDatabaseEncoding() == PG_UTF8;
	for (size_t i = 0; i < n; i++)
	{
		uint8 mark = GPUOPS_QTT_PAT_BYTE;
		char b = data[i];

		if (b == '\\')
		{
			if (i + 1 == n)
				return false; /* "LIKE pattern must not end with escape character" */
			b = data[++i];
		}
		else if (b == '%')
		{
			if (k > 0 && t->pat[k - 1] == GPUOPS_QTT_PAT_ANY)
				continue;
			mark = GPUOPS_QTT_PAT_ANY;
		}
		else if (b == '_')
			mark = GPUOPS_QTT_PAT_ONE;
		if (k >= GPUOPS_QTT_BYTES)
			return false;
		t->bytes[k] = b;
		t->pat[k] = mark;
		k++;
	}
	t->nvalues = 1;
	t->off[1] = (uint16) k;
	return true;
}

bool
QueryTextTestOf(Node *expr, Var **var, QueryTextTest *t)
{
	QueryTextTest local;
	Oid func;
	Oid collation;
	Node *l, *r;
	bool like = false, trim = false, negate = false;

	if (t == NULL)
		t = &local;
	memset(t, 0, sizeof(*t));
	if (expr == NULL)
		return false;
	if (IsA(expr, OpExpr))
	{
		OpExpr *op = (OpExpr *) expr;

		if (list_length(op->args) != 2)
			return false;
		set_opfuncid(op);
		func = op->opfuncid;
		collation = op->inputcollid;
		l = (Node *) linitial(op->args);
		r = (Node *) lsecond(op->args);
	}
	else if (IsA(expr, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *op = (ScalarArrayOpExpr *) expr;

		set_sa_opfuncid(op);
		func = op->opfuncid;
		collation = op->inputcollid;
		l = (Node *) linitial(op->args);
		r = (Node *) lsecond(op->args);
		/* IN is = ANY, NOT IN <> ALL */
		if (op->useOr != (func == F_TEXTEQ || func == F_BPCHAREQ))
			return false;
	}
	else
		return false;

	switch (func)
	{
		case F_TEXTEQ:
			break;
		case F_TEXTNE:
			negate = true;
			break;
		case F_BPCHAREQ:
			trim = true;
			break;
		case F_BPCHARNE:
			trim = negate = true;
			break;
		case F_TEXTLIKE:
		case F_LIKE_TEXT_TEXT:
		case F_BPCHARLIKE:
			like = true;
			break;
		case F_TEXTNLIKE:
		case F_NOTLIKE_TEXT_TEXT:
		case F_BPCHARNLIKE:
			like = negate = true;
			break;
		default:
			return false;
	}
	if (like && !IsA(expr, OpExpr))
		return false;
	if (!DeterministicCollation(collation))
		return false;
	/* the column on the left; = and <> commute */
	*var = TextVar(l);
	if (*var == NULL && !like && IsA(expr, OpExpr))
	{
		Node *tmp = l;

		l = r;
		r = tmp;
		*var = TextVar(l);
	}
	if (*var == NULL || !IsA(r, Const) || ((Const *) r)->constisnull)
		return false;

	t->kind = like ? GPUOPS_QTT_LIKE : GPUOPS_QTT_EQ_ANY;
	t->trim = trim;
	t->negate = negate;
	if (like)
		return TextType(((Const *) r)->consttype) && CompilePattern(t, ((Const *) r)->constvalue);
	if (IsA(expr, OpExpr))
		return TextType(((Const *) r)->consttype) && AddValue(t, ((Const *) r)->constvalue);
	{
		Const *c = (Const *) r;
		Oid elem = get_element_type(c->consttype);
		ArrayType *arr;
		Datum *values;
		bool *nulls;
		int n;
		int16 typlen;
		bool typbyval;
		char typalign;

		if (!TextType(elem))
			return false;
		arr = DatumGetArrayTypeP(c->constvalue);
		get_typlenbyvalalign(elem, &typlen, &typbyval, &typalign);
		deconstruct_array(arr, elem, typlen, typbyval, typalign, &values, &nulls, &n);
		for (int i = 0; i < n; i++)
		{
			if (nulls[i])
				t->null_value = true;
			else if (!AddValue(t, values[i]))
				return false;
		}
	}
	return true;
}

int
QueryTextTestEval(const QueryTextTest *t, const char *data, size_t n) noexcept
{
	return gpuops::text_test_eval(*t, reinterpret_cast<const uint8_t *>(data), n);
}
