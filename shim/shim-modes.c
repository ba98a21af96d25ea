/*
 * shim-modes.c - the pointer modes of the objects a library's scalars
 * depend on (a handle, an operation's descriptor), and the scale types
 * where an object holds the scalars' type (an operation's descriptor),
 * as learned from the calls that create, set and destroy them.
 *
 * A call whose scalars lie in host or device memory as a pointer mode
 * says (trace/FORMAT.md, code `m`) must know the mode before it reads a
 * scalar: reading a device address on the host could crash the program.
 * Asking the library on every call (a handle's getter, a descriptor's
 * attribute) cost such a call about as much as the rest of its recording
 * (tests/bench/BENCHMARKS.md); so the wrappers of the calls a description
 * names (`[[pointer_mode]]` `created_by`, `setter`, `forgotten_by`) keep
 * the mode here, and it is asked of the library only for an object this
 * table does not hold.
 *
 * What is held is only ever what the library was told: an object enters
 * when a wrapped call created it, or initialized it in the program's
 * memory (in the library's default mode), its mode changes only when a
 * wrapped setter succeeded for it, and it leaves before a wrapped call
 * that destroys or re-initializes it, and when a setter fails or is given
 * what cannot be read. An object the table never saw created (one created
 * before the shim was loaded, one whose bytes the program copied) stays
 * out of it, whatever is set on it, so it is asked of the library on
 * every call. These wrappers run whether or not the call is recorded.
 * A call made from inside another library's call (cuBLAS's of cuBLASLt's
 * typed matmuls) is given that library's objects, which it makes and sets
 * where no wrapper sees, perhaps at an address the table holds for one of
 * the program's: the generated wrappers ask those every time.
 *
 * A scale type (`[[scale_type]]`) is kept as a mode is, and asked of the
 * library alike for an object not held: a call reads its scalars at the
 * type's size, and records the type.
 *
 * One word per slot, direct-mapped by address and kind: the object's
 * address (48 bits; others are never held), which `[[pointer_mode]]` or
 * `[[scale_type]]` it is of, and the value plus one (0: empty). A
 * creation takes its slot, evicting the object there, which is then asked
 * of the library again. Nothing is locked: a setter or a destroy changes a
 * word only by compare-and-swap against the object it is for, so it never
 * touches another's.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "shim-runtime.h"

_Atomic uint64_t dt_mode_slots[DT_MODE_SLOTS];

/* The word for obj of kind in mode, or 0 where it cannot be held. */
static uint64_t entry(unsigned kind, const void *obj, int32_t mode)
{
	uint64_t key = dt_mode_key(kind, obj);

	if (!key || mode < 0 || mode > 254)
		return 0;
	return key | (uint64_t)(mode + 1);
}

void dt_mode_learn(unsigned kind, const void *obj, int32_t mode)
{
	uint64_t e = entry(kind, obj, mode);

	if (e)
		atomic_store_explicit(dt_mode_slot(kind, obj), e,
				      memory_order_release);
	else
		dt_mode_forget(kind, obj);
}

/* The word in s becomes e, if s holds the object key is for: a change by
 * compare-and-swap against that object, never another's. */
static void replace_held(_Atomic uint64_t *s, uint64_t key, uint64_t e)
{
	uint64_t old = atomic_load_explicit(s, memory_order_relaxed);

	while (key && (old & ~(uint64_t)DT_MODE_MASK) == key &&
	       !atomic_compare_exchange_weak_explicit(s, &old, e,
						      memory_order_release,
						      memory_order_relaxed))
		;
}

void dt_mode_update(unsigned kind, const void *obj, int32_t mode)
{
	uint64_t e = entry(kind, obj, mode);

	/* only an object held already: one not seen created may be
	 * anywhere, copied or initialized where no wrapper sees it */
	if (e)
		replace_held(dt_mode_slot(kind, obj), dt_mode_key(kind, obj),
			     e);
	else
		dt_mode_forget(kind, obj);
}

void dt_mode_forget(unsigned kind, const void *obj)
{
	replace_held(dt_mode_slot(kind, obj), dt_mode_key(kind, obj), 0);
}
