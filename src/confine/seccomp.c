// SPDX-License-Identifier: Apache-2.0
#include "confine/seccomp.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/err.h"

int seccomp_install(const sc_program *prog, cordon_error *err)
{
    struct sock_fprog fp = {.len = prog->len, .filter = (struct sock_filter *)prog->insns};
    /* No SECCOMP_FILTER_FLAG_SPEC_ALLOW: the kernel keeps its speculative-execution
     * mitigations for the filtered process, as libseccomp's default does. */
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) == 0)
        return 0;
    int e = errno;
    if (e == ENOSYS && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) == 0)
        return 0;
    if (e == EINVAL || e == ENOSYS)
        return err_set(err, CORDON_STAGE_CONFINE, e,
                       "cannot install the seccomp filter: this kernel has no seccomp filters "
                       "(CONFIG_SECCOMP_FILTER); cordon does not run commands without one");
    return err_set(err, CORDON_STAGE_CONFINE, e, "cannot install the seccomp filter");
}

sc_op seccomp_notify_op(uint32_t arch, int nr)
{
    for (size_t i = 0; i < sc_n_notify_calls; i++)
        if (sc_notify_calls[i].arch == arch && sc_notify_calls[i].nr == nr)
            return sc_notify_calls[i].op;
    return SC_OP_NONE;
}

int seccomp_install_cmd(const sc_program *prog, bool listener, cordon_error *err)
{
    struct sock_fprog fp = {.len = prog->len, .filter = (struct sock_filter *)prog->insns};
    long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, listener ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0, &fp);
    if (fd >= 0)
        return (int)fd;
    int e = errno;
    if (e == EBUSY)
        return err_set(err, CORDON_STAGE_CONFINE, e,
                       "cannot install the creation control: this process already runs under another "
                       "seccomp supervisor (a sandbox that is not cordon?), and the kernel allows one per "
                       "process; cordon does not run without it");
    if (e == EINVAL)
        return err_set(err, CORDON_STAGE_CONFINE, e,
                       "cannot install the creation control: this kernel has no seccomp user "
                       "notification (Linux 5.0; cordon needs 5.14 for SECCOMP_ADDFD_FLAG_SEND)");
    return err_set(err, CORDON_STAGE_CONFINE, e, "cannot install the command's seccomp filter");
}

/* seccomp_refuse_setxattr's calls: setxattr, lsetxattr, fsetxattr on the two ABIs a
 * command of this CPU family can call with, and setxattrat (Linux 6.13, one number on
 * every ABI). */
#if defined(__x86_64__)
#define XA_ARCH1 AUDIT_ARCH_X86_64
#define XA_ARCH2 AUDIT_ARCH_I386
static const uint32_t xa_nr1[] = {188, 189, 190, 463}, xa_nr2[] = {226, 227, 228, 463};
#elif defined(__aarch64__)
#define XA_ARCH1 AUDIT_ARCH_AARCH64
#define XA_ARCH2 AUDIT_ARCH_ARM
static const uint32_t xa_nr1[] = {5, 6, 7, 463}, xa_nr2[] = {226, 227, 228, 463};
#else /* a CPU family cordon has no numbers for: the filter is refused (fail closed) */
#define XA_ARCH1 0u
#define XA_ARCH2 0u
static const uint32_t xa_nr1[] = {0, 0, 0, 0}, xa_nr2[] = {0, 0, 0, 0};
#endif

int seccomp_refuse_setxattr(cordon_error *err)
{
    /* 0 arch; 1 ARCH1?; 2 nr; 3 nr & ~x32 bit; 4-11 four tests; 12 allow;
     * 13 ARCH2?; 14 nr; 15-22 four tests; 23 allow */
    if (XA_ARCH1 == 0u)
        return err_set(err, CORDON_STAGE_CONFINE, ENOSYS,
                       "cannot refuse setxattr on this CPU family: the command cannot keep CAP_SETFCAP here");
    struct sock_filter f[24];
    size_t k = 0;
    const struct sock_filter deny = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    const struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    const struct sock_filter load_nr = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, XA_ARCH1, 0, 11);
    f[k++] = load_nr;
    f[k++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~0x40000000u); /* (x32: refused anyway) */
    for (size_t i = 0; i < 4; i++) {
        f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, xa_nr1[i], 0, 1);
        f[k++] = deny;
    }
    f[k++] = allow;
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, XA_ARCH2, 0, 9);
    f[k++] = load_nr;
    for (size_t i = 0; i < 4; i++) {
        f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, xa_nr2[i], 0, 1);
        f[k++] = deny;
    }
    f[k++] = allow;
    struct sock_fprog fp = {.len = (unsigned short)k, .filter = f};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot install the filter that refuses setxattr");
    return 0;
}
