// SPDX-License-Identifier: Apache-2.0
// The compiled form of a deny glob, shared by the matcher (glob.c) and the walker
// (globwalk.c) and by nothing else: components, and the NFA step over them.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/glob.h"

typedef enum gc_kind { GC_LITERAL, GC_WILD, GC_STARSTAR } gc_kind;

typedef struct gcomp {
    gc_kind kind;
    char *text; // LITERAL: the name, unescaped; WILD: the component as written
} gcomp;

struct glob_pat {
    char *text;
    char *prefix;
    char *walk_from;
    gcomp *c;
    size_t n, cap;
    size_t walk;   // index of the first component below walk_from
    bool literal;  // no glob character at all
    bool dir_only; // a trailing '/'
    uint64_t wild; // components that need their directory listed
};

#define BIT(i) ((uint64_t)1 << (i))

// Add the components a "**" can skip to without consuming a name.
uint64_t glob_closure(const glob_pat *g, uint64_t s);
// The states after consuming one name (NUL-terminated).  BIT(n) set: a match.
uint64_t glob_step(const glob_pat *g, uint64_t s, const char *name);
