/*
 * trace-records.c - descriptions of the record types, expanded from
 * dt-records.h: field names, types, offsets and sizes for generic printers,
 * the reader's size checks and the test that FORMAT.md matches the code.
 */
#include <stddef.h>
#include <string.h>

#include "dt-trace.h"

#define SIZE_u8  1
#define SIZE_u16 2
#define SIZE_u32 4
#define SIZE_u64 8
#define SIZE_i32 4
#define SIZE_i64 8

/* No record struct may contain padding: its size must be the header plus
 * the sum of its fields, so that the C struct is the byte layout. */
#define FIELD_SIZE_(R, type, name) +SIZE_##type
#define CHECK_NO_PADDING_(id, NAME, name, tail)                             \
	_Static_assert(sizeof(struct dt_rec_##name) ==                      \
			       sizeof(struct dt_rec_hdr)                    \
				       DT_FIELDS_##name(FIELD_SIZE_, name), \
		       "struct dt_rec_" #name " has padding");
DT_RECORD_TYPES(CHECK_NO_PADDING_)
_Static_assert(sizeof(struct dt_rec_hdr) == 8, "record header is 8 bytes");
_Static_assert(sizeof(struct dt_file_header) == 40, "file header size");

#define FIELD_DESC_(rec, type, fname) \
	{ #fname, #type, offsetof(struct dt_rec_##rec, fname), SIZE_##type },
#define FIELDS_(id, NAME, name, tail)                         \
	static const struct dt_field_desc fields_##name[] = { \
		{ "type", "u16", 0, 2 },                      \
		{ "reserved", "u16", 2, 2 },                  \
		{ "size", "u32", 4, 4 },                      \
		DT_FIELDS_##name(FIELD_DESC_, name)           \
	};
DT_RECORD_TYPES(FIELDS_)

static const struct dt_rec_desc rec_descs[] = {
#define DESC_(id, NAME, name, tail)            \
	[id] = { id,                           \
		 #NAME,                        \
		 sizeof(struct dt_rec_##name), \
		 DT_TAIL_##tail,               \
		 fields_##name,                \
		 sizeof(fields_##name) / sizeof(fields_##name[0]) },
	DT_RECORD_TYPES(DESC_)
#undef DESC_
};

const struct dt_rec_desc *dt_rec_describe(uint16_t type)
{
	if (type >= sizeof(rec_descs) / sizeof(rec_descs[0]) ||
	    !rec_descs[type].name)
		return NULL;
	return &rec_descs[type];
}

uint64_t dt_field_get(const void *rec, const struct dt_field_desc *f)
{
	const unsigned char *p = (const unsigned char *)rec + f->offset;
	uint64_t v = 0;

	memcpy(&v, p, f->size); /* little-endian host */
	if (f->type[0] == 'i' && f->size < 8 && (v >> (f->size * 8 - 1)) & 1)
		v |= ~0ull << (f->size * 8); /* sign-extend */
	return v;
}

uint16_t dt_rec_tail_at[DT_REC_TYPE_COUNT];
uint16_t dt_rec_len_at[DT_REC_TYPE_COUNT];

/* The tables come from the record descriptions, before main(). */
__attribute__((constructor)) static void tail_tables(void)
{
	for (uint16_t t = 0; t < DT_REC_TYPE_COUNT; t++) {
		const struct dt_rec_desc *d = dt_rec_describe(t);
		if (!d || d->tail == DT_TAIL_NONE)
			continue;
		/* `len` is the last fixed field of every record type with a
		 * tail, a u32 (test-format-doc checks) */
		dt_rec_len_at[t] = d->fields[d->n_fields - 1].offset;
		dt_rec_tail_at[t] = (uint16_t)d->fixed;
	}
}
