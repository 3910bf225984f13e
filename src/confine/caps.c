// SPDX-License-Identifier: Apache-2.0
#include "confine/caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/err.h"

int caps_drop_all(cordon_error *err)
{
    return caps_drop_all_but(0, err);
}

int caps_drop_all_but(uint64_t permitted, cordon_error *err)
{
    /* --isolation landlock, not root: no namespace, no capability to drop, and none to
     * lock the securebits or the bounding set with (no_new_privs keeps file
     * capabilities from granting any on exec). */
    struct __user_cap_header_struct get = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct have[2] = {{0}};
    if (syscall(SYS_capget, &get, have) == 0 && !have[0].permitted && !have[1].permitted && !have[0].effective &&
        !have[1].effective && !have[0].inheritable && !have[1].inheritable)
        return 0;
    /* Root inside must not regain capabilities on exec: lock the securebits first
     * (needs CAP_SETPCAP, which we still hold in the user namespace). */
    unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                         SECBIT_KEEP_CAPS_LOCKED;
    if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot lock the securebits");
    for (unsigned long cap = 0;; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break; /* past the last capability this kernel knows */
            return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot drop capability %lu from the bounding set", cap);
        }
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot clear the ambient capabilities");
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2] = {{0}};
    data[0].permitted = (uint32_t)permitted;
    data[1].permitted = (uint32_t)(permitted >> 32);
    if (syscall(SYS_capset, &hdr, data) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot drop capabilities");
    return 0;
}

int set_no_new_privs(cordon_error *err)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot set no_new_privs");
    return 0;
}

int caps_keep_ambient(uint64_t keep, cordon_error *err)
{
    /* As caps_drop_all_but, but `keep` stays in the bounding, permitted, effective and
     * inheritable sets and is raised in the ambient set, which is what an exec keeps
     * (SECBIT_NOROOT stops uid 0 from getting the rest back); then no ambient
     * capability can be raised any more. */
    unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                         SECBIT_KEEP_CAPS_LOCKED;
    if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot lock the securebits");
    for (unsigned long cap = 0;; cap++) {
        if (cap < 64 && (keep & (1ULL << cap)))
            continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break;
            return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot drop capability %lu from the bounding set", cap);
        }
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot clear the ambient capabilities");
    /* CAP_SETPCAP stays until the securebits are locked again, at the end */
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2] = {{0}};
    uint64_t with = keep | (1ULL << CAP_SETPCAP);
    for (int i = 0; i < 2; i++) {
        data[i].permitted = data[i].effective = (uint32_t)(with >> (32 * i));
        data[i].inheritable = (uint32_t)(keep >> (32 * i));
    }
    if (syscall(SYS_capset, &hdr, data) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot drop capabilities");
    for (unsigned long cap = 0; cap < 64; cap++)
        if ((keep & (1ULL << cap)) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
            return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot keep capability %lu for the command", cap);
    if (prctl(PR_SET_SECUREBITS, bits | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot lock the ambient capabilities");
    for (int i = 0; i < 2; i++)
        data[i].permitted = data[i].effective = data[i].inheritable = (uint32_t)(keep >> (32 * i));
    if (syscall(SYS_capset, &hdr, data) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot drop capabilities");
    return 0;
}
