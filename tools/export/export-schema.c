/*
 * export-schema.c - the descriptions of the export's tables, expanded from
 * export-schema.h: what both back ends create, and what
 * analyzer/EXPORT.md documents.
 */
#include "export-schema.h"

#define XT_COLUMN(t, name, type, what) { #name, XT_##type, what },
#define XT_COLUMN_LIST(NAME, id, what)                                 \
	static const struct xt_column id##_cols[] = { XT_COLUMNS_##id( \
		XT_COLUMN) };                                          \
	_Static_assert(XT_##id##_n_cols <= XT_MAX_COLUMNS,             \
		       #NAME " has more columns than a row holds");
XT_TABLES(XT_COLUMN_LIST)

#define XT_TABLE(NAME, id, what) \
	[XT_##id] = { #NAME, what, id##_cols, XT_##id##_n_cols },
const struct xt_table xt_tables[XT_N_TABLES] = { XT_TABLES(XT_TABLE) };
