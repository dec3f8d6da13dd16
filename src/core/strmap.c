/* strmap.c — string -> index hash map over arena memory (see strmap.h). */
#include "strmap.h"

#include <stdint.h>
#include <string.h>

/* FNV-1a, then a multiplicative mix so the low bits (the slot) depend on
 * every byte. */
static size_t slot_of(const char *s, size_t cap)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    h *= 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

int strmap_get(const strmap *m, const char *key)
{
    if (!m->cap)
        return -1;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i])
            return -1;
        if (strcmp(m->keys[i], key) == 0)
            return m->vals[i];
    }
}

static void insert(strmap *m, const char *key, int val)
{
    size_t i = slot_of(key, m->cap);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    if (!m->keys[i])
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
}

void strmap_put(strmap *m, arena *a, const char *key, int val)
{
    /* Keep the load at most 1/2; the old tables are left to the arena
     * (geometric growth: at most as much again as the final tables). */
    if (2 * (m->n + 1) > m->cap) {
        strmap old = *m;
        m->cap = old.cap ? 2 * old.cap : 16;
        m->keys = arena_alloc(a, m->cap * sizeof *m->keys);
        m->vals = arena_alloc(a, m->cap * sizeof *m->vals);
        m->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.keys[i])
                insert(m, old.keys[i], old.vals[i]);
    }
    insert(m, key, val);
}
