// SPDX-License-Identifier: Apache-2.0
/* Helpers shared by the library's own tests (tests/lib): policies that run anywhere (no
 * workspace, / as the working directory: nothing is made on the host), an output
 * collector, and what the calling process holds (descriptors, children). */
#ifndef CORDON_TESTS_LIB_LIBTEST_H
#define CORDON_TESTS_LIB_LIBTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cordon.h"

/* A policy for the tests: --no-workspace --chdir /, plus a timeout (0: none). */
cordon_policy *test_policy(double timeout);

typedef struct collected {
    char *data;
    size_t len, cap;
    size_t calls;
    long long first_ms; /* when the first chunk arrived (CLOCK_MONOTONIC), or 0 */
    size_t stop_after;  /* return 1 once this many bytes arrived (0: never) */
} collected;
int collect(const char *data, size_t len, void *ctx); /* a cordon_output_fn */
/* The collected output without a sanitizer build's notes (AddressSanitizer warns on the
 * sandbox's stack switch, on the command's stderr); data and len are updated. */
const char *output(collected *c);
void collected_free(collected *c);

long long mono_ms(void);
double mono_s(void);
int count_fds(void);      /* entries of /proc/self/fd */
int count_children(void); /* children of every thread of this process, zombies included */
/* Processes on the host whose command line holds `marker`. */
int count_marked(const char *marker);
/* Wait up to ms for `want` marked processes, read twice 100 ms apart; the last reading.
 * Twice: a process that will exec the marked command may name the marker before its exec
 * (a forked shell, setsid SLEEP...), and in the exec its command line is briefly empty,
 * so one reading of `want` may be followed by one less. */
int await_marked(const char *marker, int want, int ms);
/* Read fd to EOF into a malloc'ed NUL-terminated string (NULL when reading fails),
 * without a sanitizer build's notes. */
char *read_all_fd(int fd);
/* Remove a sanitizer build's notes from buf (len bytes, NUL-terminated); the new length. */
size_t strip_sanitizer_notes(char *buf, size_t len);
/* Write all of s to fd. */
bool write_str(int fd, const char *s);

#endif
