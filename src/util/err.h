// SPDX-License-Identifier: Apache-2.0
/* One error convention everywhere: a function that can fail returns -1 (or NULL) and
 * fills a caller-provided cordon_error; callers add context with err_wrap() as the
 * error travels up, and the CLI prints it once, prefixed with "cordon: ".
 *
 * The errno of the cause travels in errnum, never in the text: whoever shows the error
 * spells it out (cordon_error_text(), the CLI, the Python binding) or decides not to.
 * A message that does not fit is cut visibly ("..." and .truncated), never silently.
 *
 * Inside the library every cordon_error is the full current layout.  A caller's may be
 * an older, smaller one (cordon_error.size): public entry points that fill a caller's
 * error with more than err_set/err_wrap/err_clear do (which touch only the first
 * layout's fields) build it in a full-size one and hand it out with err_export(). */
#pragma once
#include <stdarg.h>
#include <stddef.h>

#include "cordon.h"

/* Fill err (stage, errno, printf-style message).  Always returns -1 so that
 * `return err_set(...)` reads well.  err may be NULL. */
int err_set(cordon_error *err, cordon_stage stage, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int err_setv(cordon_error *err, cordon_stage stage, int errnum, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
/* err_set, naming the setting the error is about (cordon_error.option). */
int err_opt(cordon_error *err, cordon_stage stage, int errnum, const char *option, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Prefix the message with context: "context: previous message". Returns -1. */
int err_wrap(cordon_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void err_clear(cordon_error *err);
/* err_set, err_opt and err_wrap always return -1; said so where they are called, so that
 * the compiler and clang's analyzer (tests/analyze.sh) follow `if (f() < 0)` after
 * `return err_set(...)` without supposing that an error path returned 0.  (err.c defines
 * them as `int (err_set)(...)`, which the macros leave alone.) */
/* clang-format off: one line each */
#define err_set(...)            \
    ({                          \
        (err_set)(__VA_ARGS__); \
        -1;                     \
    })
#define err_opt(...)            \
    ({                          \
        (err_opt)(__VA_ARGS__); \
        -1;                     \
    })
#define err_wrap(...)            \
    ({                           \
        (err_wrap)(__VA_ARGS__); \
        -1;                      \
    })
/* clang-format on */
/* Copy a full-size error into the caller's, as far as its size allows. */
void err_export(cordon_error *to, const cordon_error *from);
/* The same for results; the lists of refusals are copied (the caller frees its copy with
 * cordon_result_free, and from keeps its own). */
void result_export(cordon_result *to, const cordon_result *from);
