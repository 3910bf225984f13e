// SPDX-License-Identifier: Apache-2.0
/* PID 1's last steps before it supervises, taken by the sandbox's PID 1 of a run
 * (pid1.c) and of a session (src/session/pid1.c) alike: the check of the creation
 * control's listener, and the lock-down (launch.h). */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <linux/capability.h>
#include <linux/seccomp.h>

#include "confine/caps.h"
#include "supervise/launch.h"
#include "util/err.h"
#include "util/fdutil.h"

int pid1_check_listener(int listener, cordon_error *err)
{
    /* The creation control hands new descriptors back with SECCOMP_ADDFD_FLAG_SEND
     * (Linux 5.14): without it, fail closed before the command does anything.  A
     * notification id that does not exist says ENOENT where the flag is known. */
    struct seccomp_notif_addfd probe = {.id = 0, .flags = 1u << 1 /* SEND */, .srcfd = 0};
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &probe) < 0 && errno == EINVAL)
        return err_set(err, CORDON_STAGE_CONFINE, EINVAL,
                       "this kernel cannot hand descriptors back to a supervised process "
                       "(SECCOMP_ADDFD_FLAG_SEND, Linux 5.14): cordon's creation control needs it "
                       "and cordon does not run without it");
    /* Linux 6.6: the thread and PID 1 hand the CPU to each other for every call
     * instead of waking each other up across CPUs (gVisor asked for it); older
     * kernels say EINVAL, which only costs time. */
    (void)ioctl(listener, SECCOMP_IOW(4, __u64) /* SECCOMP_IOCTL_NOTIF_SET_FLAGS */,
                1ULL /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP */);
    return 0;
}

int pid1_lock_down(launch *l, const int *extra, size_t n, cordon_error *err)
{
    /* The reaper keeps nothing the command could use: no capabilities (CAP_SYS_PTRACE
     * only in the permitted set, raised for reading the command's memory), not dumpable
     * (so not ptrace-able, /proc/1 not readable), no descriptors but its own. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "PR_SET_DUMPABLE");
    if (caps_drop_all_but(l->cc ? 1ULL << CAP_SYS_PTRACE : 0, err) < 0 || set_no_new_privs(err) < 0)
        return -1;
    int keep[24];
    size_t nk = launch_supervise_fds(l, keep);
    for (size_t i = 0; i < n && nk < sizeof keep / sizeof keep[0]; i++)
        keep[nk++] = extra[i];
    if (close_fds_except(keep, nk) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot close PID 1's descriptors");
    umask(077);
    return 0;
}
