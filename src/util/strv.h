// SPDX-License-Identifier: Apache-2.0
/* Small growable arrays and string helpers; allocation failure aborts (xmalloc style:
 * a sandbox that cannot allocate a few bytes cannot do anything useful). */
#pragma once
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grow *arr (elements of size `size`) so that it holds at least n+1 elements. */
void grow(void *arr, size_t *cap, size_t n, size_t size);

/* NULL-terminated string vectors. */
typedef struct strv {
    char **v;
    size_t n, cap;
} strv;
void strv_push(strv *s, char *owned);
void strv_free(strv *s);
/* Does s hold a string equal to x? */
bool strv_contains(const strv *s, const char *x);
/* The one of choices[n] that word is most likely a typo of, or NULL when none is close. */
const char *closest_word(const char *word, const char *const *choices, size_t n);
