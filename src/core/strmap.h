/* strmap.h — a string -> index map for name lookups (tensors, params).
 *
 * Open addressing with linear probing over keys that live elsewhere (arena
 * strings, never copied or freed here); the tables themselves are arena
 * memory, so a map needs no destroy.  Lookups were linear scans, which made
 * a 40k-node graph take seconds; this keeps them O(1) whatever the size.
 * A zeroed strmap is an empty map.
 */
#ifndef XDNN_STRMAP_H
#define XDNN_STRMAP_H

#include "arena.h"

#include <stddef.h>

typedef struct strmap {
    const char **keys; /* NULL = empty slot */
    int *vals;
    size_t cap, n;     /* cap: 0 or a power of two */
} strmap;

/* The value stored for key, or -1. */
int strmap_get(const strmap *m, const char *key);
/* Store key -> val (val >= 0), replacing an earlier value.  `key` must
 * outlive the map. */
void strmap_put(strmap *m, arena *a, const char *key, int val);

#endif
