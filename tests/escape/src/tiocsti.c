// SPDX-License-Identifier: Apache-2.0
/* tiocsti: push input into the terminal on descriptor 0 (CVE-2017-5226).
 *
 * Reports whether descriptor 0 is a terminal (the positive control: the test did give the
 * command the caller's terminal), whether it is our controlling terminal, whether
 * /dev/tty opens, then TIOCSTI of "x" with the plain request number and of "y" with the
 * request number carrying high bits (0x100005412: the kernel reads the request as 32 bits,
 * so a filter that compares 64 bits misses it, CVE-2019-10063). */
#include "esc.h"

#include <sys/ioctl.h>
#include <termios.h>

int main(void)
{
    report("isatty", isatty(0) ? 0 : -1);
    pid_t sid;
    report("ctty_sid", ioctl(0, TIOCGSID, &sid));
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    report("open_dev_tty", fd);
    if (fd >= 0)
        close(fd);
    char x = 'x', y = 'y';
    report("tiocsti", ioctl(0, TIOCSTI, &x));
    report("tiocsti_high_bits", syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | (1UL << 32), &y));
    return 0;
}
