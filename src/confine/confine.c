#include "confine/confine.h"

#include <errno.h>
#include <string.h>

#include "util/trace.h"

void confine_prepare(confine_prep *c, const plan *p)
{
    *c = (confine_prep){0};
#ifdef CORDON_NO_CONFINE
    (void)p;
#else
    c->enabled = true;
    if (p->isolation == CORDON_ISOLATION_LANDLOCK) {
        /* No namespaces: nothing to nest into, no IPC namespace (System V and POSIX
         * queues would be the host's), and without a network namespace of its own,
         * --network none allows TCP sockets only (Landlock refuses them). */
        c->seccomp_mode = SC_MODE_NO_NESTED | SC_MODE_HOST_IPC |
                          (p->network == CORDON_NETWORK_NONE ? SC_MODE_TCP_ONLY : 0);
        c->seccomp = seccomp_program(c->seccomp_mode);
        c->landlock = (landlock_prep){.ruleset_fd = -1, .abi = landlock_abi()};
        return;
    }
    if (p->no_nested)
        c->seccomp_mode |= SC_MODE_NO_NESTED;
    if (p->net.proxy && !p->net.allow_unix) /* --network proxy (src/net) */
        c->seccomp_mode |= SC_MODE_IP_ONLY;
    c->seccomp = seccomp_program(c->seccomp_mode);
    landlock_prepare(&c->landlock, p, p->no_nested);
#endif
}

void confine_prep_free(confine_prep *c)
{
    landlock_prep_free(&c->landlock); /* never closes ruleset_fd: llonly.c owns it */
    *c = (confine_prep){0};
}

int confine_filter(const confine_prep *c, cordon_error *err)
{
    if (!c->enabled)
        return 0;
    return seccomp_install(c->seccomp, err);
}

int confine_command(const confine_prep *c, cordon_error *err)
{
    if (!c->enabled)
        return 0;
    if (landlock_apply(&c->landlock, err) < 0)
        return -1;
    TRACE("landlock");
    return 0;
}

void confine_explain(FILE *out, const plan *p)
{
    confine_prep c;
    confine_prepare(&c, p);
    fprintf(out, "\nconfinement\n");
    fprintf(out, "  capabilities  none (bounding, ambient, inheritable sets cleared); no_new_privs; "
                 "securebits locked\n");
    if (!c.enabled) {
        fprintf(out, "  seccomp       none: compiled out (-Dconfine=false, for benchmarks only)\n");
        fprintf(out, "  landlock      none: compiled out (-Dconfine=false, for benchmarks only)\n");
        confine_prep_free(&c);
        return;
    }
    char ll[512];
    landlock_describe(&c.landlock, ll, sizeof ll);
    fprintf(out, "  nesting       %s\n",
            p->isolation == CORDON_ISOLATION_LANDLOCK ? "refused (--isolation landlock)"
            : p->no_nested ? "refused (--no-nested): no new user namespaces, no mount API"
                           : "allowed: the command may build sandboxes inside (only ever stricter)");
    fprintf(out, "  seccomp       %u instructions for %s; refused (EPERM unless noted):\n", c.seccomp->len,
            sc_arches);
    for (size_t i = 0; i < sc_n_rules; i++) {
        const sc_rule *r = &sc_rules[i];
        if (!sc_rule_applies(r, c.seccomp_mode))
            continue;
        fprintf(out, "    %s%s\n", r->what, r->errnum == EPERM ? "" : " (ENOSYS)");
    }
    if (sc_skipped[0])
        fprintf(out, "    (not filtered: libseccomp did not know %s when cordon was built)\n", sc_skipped);
    if (p->isolation != CORDON_ISOLATION_LANDLOCK)
        fprintf(out, "  landlock      %s\n", ll);
    for (size_t i = 0; i < c.landlock.n_rules; i++)
        fprintf(out, "    %-7s %s\n", ll_class_name(c.landlock.rules[i].cls), c.landlock.rules[i].path);
    confine_prep_free(&c);
}
