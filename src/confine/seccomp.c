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
