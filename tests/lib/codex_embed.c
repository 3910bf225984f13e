// SPDX-License-Identifier: Apache-2.0
/* A program that embeds libcordon and answers to the name codex-linux-sandbox as Codex's
 * multitool binary answers to it (tests/e2e/test_codex.sh, library_entry_point): under any
 * other name it is its own program, which prints "embedder" and exits 3.  Built against
 * include/cordon.h and libcordon.so only. */
#include <stdio.h>

#include "cordon.h"

int main(int argc, char **argv)
{
    if (cordon_codex_is_helper(argv[0]))
        return cordon_codex_main(argc, argv);
    puts("embedder");
    return 3;
}
