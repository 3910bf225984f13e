// SPDX-License-Identifier: Apache-2.0
/* swapper: swap two names back and forth, atomically, as fast as possible.
 *
 *   swapper A B STOPFILE SECONDS
 *
 * renameat2(RENAME_EXCHANGE) of A and B in a loop (A a directory and B a symlink, say),
 * until STOPFILE exists or SECONDS pass; then leaves them as they started. Prints the
 * number of exchanges. Runs on the host, while cordon sets up sandboxes with rules
 * through A. */
#include "esc.h"

#include <linux/fs.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: swapper A B STOPFILE SECONDS\n");
        return 2;
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double limit = atof(argv[4]);
    long n = 0;
    for (;;) {
        if ((n & 255) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if (access(argv[3], F_OK) == 0 ||
                (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > limit)
                break;
        }
        if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) < 0) {
            perror("swapper: renameat2");
            return 1;
        }
        n++;
    }
    if (n % 2)
        syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE), n++;
    printf("%ld\n", n);
    return 0;
}
