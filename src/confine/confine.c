// SPDX-License-Identifier: Apache-2.0
#include "confine/confine.h"

#include <jansson.h>

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
    c->landlock = (landlock_prep){.ruleset_fd = -1};
    if (p->bare) /* bubblewrap's exact mode: capabilities and no_new_privs only */
        return;
    if (p->isolation == CORDON_ISOLATION_LANDLOCK) {
        /* No namespaces: nothing to nest into, no IPC namespace (System V and POSIX
         * queues would be the host's), and without a network namespace of its own,
         * --network none allows TCP sockets only (Landlock refuses them). */
        c->seccomp_mode =
            SC_MODE_NO_NESTED | SC_MODE_HOST_IPC | (p->network == CORDON_NETWORK_NONE ? SC_MODE_TCP_ONLY : 0);
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
    if (!c->enabled || !c->seccomp)
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

void confine_explain(FILE *out, const plan *p, bool verbose)
{
    confine_prep c;
    confine_prepare(&c, p);
    fprintf(out, "\nconfinement\n");
    if (p->keep_caps)
        fprintf(out,
                "  capabilities  CAP_SETFCAP only (ambient, in the sandbox's user namespace; setxattr %s); "
                "no_new_privs; securebits locked\n",
                p->bare ? "allowed: protections off" : "refused");
    else
        fprintf(out, "  capabilities  none (bounding, ambient, inheritable sets cleared); no_new_privs; "
                     "securebits locked\n");
    if (c.enabled && !c.seccomp) {
        fprintf(out, "  seccomp       none: cordon's protections are off (bubblewrap's exact mode)\n");
        fprintf(out, "  landlock      none: cordon's protections are off (bubblewrap's exact mode)\n");
        confine_prep_free(&c);
        return;
    }
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
            : p->no_nested                            ? "refused (--no-nested): no new user namespaces, no mount API"
                           : "allowed: the command may build sandboxes inside (only ever stricter)");
    size_t refused = 0;
    for (size_t i = 0; i < sc_n_rules; i++)
        refused += sc_rule_applies(&sc_rules[i], c.seccomp_mode);
    if (!verbose) {
        fprintf(out,
                "  seccomp       %u instructions for %s; %zu calls refused (`cordon explain --verbose` "
                "lists them, doc/seccomp.md says why)\n",
                c.seccomp->len, sc_arches, refused);
    } else {
        fprintf(out, "  seccomp       %u instructions for %s; refused (EPERM unless noted):\n", c.seccomp->len,
                sc_arches);
        for (size_t i = 0; i < sc_n_rules; i++) {
            const sc_rule *r = &sc_rules[i];
            if (!sc_rule_applies(r, c.seccomp_mode))
                continue;
            fprintf(out, "    %s%s\n", r->what, r->errnum == EPERM ? "" : " (ENOSYS)");
        }
    }
    if (sc_skipped[0])
        fprintf(out, "    (not filtered: libseccomp did not know %s when cordon was built)\n", sc_skipped);
    if (p->isolation != CORDON_ISOLATION_LANDLOCK)
        fprintf(out, "  landlock      %s\n", ll);
    for (size_t i = 0; i < c.landlock.n_rules; i++)
        fprintf(out, "    %-7s %s\n", ll_class_name(c.landlock.rules[i].cls), c.landlock.rules[i].path);
    confine_prep_free(&c);
}

struct json_t *confine_json(const plan *p)
{
    confine_prep c;
    confine_prepare(&c, p);
    json_t *o = json_object();
    json_object_set_new(o, "capabilities", json_string(p->keep_caps ? "CAP_SETFCAP" : "none"));
    json_object_set_new(o, "no_new_privs", json_true());
    json_object_set_new(o, "nesting",
                        json_string(p->isolation == CORDON_ISOLATION_LANDLOCK ? "refused (landlock isolation)"
                                    : p->no_nested                            ? "refused"
                                                                              : "allowed"));
    if (!c.enabled || !c.seccomp) {
        json_object_set_new(o, "seccomp", json_null());
        json_object_set_new(o, "landlock", json_null());
        confine_prep_free(&c);
        return o;
    }
    json_t *sc = json_object();
    json_object_set_new(sc, "instructions", json_integer(c.seccomp->len));
    json_object_set_new(sc, "arches", json_string(sc_arches));
    json_t *refused = json_array();
    for (size_t i = 0; i < sc_n_rules; i++) {
        const sc_rule *r = &sc_rules[i];
        if (!sc_rule_applies(r, c.seccomp_mode))
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "call", json_string(r->what));
        json_object_set_new(e, "errno", json_string(r->errnum == EPERM ? "EPERM" : "ENOSYS"));
        json_array_append_new(refused, e);
    }
    json_object_set_new(sc, "refused", refused);
    json_object_set_new(o, "seccomp", sc);
    char ll[512];
    landlock_describe(&c.landlock, ll, sizeof ll);
    json_t *lo = json_object();
    json_object_set_new(lo, "description", json_string(ll));
    json_t *rules = json_array();
    for (size_t i = 0; i < c.landlock.n_rules; i++) {
        json_t *e = json_object();
        json_object_set_new(e, "class", json_string(ll_class_name(c.landlock.rules[i].cls)));
        json_object_set_new(e, "path", json_string(c.landlock.rules[i].path));
        json_array_append_new(rules, e);
    }
    json_object_set_new(lo, "rules", rules);
    json_object_set_new(o, "landlock", lo);
    confine_prep_free(&c);
    return o;
}
