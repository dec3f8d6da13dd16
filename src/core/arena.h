/* arena.h — bump allocator that owns everything a module allocates.
 *
 * A module (and everything hanging off it: AST, IR, values, strings) lives in
 * one arena, so freeing the module is one call and parse errors cannot leak.
 * Growing arrays (VEC_PUSH) copy into fresh arena memory; the old block is
 * simply abandoned until the arena dies, which is fine at graph sizes.
 */
#ifndef XDNN_ARENA_H
#define XDNN_ARENA_H

#include <stdarg.h>
#include <stddef.h>

typedef struct arena arena;

arena *arena_create(void);
void arena_destroy(arena *a);
/* Zeroed memory aligned for any type.  Aborts only on host OOM. */
void *arena_alloc(arena *a, size_t size);
char *arena_strdup(arena *a, const char *s);
char *arena_strndup(arena *a, const char *s, size_t n);
char *arena_sprintf(arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *arena_vsprintf(arena *a, const char *fmt, va_list ap);
/* Grow an array of `elem` bytes from `old_count` to `new_cap` elements. */
void *arena_grow(arena *a, void *old, size_t old_count, size_t new_cap, size_t elem);

/* Push one element onto an arena-backed vector (ptr, count, cap). */
#define VEC_PUSH(ar, ptr, count, cap, value)                                          \
    do {                                                                              \
        if ((count) == (cap)) {                                                       \
            size_t vec_newcap_ = (cap) ? (size_t)(cap) * 2 : 8;                       \
            (ptr) = arena_grow((ar), (ptr), (size_t)(count), vec_newcap_, sizeof *(ptr)); \
            (cap) = vec_newcap_;                                                      \
        }                                                                             \
        (ptr)[(count)++] = (value);                                                   \
    } while (0)

#endif
