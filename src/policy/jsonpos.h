// SPDX-License-Identifier: Apache-2.0
/* Line numbers for values in JSON text.
 *
 * jansson reports positions only for syntax errors, not for the values it returns, yet
 * a settings error ("settings.json:4: unknown key ...") and each rule's origin need a
 * line.  This walker re-reads the raw text (which jansson has already accepted) and
 * follows a key path to the value it names.  Object keys are compared after decoding
 * their escapes, so "sandb\u006fx" is found as "sandbox". */
#pragma once
#include <stddef.h>

/* One step of a key path: an object member (key != NULL) or an array element. */
typedef struct jsonpos_step {
    const char *key; /* decoded member name, or NULL for an array element */
    size_t index;    /* 0-based element index when key is NULL */
} jsonpos_step;

/* clang-format off: an initializer on one line */
#define JSONPOS_KEY(k) ((jsonpos_step){.key = (k), .index = 0})
/* clang-format on */
#define JSONPOS_INDEX(i) ((jsonpos_step){.key = NULL, .index = (i)})

/* The 1-based line of what path[0..n) names: for a member, the line of its key; for an
 * element, the line where the element starts; for n == 0, the top-level value.
 * Returns 0 when the path does not exist in the text. */
int jsonpos_line(const char *text, size_t len, const jsonpos_step *path, size_t n);

/* For the array that path[0..n) names, store the line of element i in lines[i] for
 * every i < count (0 for elements that do not exist).  One pass over the text, so
 * numbering every element of a large array stays linear.  Returns the number of
 * elements found (at most count), or 0 when the path does not name an array. */
size_t jsonpos_array_lines(const char *text, size_t len, const jsonpos_step *path, size_t n, int *lines, size_t count);
