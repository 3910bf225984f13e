// SPDX-License-Identifier: Apache-2.0
#include "net/heap.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIN_SHIFT 6 /* 64 bytes */
#define CHUNK     (1u << 20)

/* Every block starts with a header saying how large it is (its class, or its mapping's
 * size): 16 bytes, so that what follows keeps max_align_t's alignment. */
typedef struct block {
    size_t size;   /* usable bytes: the class's, or the mapping's */
    size_t mapped; /* 0: from a class; else the mapping's length */
} block;
#define HDR 16

static __attribute__((noreturn)) void out_of_memory(void)
{
    static const char msg[] = "cordon: the network helper ran out of memory\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

static int class_of(size_t n)
{
    int c = 0;
    size_t s = (size_t)1 << MIN_SHIFT;
    while (s < n + HDR) {
        s <<= 1;
        c++;
    }
    return c;
}

void *heap_alloc(heap *h, size_t n)
{
    int c = class_of(n);
    if (c >= HEAP_CLASSES) {
        size_t len = (n + HDR + 4095) & ~(size_t)4095;
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            out_of_memory();
        block *b = m;
        b->size = len - HDR;
        b->mapped = len;
        return (char *)m + HDR;
    }
    size_t bs = (size_t)1 << (MIN_SHIFT + c);
    block *b = h->free_list[c];
    if (b) {
        h->free_list[c] = *(void **)((char *)b + HDR);
    } else {
        if (h->chunk_left < bs) {
            void *m = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED)
                out_of_memory();
            h->chunk = m; /* what was left of the last chunk is too small for this class */
            h->chunk_left = CHUNK;
        }
        b = (block *)h->chunk;
        h->chunk += bs;
        h->chunk_left -= bs;
    }
    b->size = bs - HDR;
    b->mapped = 0;
    return (char *)b + HDR;
}

void *heap_calloc(heap *h, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        out_of_memory();
    void *p = heap_alloc(h, n * size);
    memset(p, 0, n * size);
    return p;
}

void heap_free(heap *h, void *p)
{
    if (!p)
        return;
    block *b = (block *)((char *)p - HDR);
    if (b->mapped) {
        munmap(b, b->mapped);
        return;
    }
    int c = class_of(b->size);
    *(void **)p = h->free_list[c];
    h->free_list[c] = b;
}

void *heap_realloc(heap *h, void *p, size_t n)
{
    if (!p)
        return heap_alloc(h, n);
    block *b = (block *)((char *)p - HDR);
    if (n <= b->size)
        return p;
    void *q = heap_alloc(h, n);
    memcpy(q, p, b->size);
    heap_free(h, p);
    return q;
}
