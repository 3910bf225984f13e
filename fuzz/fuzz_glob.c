// SPDX-License-Identifier: Apache-2.0
/* libFuzzer harness for the deny-glob matcher (src/policy/glob.h): the input is a pattern,
 * then NUL-separated paths to match against it.  The walker, which reads the host's
 * file system, is left out.
 *
 * Invariants beyond the sanitizers':
 *   - a pattern without glob characters matches its own static prefix;
 *   - on "simple" patterns and paths (letters, digits, ".", "-", "_", "/" and "*" only,
 *     no "**" component, no "//", no trailing "/"), the matcher agrees with fnmatch(3)
 *     with FNM_PATHNAME, which is what "*" means there. */
#include <fnmatch.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/glob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool simple(const char *s, bool stars)
{
    size_t n = strlen(s);
    if (n < 2 || s[0] != '/' || s[n - 1] == '/' || strstr(s, "//"))
        return false;
    for (const char *c = s; *c; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
                  *c == '-' || *c == '_' || *c == '/' || (stars && *c == '*');
        if (!ok)
            return false;
    }
    /* no "**", "." or ".." as a whole component */
    for (const char *c = s; c && *c; c = strchr(c + 1, '/')) {
        const char *e = strchr(c + 1, '/');
        size_t len = e ? (size_t)(e - c - 1) : strlen(c + 1);
        if ((len == 2 && strncmp(c + 1, "**", 2) == 0) || (len == 1 && c[1] == '.') ||
            (len == 2 && strncmp(c + 1, "..", 2) == 0) || len > 255)
            return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    const char *pattern = buf;
    size_t plen = strlen(pattern);

    cordon_error err = {0};
    (void)glob_has_magic(pattern);
    if (glob_check_syntax(pattern, &err) < 0 && !err.message[0]) {
        fprintf(stderr, "glob_check_syntax refused without a message\n");
        __builtin_trap();
    }
    glob_pat *g = NULL;
    err = (cordon_error){0};
    if (glob_compile(pattern, &g, &err) < 0) {
        if (!err.message[0]) {
            fprintf(stderr, "glob_compile refused without a message\n");
            __builtin_trap();
        }
        free(buf);
        return 0;
    }
    (void)glob_pat_text(g);
    (void)glob_pat_walk_from(g);
    const char *prefix = glob_pat_prefix(g);
    if (glob_pat_literal(g) && pattern[plen - 1] != '/' && !glob_pat_match(g, prefix)) {
        fprintf(stderr, "literal pattern \"%s\" does not match its own prefix \"%s\"\n", pattern, prefix);
        __builtin_trap();
    }
    bool simple_pattern = simple(pattern, true);
    for (size_t off = plen + 1; off <= size; off += strlen(buf + off) + 1) {
        const char *path = buf + off;
        bool m = glob_pat_match(g, path);
        if (simple_pattern && simple(path, false)) {
            bool want = fnmatch(pattern, path, FNM_PATHNAME) == 0;
            if (m != want) {
                fprintf(stderr, "\"%s\" against \"%s\": glob says %d, fnmatch says %d\n", pattern, path, m, want);
                __builtin_trap();
            }
        }
    }
    glob_pat_free(g);
    free(buf);
    return 0;
}
