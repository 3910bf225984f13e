// SPDX-License-Identifier: Apache-2.0
/* The public entry points: policy -> resolve -> plan -> (explain | run). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine/confine.h"
#include "confine/landlock.h"
#include "confine/llonly.h"
#include "net/netplan.h"
#include "plan/explain.h"
#include "lib/prepare.h"
#include "lib/status.h"
#include "plan/plan.h"
#include "policy/resolve.h"
#include "plan/env.h"
#include "supervise/limits.h"
#include "sandbox/ns.h"
#include "sandbox/root.h"
#include "supervise/creation.h"
#include "confine/seccomp_table.h"
#include "cordon_build.h"
#include "supervise/outer.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/trace.h"

extern char **environ;

const char *cordon_version(void)
{
    /* a benchmark build is not a sandbox: its version says so wherever it is printed */
    return CORDON_BENCHMARK_BUILD ? CORDON_VERSION " (a benchmark build: " CORDON_BENCHMARK_WHAT "; NOT a sandbox)"
                                  : CORDON_VERSION;
}

char *cordon_quote_path(const char *name)
{
    return path_quote(name);
}

void prepared_free(prepared *x)
{
    plan_free(&x->p);
    resolved_free(&x->r);
}

/* --isolation: namespaces or landlock; auto asks the kernel (in a short-lived child) and
 * says why it chose Landlock. */
static cordon_isolation choose_isolation(const cordon_policy *pol, const char **why)
{
    *why = NULL;
    if (pol->isolation != CORDON_ISOLATION_AUTO)
        return pol->isolation;
    *why = ns_userns_unusable();
    return *why ? CORDON_ISOLATION_LANDLOCK : CORDON_ISOLATION_NAMESPACES;
}

static void warn(const cordon_policy *pol, plan *p, char *owned)
{
    strv_push(&p->warnings, owned);
    if (pol->warn_fn)
        pol->warn_fn(owned, pol->warn_ctx);
}

/* --isolation landlock: the private HOME and TMPDIR the command's environment points at,
 * made on the host now (nothing is mounted), with the ruleset, for a run (ll); for
 * explain (ll NULL), which makes nothing, their names with the random part as
 * LL_DIR_SHOWN says.  *dir is freed by the caller. */
static int prepare_landlock(const cordon_policy *pol, plan *p, llonly *ll, char **dir, cordon_error *err)
{
    *dir = NULL;
    int abi = landlock_abi();
    if (abi > 0 && abi < 6) /* said, not refused: the caller chose this mode on this kernel */
        warn(pol, p,
             xasprintf("--isolation landlock: this kernel's Landlock (ABI %d) cannot scope signals and "
                       "abstract Unix sockets (ABI 6, Linux 6.12): the command can signal your other "
                       "processes%s (doc/security.md)",
                       abi, p->network == CORDON_NETWORK_NONE ? "" : " and reach the host's abstract sockets"));
    if (!ll) {
        *dir = llonly_dir_shown();
        return 0;
    }
#ifdef CORDON_NO_CONFINE
    return err_set(err, CORDON_STAGE_CONFINE, 0,
                   "Landlock isolation: this cordon was built without Landlock and seccomp "
                   "(-Dconfine=false, for benchmarks only)");
#else
    if (llonly_prepare(p, ll, err) < 0)
        return -1;
    *dir = xstrdup(ll->dir);
    return 0;
#endif
}

/* Resolve, plan, and complete the plan with all a run reads besides it (the environment,
 * the network, for a run under --isolation landlock its private directories), then seal
 * it: from here on nothing changes it (plan.h, plan_seal).  ll NULL: for explain, which
 * makes nothing on the host. */
static int prepare_spec(const cordon_policy *pol, prepared *x, llonly *ll, cordon_error *err)
{
    *x = (prepared){0};
    if (!pol)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "no policy given (NULL)");
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot tell the current directory");
    if (pol->strict_settings && pol->settings_unknown.n > 0) /* the setters refuse it first; fail closed */
        return err_opt(err, CORDON_STAGE_SETTINGS, 0, "strictSettings", "strictSettings refuses a settings file: %s",
                       pol->settings_unknown.v[0]);
    const char *home = getenv("HOME");
    host_info host = {.home = home && home[0] == '/' ? home : NULL,
                      .cwd = cwd,
                      .root = "/",
                      .runtime_dir = getenv("XDG_RUNTIME_DIR")};
    if (resolve_policy(pol, &host, &x->r, err) < 0)
        return -1;
    plan_input in = plan_input_of(pol, choose_isolation(pol, &x->isolation_why));
    if (plan_build(&x->r, &in, &x->p, err) < 0) {
        resolved_free(&x->r);
        return -1;
    }
    /* the settings files' unknown top-level keys first, then the rules' warnings */
    if (pol->settings_unknown.n > 0) {
        strv all = {0};
        for (size_t i = 0; i < pol->settings_unknown.n; i++)
            strv_push(&all, xasprintf("%s: ignored, with everything in it (strictSettings makes this an error)",
                                      pol->settings_unknown.v[i]));
        for (size_t i = 0; i < x->p.warnings.n; i++)
            strv_push(&all, steal_pointer(&x->p.warnings.v[i]));
        strv_free(&x->p.warnings);
        x->p.warnings = all;
    }
    if (pol->warn_fn)
        for (size_t i = 0; i < x->p.warnings.n; i++)
            pol->warn_fn(x->p.warnings.v[i], pol->warn_ctx);
    if (x->p.isolation == CORDON_ISOLATION_LANDLOCK) {
        _cleanup_free_ char *dir = NULL;
        if (prepare_landlock(pol, &x->p, ll, &dir, err) < 0) {
            prepared_free(x);
            return -1;
        }
        _cleanup_free_ char *ll_home = path_join(dir, "home"), *ll_tmpdir = path_join(dir, "tmp");
        x->p.env = env_build(pol, environ, ll_home, ll_tmpdir);
    } else
        x->p.env = env_build(pol, environ, x->p.home, x->p.tmpdir);
    if (net_plan_build(pol, &x->p.env, &x->p.net, err) < 0) { /* rewrites the proxy variables */
        prepared_free(x);
        return -1;
    }
    size_t had = x->p.warnings.n;
    net_plan_no_proxy_warnings(pol, &x->p.env, &x->p.net, &x->p.warnings);
    if (pol->warn_fn)
        for (size_t i = had; i < x->p.warnings.n; i++)
            pol->warn_fn(x->p.warnings.v[i], pol->warn_ctx);
    plan_seal(&x->p);
    return 0;
}

int prepare(const cordon_policy *pol, prepared *x, cordon_error *err)
{
    return prepare_spec(pol, x, NULL, err);
}

int prepare_run(const cordon_policy *pol, prepared *x, llonly *ll, cordon_error *err)
{
    *ll = (llonly){.ruleset_fd = -1};
    if (pol && pol->settings_enabled == 0)
        return err_set(err, CORDON_STAGE_SETTINGS, 0,
                       "%s: the settings say \"enabled\": false, but a cordon policy always sandboxes; "
                       "run the command without cordon, or set \"enabled\": true",
                       pol->settings_enabled_where ? pol->settings_enabled_where : "settings");
    TRACE("run");
    if (prepare_spec(pol, x, ll, err) < 0) {
        llonly_free(ll);
        return -1;
    }
    TRACE("planned");
    return 0;
}

/* Does the sandbox get a /proc of its own here, or does it show the caller's (a
 * container that masks parts of /proc)?  -1: the question does not arise (Landlock
 * isolation, --inherit-pid-namespace) or cannot be answered; else root_proc_probe's. */
static int proc_outlook(const plan *p, char *why, size_t n)
{
    if (p->isolation == CORDON_ISOLATION_LANDLOCK || p->inherit_pid_ns)
        return -1;
    return root_proc_probe(why, n);
}

/* --explain --json: the plan as data, and what the text adds after it. */
int prepared_json(const cordon_policy *pol, const prepared *x, char *const argv[], FILE *out, cordon_error *err)
{
    json_t *o = explain_json(pol, &x->r, &x->p, argv);
    for (size_t i = 0; i < x->p.n_ops; i++) {
        if (x->p.ops[i].kind != PLAN_COW)
            continue;
        char why[160] = "";
        bool nested = prctl((int)CORDON_PRCTL, CC_PRCTL_HELLO, 0, 0, 0) == (long)CC_PRCTL_HELLO_OK;
        json_t *h = json_object();
        bool works = root_cow_probe(nested, why, sizeof why);
        json_object_set_new(h, "overlay", json_boolean(works));
        json_object_set_new(h, "why", works ? json_null() : json_string(why));
        json_object_set_new(o, "home_layer", h);
    }
    json_object_set_new(o, "isolation_why", x->isolation_why ? json_string(x->isolation_why) : json_null());
    char pwhy[256] = "";
    int own = proc_outlook(&x->p, pwhy, sizeof pwhy);
    json_t *pk = json_null();
    if (own == 0) { /* a container that masks parts of /proc (sandbox/root.c) */
        pk = json_object();
        json_object_set_new(pk, "why", json_string(pwhy));
        json_object_set_new(pk, "shown", json_boolean(x->p.proc));
        json_object_set_new(pk, "what", json_string(x->p.proc ? ROOT_PROC_KEPT : "--no-proc: the sandbox has none"));
        json_object_set_new(pk, "fix", json_string(ROOT_PROC_FIX));
        /* without Landlock nothing would keep the others' environment closed (pid1.c) */
        json_object_set_new(pk, "runs", json_boolean(!x->p.proc || landlock_abi() > 0));
    }
    json_object_set_new(o, "proc_kept", pk);
    if (x->p.isolation == CORDON_ISOLATION_LANDLOCK) {
        json_t *ll = json_object(), *d = json_array();
        size_t nd;
        const char *const *diff = llonly_differences(&nd);
        for (size_t i = 0; i < nd; i++)
            json_array_append_new(d, json_string(diff[i]));
        json_object_set_new(ll, "creation_control", json_boolean(llonly_supervised(&x->p)));
        json_object_set_new(ll, "scoped", json_boolean(landlock_abi() >= 6));
        json_object_set_new(ll, "differences", d);
        json_object_set_new(o, "landlock_isolation", ll);
    }
    json_object_set_new(o, "confinement", confine_json(&x->p));
    char where[1024] = "";
    cordon_error why = {0};
    bool any = false;
    for (int i = 0; i < LIMITS_N; i++)
        any |= x->p.limits.v[i] != 0;
    json_object_set_new(o, "limits_mechanism",
                        any ? json_string(limits_kind_name(limits_probe(where, sizeof where, &why))) : json_null());
    (void)pol;
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!text)
        return err_set(err, CORDON_STAGE_PLAN, ENOMEM, "cordon_explain: out of memory");
    fprintf(out, "%s\n", text);
    free(text);
    return 0;
}

int prepared_dump(const cordon_policy *pol, const prepared *x, char *const argv[], cordon_error *err)
{
    const char *path = getenv("CORDON_DEBUG_PLAN_JSON");
    if (!path || !path[0])
        return 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return err_set(err, CORDON_STAGE_USAGE, e, "CORDON_DEBUG_PLAN_JSON: cannot write %s", path);
    }
    int r = prepared_json(pol, x, argv, out, err);
    if (fclose(out) != 0 && r == 0)
        r = err_set(err, CORDON_STAGE_USAGE, errno, "CORDON_DEBUG_PLAN_JSON: cannot write %s", path);
    return r;
}

static int explain_to(const cordon_policy *pol, char *const argv[], unsigned flags, FILE *out, cordon_error *err)
{
    prepared x;
    if (prepare(pol, &x, err) < 0)
        return -1;
    if (flags & CORDON_EXPLAIN_JSON) {
        int r = prepared_json(pol, &x, argv, out, err);
        prepared_free(&x);
        return r;
    }
    explain_print(out, pol, &x.r, &x.p, argv);
    for (size_t i = 0; i < x.p.n_ops; i++) {
        if (x.p.ops[i].kind != PLAN_COW)
            continue;
        char why[160] = "";
        bool nested = prctl((int)CORDON_PRCTL, CC_PRCTL_HELLO, 0, 0, 0) == (long)CC_PRCTL_HELLO_OK;
        if (root_cow_probe(nested, why, sizeof why))
            fprintf(out,
                    "\nhome: %s is the real home, read-only underneath, and takes writes in a private layer "
                    "that vanishes at exit (a kernel overlay: it works here)\n",
                    x.p.ops[i].dest);
        else
            fprintf(out,
                    "\nhome: no kernel overlay here (%s): %s is the real home, read-only, and HOME is %s, "
                    "private and empty\n",
                    why, x.p.ops[i].dest, x.p.home_fallback);
    }
    char pwhy[256] = "";
    if (proc_outlook(&x.p, pwhy, sizeof pwhy) == 0) {
        fprintf(out, "\n/proc: %s; %s.  For a /proc of its own: %s\n", pwhy,
                x.p.proc ? ROOT_PROC_KEPT
                         : "--no-proc: the sandbox has none (cordon's supervisor uses the container's)",
                ROOT_PROC_FIX);
        if (x.p.proc && landlock_abi() == 0)
            fprintf(out,
                    "    but this kernel has no Landlock, which that needs: the run is refused (--no-proc runs)\n");
    }
    if (x.p.isolation == CORDON_ISOLATION_LANDLOCK) {
        if (x.isolation_why)
            fprintf(out, "\n--isolation auto chose landlock: %s\n", x.isolation_why);
        llonly ll = {.ruleset_fd = -1, .abi = landlock_abi(), .net_none = pol->network == CORDON_NETWORK_NONE};
        ll.scoped = ll.abi >= 6;
        ll.supervised = llonly_supervised(&x.p);
        if (llonly_grants(&x.p, &ll, err) < 0) {
            llonly_free(&ll);
            prepared_free(&x);
            return -1;
        }
        llonly_explain(out, &ll);
        fprintf(out, "    (the mount plan above is not carried out: there are no namespaces)\n");
        llonly_free(&ll);
    }
    confine_explain(out, &x.p, flags & CORDON_EXPLAIN_VERBOSE);
    limits_explain(out, &x.p.limits);
    prepared_free(&x);
    return 0;
}

/* The text goes into a memory stream: the API hands out strings, not stdio streams (a
 * FILE * ties the caller to this libc's). */
int cordon_explain(const cordon_policy *pol, char *const argv[], unsigned flags, char **text, cordon_error *err)
{
    if (!text)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "cordon_explain: nowhere to put the text (text is NULL)");
    *text = NULL;
    if (flags & ~(unsigned)(CORDON_EXPLAIN_VERBOSE | CORDON_EXPLAIN_JSON))
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "cordon_explain: unknown flags %#x", flags);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return err_set(err, CORDON_STAGE_PLAN, errno, "cordon_explain: cannot make a memory stream");
    int r = explain_to(pol, argv, flags, out, err);
    if (fclose(out) != 0 && r == 0)
        r = err_set(err, CORDON_STAGE_PLAN, errno, "cordon_explain: out of memory");
    if (r < 0) {
        free(buf);
        return -1;
    }
    *text = buf;
    err_clear(err);
    return 0;
}

/* The --status-json document (its file: lib/status.c). */
char *status_document(const cordon_result *res, const cordon_error *setup_err, cordon_error *err)
{
    json_t *o = json_object();
    json_object_set_new(o, "exit_code", json_integer(res->exit_code));
    json_object_set_new(o, "status", res->status_code >= 0 ? json_integer(res->status_code) : json_null());
    json_object_set_new(o, "signal", res->signal ? json_integer(res->signal) : json_null());
    json_object_set_new(o, "timed_out", json_boolean(res->timed_out));
    json_object_set_new(o, "started", json_boolean(res->started));
    bool failed = setup_err && setup_err->stage != CORDON_STAGE_NONE && !res->started;
    json_object_set_new(o, "stage", failed ? json_string(cordon_stage_name(setup_err->stage)) : json_null());
    char why[sizeof setup_err->message + 128] = "";
    if (failed)
        cordon_error_text(setup_err, why, sizeof why);
    json_object_set_new(o, "error", failed ? json_string(why) : json_null());
    json_object_set_new(o, "errno", failed && setup_err->errnum ? json_integer(setup_err->errnum) : json_null());
    json_object_set_new(o, "wall_seconds", json_real(res->wall_seconds));
    json_object_set_new(o, "isolation", json_string(cordon_isolation_name(res->isolation)));
    /* a container that masks parts of /proc: the sandbox shows the container's */
    json_object_set_new(o, "proc_kept", res->proc_kept ? json_string(res->proc_kept) : json_null());
    /* --limit-*: how they were enforced, and which the command ran into (as far as the
     * mechanism tells: a cgroup reports refused forks and OOM kills, rlimits do not). */
    json_t *lim = json_null();
    if (res->limits) {
        lim = json_object();
        json_object_set_new(lim, "mechanism", json_string(res->limits));
        json_t *hit = json_array();
        for (int i = 0; i < LIMITS_N; i++)
            if (res->limits_hit & (1u << i))
                json_array_append_new(hit, json_string(limit_name((cordon_limit)i)));
        json_object_set_new(lim, "exceeded", hit);
    }
    json_object_set_new(o, "limits", lim);
    /* the creation control: how many calls it refused, and the first of them */
    json_object_set_new(o, "refused", json_integer((json_int_t)res->refused));
    json_t *refusals = json_array();
    const char *r = res->refusals;
    for (unsigned i = 0; i < res->n_refusals; i++, r += strlen(r) + 1)
        json_array_append_new(refusals, json_string(r));
    json_object_set_new(o, "refusals", refusals);
    /* --network proxy, --forward-port, --publish-port (src/net): what cordon let through,
     * refused, or could not reach */
    json_t *net = json_null();
    if (res->network_counted) {
        net = json_object();
        json_object_set_new(net, "allowed", json_integer(res->network_allowed));
        json_object_set_new(net, "refused", json_integer(res->network_refused));
        json_object_set_new(net, "failed", json_integer(res->network_failed));
    }
    json_object_set_new(o, "network", net);
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!text)
        err_set(err, CORDON_STAGE_SUPERVISE, ENOMEM, "cannot make the status document");
    char *doc = text ? xasprintf("%s\n", text) : NULL;
    free(text);
    return doc;
}
