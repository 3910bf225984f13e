/* One error convention everywhere: a function that can fail returns -1 (or NULL) and
 * fills a caller-provided cordon_error; callers add context with err_wrap() as the
 * error travels up, and the CLI prints it once, prefixed with "cordon: ". */
#pragma once
#include "cordon.h"

/* Fill err (stage, errno, printf-style message; ": strerror(errnum)" is appended when
 * errnum is not 0).  Always returns -1 so that `return err_set(...)` reads well. */
int err_set(cordon_error *err, cordon_stage stage, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prefix the message with context: "context: previous message". Returns -1. */
int err_wrap(cordon_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void err_clear(cordon_error *err);
