/*
 * plan_fields.h
 *    A node's plan data as a struct, kept in a CustomScan's custom_private.
 *
 * PostgreSQL copies plans (copyObject) and sends them to parallel workers as
 * text (nodeToString, stringToNode), so custom_private must be a tree of
 * nodes.  Each node describes its struct's fields once, in one function
 * that takes a PlanFields: writing, it appends each field to a flat List;
 * reading, it takes them back in the same order, checking each one's kind.
 * Forming and reading a plan can therefore not disagree on an order, and a
 * malformed list is an ERROR, never a misread field.
 */
#ifndef GPUOPS_PLAN_FIELDS_H
#define GPUOPS_PLAN_FIELDS_H

extern "C" {
#include "postgres.h"

#include "nodes/pg_list.h"
}

class PlanFields
{
  public:
	/* for writing: the fields go into a new list (list()) */
	PlanFields();
	/* for reading the list a PlanFields wrote, for node `node` (messages) */
	PlanFields(List *list, const char *node);

	bool reading() const { return pos_ >= 0; }
	List *list() const { return list_; }

	void field(int *v);
	void field(bool *v);
	void field(double *v);
	/* a tree of nodes (List, Expr, ...; NIL allowed), shared, not copied */
	void field(List **v);
	/* an enum stored as its int value */
	template <typename E>
	void enum_field(E *v)
	{
		int i = (int) *v;

		field(&i);
		*v = (E) i;
	}
	/* an Oid (all 32 bits, as an int) */
	void oid_field(Oid *v)
	{
		int i = (int) *v;

		field(&i);
		*v = (Oid) i;
	}
	/* v[0 .. *n), *n at most max (an int list) */
	void ints(int *v, int *n, int max);
	/* reading: every field was taken (call last) */
	void done();

  private:
	Node *next(NodeTag tag);

	List *list_;
	int pos_; /* next field to read; -1 when writing */
	const char *node_;
};

#endif /* GPUOPS_PLAN_FIELDS_H */
