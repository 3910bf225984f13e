#include "confine/seccomp.h"

#include <errno.h>
#include <linux/seccomp.h>
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
