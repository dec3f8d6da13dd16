/* arena.c — chunked bump allocator (see arena.h for why). */
#include "arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ARENA_CHUNK = 64 * 1024, ARENA_ALIGN = 16 };

typedef struct chunk {
    struct chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
} chunk;

struct arena {
    chunk *head;
};

static chunk *chunk_new(size_t size)
{
    chunk *c = malloc(sizeof *c + size);
    if (!c) {
        /* Host OOM is not an input error; there is nothing sane to return. */
        fprintf(stderr, "xdnn: out of host memory (%zu bytes)\n", size);
        abort();
    }
    c->next = NULL;
    c->used = 0;
    c->size = size;
    return c;
}

arena *arena_create(void)
{
    arena *a = calloc(1, sizeof *a);
    if (!a) {
        fprintf(stderr, "xdnn: out of host memory\n");
        abort();
    }
    return a;
}

void arena_destroy(arena *a)
{
    if (!a)
        return;
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void *arena_alloc(arena *a, size_t size)
{
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (!a->head || a->head->size - a->head->used < size) {
        chunk *c = chunk_new(size > ARENA_CHUNK ? size : ARENA_CHUNK);
        c->next = a->head;
        a->head = c;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += size;
    memset(p, 0, size);
    return p;
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(arena *a, const char *s)
{
    return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

char *arena_vsprintf(arena *a, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        n = 0;
    char *p = arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *arena_sprintf(arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = arena_vsprintf(a, fmt, ap);
    va_end(ap);
    return p;
}

void *arena_grow(arena *a, void *old, size_t old_count, size_t new_cap, size_t elem)
{
    void *p = arena_alloc(a, new_cap * elem);
    if (old && old_count)
        memcpy(p, old, old_count * elem);
    return p;
}
