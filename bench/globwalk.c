// SPDX-License-Identifier: Apache-2.0
// globwalk: expand deny globs with cordon's own walker and nothing else (no policy, no
// plan, no sandbox), for bench/globs.sh.
//
// Not part of the meson build: globs.sh compiles it against the static libcordon.a of a
// build directory.  Usage:
//
//   globwalk [--depth N] [--print] PATTERN...
//
// Prints the number of matches (and, with --print, each match, symlinks with their
// target); exits 0, or 1 with cordon's message when the expansion fails closed.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/glob.h"

int main(int argc, char **argv)
{
    glob_walk_opts o = {.max_depth = -1};
    bool print = false;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc)
            o.max_depth = atoi(argv[++i]);
        else if (strcmp(argv[i], "--print") == 0)
            print = true;
        else
            break;
    }
    int n = argc - i;
    if (n <= 0) {
        fprintf(stderr, "usage: globwalk [--depth N] [--print] PATTERN...\n");
        return 2;
    }
    glob_pat **pats = calloc((size_t)n, sizeof *pats);
    const char **roots = calloc((size_t)n, sizeof *roots);
    cordon_error err = {0};
    for (int k = 0; k < n; k++) {
        if (glob_compile(argv[i + k], &pats[k], &err) < 0) {
            fprintf(stderr, "globwalk: %s\n", err.message);
            return 1;
        }
        // The bench's root has no symlinks: its walk_from is canonical already.
        roots[k] = glob_pat_walk_from(pats[k]);
    }
    glob_hits h;
    size_t failed;
    if (glob_expand(pats, roots, (size_t)n, &o, &h, &failed, &err) < 0) {
        fprintf(stderr, "globwalk: %s\n", err.message);
        return 1;
    }
    if (print)
        for (size_t k = 0; k < h.n; k++)
            printf("%s%s%s\n", h.v[k].path, h.v[k].is_link ? " -> " : "",
                   h.v[k].is_link ? (h.v[k].target ? h.v[k].target : "?") : "");
    printf("%zu\n", h.n);
    glob_hits_free(&h);
    for (int k = 0; k < n; k++)
        glob_pat_free(pats[k]);
    free(pats);
    free(roots);
    return 0;
}
