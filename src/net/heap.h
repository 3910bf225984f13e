// SPDX-License-Identifier: Apache-2.0
/* The network helper's own allocator.  The helper is cloned from a possibly multi-threaded
 * library caller without fork(3) (its children send no SIGCHLD), so malloc's locks may be
 * held by a thread that does not exist in the copy: the helper allocates from memory it
 * maps itself.  Power-of-two size classes from 64 bytes to 64 KiB with free lists, larger
 * blocks mapped one by one.  Not thread-safe (the helper has one thread). */
#pragma once
#include <stddef.h>

#define HEAP_CLASSES 11 /* 64 B .. 64 KiB */

typedef struct heap {
    void *free_list[HEAP_CLASSES];
    char *chunk; /* the current chunk being carved */
    size_t chunk_left;
} heap;

/* These never return NULL: out of memory ends the helper (_exit(1)); the run then goes
 * on without its network, the connections reset. */
void *heap_alloc(heap *h, size_t n);
void *heap_calloc(heap *h, size_t n, size_t size);
void *heap_realloc(heap *h, void *p, size_t n);
void heap_free(heap *h, void *p);
