/* SPDX-License-Identifier: Apache-2.0
 *
 * The Node package's fast path (node/README.md): libcordon's sessions in the harness's
 * own process, through N-API.  A command's end is watched with a uv_poll on its exit
 * descriptor (a pidfd), on the event loop: nothing blocks, no thread is started.  Its
 * pipes are handed to JavaScript as descriptors of their own (duplicates), which
 * node/index.js turns into streams.  Built by node/build.js at install time; without it
 * the package runs the cordon command line instead.
 *
 * Exports (node/index.js is the only caller):
 *   policyNew() -> policy                     policySet(policy, name, value)
 *   sessionNew(policy) -> session             sessionFree(session)
 *   spawn(session, argv, cwd, env, timeout, keep, flags, onExit) -> [proc, in, out, err]
 *   kill(proc, signal)                        version() -> string
 * onExit(error, result) is called once, from the event loop, when the command and what
 * it left have ended.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cordon.h>
#include <node_api.h>
#include <uv.h>

#define CHECK_NAPI(env, call)                                                        \
    do {                                                                             \
        if ((call) != napi_ok) {                                                     \
            napi_throw_error((env), "ECORDON", "cordon: N-API call failed: " #call); \
            return NULL;                                                             \
        }                                                                            \
    } while (0)

static napi_value throw_cordon(napi_env env, const cordon_error *err)
{
    napi_value msg, e, stage, option, errnum;
    char text[1100];
    snprintf(text, sizeof text, "cordon: %s", err->message[0] ? err->message : "libcordon failed without saying why");
    if (napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &msg) != napi_ok ||
        napi_create_error(env, NULL, msg, &e) != napi_ok)
        return NULL;
    napi_create_string_utf8(env, cordon_stage_name(err->stage), NAPI_AUTO_LENGTH, &stage);
    napi_create_string_utf8(env, err->option, NAPI_AUTO_LENGTH, &option);
    napi_create_int32(env, err->errnum, &errnum);
    napi_set_named_property(env, e, "stage", stage);
    napi_set_named_property(env, e, "option", option);
    napi_set_named_property(env, e, "errno", errnum);
    napi_throw(env, e);
    return NULL;
}

/* A JS string argument as a new C string (NULL for null/undefined when allowed). */
static char *get_string(napi_env env, napi_value v, bool nullable, bool *ok)
{
    napi_valuetype t;
    size_t n = 0;
    *ok = false;
    if (napi_typeof(env, v, &t) != napi_ok)
        return NULL;
    if (nullable && (t == napi_null || t == napi_undefined)) {
        *ok = true;
        return NULL;
    }
    if (t != napi_string || napi_get_value_string_utf8(env, v, NULL, 0, &n) != napi_ok) {
        napi_throw_type_error(env, NULL, "cordon: a string was expected");
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) {
        napi_throw_error(env, NULL, "cordon: out of memory");
        return NULL;
    }
    napi_get_value_string_utf8(env, v, s, n + 1, &n);
    if (strlen(s) != n) {
        free(s);
        napi_throw_type_error(env, NULL, "cordon: a string with a NUL character");
        return NULL;
    }
    *ok = true;
    return s;
}

/* An array of strings as a NULL-terminated vector (NULL for null/undefined). */
static char **get_strv(napi_env env, napi_value v, bool *ok)
{
    napi_valuetype t;
    bool is_array = false;
    uint32_t n = 0;
    *ok = false;
    if (napi_typeof(env, v, &t) != napi_ok)
        return NULL;
    if (t == napi_null || t == napi_undefined) {
        *ok = true;
        return NULL;
    }
    if (napi_is_array(env, v, &is_array) != napi_ok || !is_array || napi_get_array_length(env, v, &n) != napi_ok) {
        napi_throw_type_error(env, NULL, "cordon: an array of strings was expected");
        return NULL;
    }
    char **vec = calloc((size_t)n + 1, sizeof *vec);
    if (!vec) {
        napi_throw_error(env, NULL, "cordon: out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        napi_value e;
        bool eok = false;
        if (napi_get_element(env, v, i, &e) == napi_ok)
            vec[i] = get_string(env, e, false, &eok);
        if (!eok) {
            for (uint32_t j = 0; j < i; j++)
                free(vec[j]);
            free(vec);
            return NULL;
        }
    }
    *ok = true;
    return vec;
}

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static void *get_external(napi_env env, napi_value v)
{
    void *p = NULL;
    if (napi_get_value_external(env, v, &p) != napi_ok || !p)
        napi_throw_type_error(env, NULL, "cordon: not a handle of this addon");
    return p;
}

/* ---- policies ------------------------------------------------------------------------ */

static void policy_finalize(napi_env env, void *data, void *hint)
{
    (void)env, (void)hint;
    cordon_policy_free(data);
}

static napi_value policy_new(napi_env env, napi_callback_info info)
{
    (void)info;
    napi_value out;
    cordon_policy *p = cordon_policy_new();
    if (!p) {
        napi_throw_error(env, NULL, "cordon: out of memory");
        return NULL;
    }
    if (napi_create_external(env, p, policy_finalize, NULL, &out) != napi_ok) {
        cordon_policy_free(p);
        return NULL;
    }
    return out;
}

typedef int (*str_setter)(cordon_policy *, const char *, cordon_error *);
typedef int (*bool_setter)(cordon_policy *, bool, cordon_error *);

static int set_allow(cordon_policy *p, const char *v, cordon_error *e)
{
    return cordon_policy_add_path(p, v, CORDON_ACCESS_WRITE, "node", e);
}
static int set_allow_ro(cordon_policy *p, const char *v, cordon_error *e)
{
    return cordon_policy_add_path(p, v, CORDON_ACCESS_READ, "node", e);
}
static int set_deny(cordon_policy *p, const char *v, cordon_error *e)
{
    return cordon_policy_add_path(p, v, CORDON_ACCESS_NONE, "node", e);
}
static int set_deny_glob(cordon_policy *p, const char *v, cordon_error *e)
{
    return cordon_policy_add_deny_glob(p, v, "node", e);
}
static int set_base(cordon_policy *p, const char *v, cordon_error *e)
{
    cordon_base b;
    return cordon_base_from_string(v, &b, e) < 0 ? -1 : cordon_policy_set_base(p, b, e);
}
static int set_isolation(cordon_policy *p, const char *v, cordon_error *e)
{
    cordon_isolation i;
    return cordon_isolation_from_string(v, &i, e) < 0 ? -1 : cordon_policy_set_isolation(p, i, e);
}
static int set_network(cordon_policy *p, const char *v, cordon_error *e)
{
    cordon_network n;
    return cordon_network_from_string(v, &n, e) < 0 ? -1 : cordon_policy_set_network(p, n, e);
}
static int set_limit_pids(cordon_policy *p, const char *v, cordon_error *e)
{
    return cordon_policy_set_limit_string(p, CORDON_LIMIT_PIDS, v, e);
}
static int set_limit_memory(cordon_policy *p, const char *v, cordon_error *e)
{
    return cordon_policy_set_limit_string(p, CORDON_LIMIT_MEMORY, v, e);
}
static int set_limit_cpu(cordon_policy *p, const char *v, cordon_error *e)
{
    return cordon_policy_set_limit_string(p, CORDON_LIMIT_CPU, v, e);
}

static const struct {
    const char *name;
    str_setter fn;
} str_setters[] = {
    {"workspace", cordon_policy_set_workspace},
    {"base", set_base},
    {"isolation", set_isolation},
    {"allow", set_allow},
    {"allowRo", set_allow_ro},
    {"deny", set_deny},
    {"hide", cordon_policy_add_hidden},
    {"denyGlob", set_deny_glob},
    {"protect", cordon_policy_add_protected},
    {"settings", cordon_policy_load_settings},
    {"dataRoot", cordon_policy_set_data_root},
    {"network", set_network},
    {"allowDomains", cordon_policy_add_allowed_domain},
    {"denyDomains", cordon_policy_add_denied_domain},
    {"addHosts", cordon_policy_add_host},
    {"dnsServers", cordon_policy_add_dns_server},
    {"allowSockets", cordon_policy_add_allowed_socket},
    {"forwardPorts", cordon_policy_add_forwarded_port_string},
    {"publishPorts", cordon_policy_add_published_port_string},
    {"networkLog", cordon_policy_set_network_log},
    {"env", cordon_policy_add_env},
    {"keepEnv", cordon_policy_add_keep_env},
    {"cwd", cordon_policy_set_cwd},
    {"timeout", cordon_policy_set_timeout_string},
    {"limitPids", set_limit_pids},
    {"limitMemory", set_limit_memory},
    {"limitCpu", set_limit_cpu},
};

static const struct {
    const char *name;
    bool_setter fn;
} bool_setters[] = {
    {"readOnly", cordon_policy_set_read_only},
    {"strictSettings", cordon_policy_set_strict_settings},
    {"allowUnixSockets", cordon_policy_set_allow_unix_sockets},
    {"clearEnv", cordon_policy_set_clear_env},
    {"proc", cordon_policy_set_proc},
    {"nested", cordon_policy_set_nested},
    {"toolchains", cordon_policy_set_toolchains},
};

/* policySet(policy, name, value): value a string (null: workspace none) or a boolean. */
static napi_value policy_set(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3];
    char name[32];
    size_t n = 0;
    napi_valuetype t;
    cordon_error err = CORDON_ERROR_INIT;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    cordon_policy *p = argc == 3 ? get_external(env, argv[0]) : NULL;
    if (!p)
        return NULL;
    CHECK_NAPI(env, napi_get_value_string_utf8(env, argv[1], name, sizeof name, &n));
    CHECK_NAPI(env, napi_typeof(env, argv[2], &t));
    if (t == napi_boolean) {
        bool v = false;
        CHECK_NAPI(env, napi_get_value_bool(env, argv[2], &v));
        for (size_t i = 0; i < sizeof bool_setters / sizeof *bool_setters; i++)
            if (strcmp(name, bool_setters[i].name) == 0)
                return bool_setters[i].fn(p, v, &err) < 0 ? throw_cordon(env, &err) : NULL;
    } else {
        bool ok = false;
        char *v = get_string(env, argv[2], strcmp(name, "workspace") == 0, &ok);
        if (!ok)
            return NULL;
        for (size_t i = 0; i < sizeof str_setters / sizeof *str_setters; i++) {
            if (strcmp(name, str_setters[i].name) == 0) {
                int rc = str_setters[i].fn(p, v, &err);
                free(v);
                return rc < 0 ? throw_cordon(env, &err) : NULL;
            }
        }
        free(v);
    }
    napi_throw_type_error(env, NULL, "cordon: no such policy setting of that type");
    return NULL;
}

/* ---- sessions ------------------------------------------------------------------------ */

typedef struct session_box {
    cordon_session *s;
} session_box;

static void session_finalize(napi_env env, void *data, void *hint)
{
    (void)env, (void)hint;
    session_box *b = data;
    cordon_session_free(b->s);
    free(b);
}

static napi_value session_new(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value arg, out;
    cordon_error err = CORDON_ERROR_INIT;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
    cordon_policy *p = argc == 1 ? get_external(env, arg) : NULL;
    if (!p)
        return NULL;
    session_box *b = calloc(1, sizeof *b);
    if (!b) {
        napi_throw_error(env, NULL, "cordon: out of memory");
        return NULL;
    }
    if (cordon_session_new(p, &b->s, &err) < 0) {
        free(b);
        return throw_cordon(env, &err);
    }
    if (napi_create_external(env, b, session_finalize, NULL, &out) != napi_ok) {
        cordon_session_free(b->s);
        free(b);
        return NULL;
    }
    return out;
}

/* End the session and everything in it now (the handle stays, empty). */
static napi_value session_free(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value arg;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
    session_box *b = argc == 1 ? get_external(env, arg) : NULL;
    if (!b)
        return NULL;
    cordon_session_free(b->s);
    b->s = NULL;
    return NULL;
}

/* ---- commands ------------------------------------------------------------------------ */

/* A pipe the addon reads itself (spawn's `collect`): its poll, its descriptor, what came. */
typedef struct sink {
    uv_poll_t poll;
    int fd;
    bool on; /* collected */
    char *buf;
    size_t len, cap;
    struct proc_box *box;
} sink;

/* One running command: the libcordon process, the poll on its exit descriptor (and, when
 * collecting, on its pipes), and the JavaScript callback.  Freed when every libuv handle
 * is closed and the JS handle is finalized (refs). */
typedef struct proc_box {
    cordon_proc *c;
    uv_poll_t poll;
    napi_env env;
    napi_ref on_exit;
    napi_async_context async;
    int refs;
    int pending; /* the exit and the collected pipes not yet at their end */
    sink out[2]; /* stdout, stderr (fd -1: not collected) */
    int rc;
    cordon_result res;
    cordon_error err;
} proc_box;

static void proc_unref(proc_box *b)
{
    if (--b->refs > 0)
        return;
    cordon_proc_free(b->c);
    free(b);
}

static void proc_finalize(napi_env env, void *data, void *hint)
{
    (void)env, (void)hint;
    proc_unref(data);
}

static void poll_closed(uv_handle_t *h)
{
    proc_unref(h->data);
}

static void sink_closed(uv_handle_t *h)
{
    sink *k = (sink *)h;
    close(k->fd);
    k->fd = -1;
    proc_unref(k->box);
}

static napi_value int_prop(napi_env env, napi_value obj, const char *name, int v)
{
    napi_value x;
    if (napi_create_int32(env, v, &x) == napi_ok)
        napi_set_named_property(env, obj, name, x);
    return obj;
}

static napi_value result_object(napi_env env, const cordon_result *r)
{
    napi_value o, b, d, list;
    if (napi_create_object(env, &o) != napi_ok)
        return NULL;
    int_prop(env, o, "exitCode", r->exit_code);
    int_prop(env, o, "statusCode", r->status_code);
    int_prop(env, o, "signal", r->signal);
    int_prop(env, o, "pid", r->pid);
    napi_get_boolean(env, r->timed_out, &b);
    napi_set_named_property(env, o, "timedOut", b);
    napi_get_boolean(env, r->started, &b);
    napi_set_named_property(env, o, "started", b);
    napi_create_double(env, r->wall_seconds, &d);
    napi_set_named_property(env, o, "wallSeconds", d);
    napi_create_double(env, (double)r->refused, &d);
    napi_set_named_property(env, o, "refused", d);
    napi_create_array(env, &list);
    const char *s = r->refusals;
    for (unsigned i = 0; s && i < r->n_refusals; i++) {
        napi_value str;
        napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &str);
        napi_set_element(env, list, i, str);
        s += strlen(s) + 1;
    }
    napi_set_named_property(env, o, "refusals", list);
    return o;
}

static napi_value buffer_of(napi_env env, const sink *k)
{
    napi_value v;
    void *data;
    if (!k->on) {
        napi_get_undefined(env, &v);
        return v;
    }
    if (napi_create_buffer_copy(env, k->len, k->buf ? k->buf : "", &data, &v) != napi_ok)
        napi_get_undefined(env, &v);
    return v;
}

/* The command and the collected pipes have all ended: onExit(error, result, out, err). */
static void deliver(proc_box *b)
{
    napi_env env = b->env;
    napi_handle_scope scope;
    const cordon_result *res = &b->res;
    if (napi_open_handle_scope(env, &scope) == napi_ok) {
        napi_value cb, recv, args[4], ignored, msg;
        napi_get_global(env, &recv); /* napi_make_callback wants an object */
        napi_get_null(env, &args[0]);
        args[1] = result_object(env, res);
        args[2] = buffer_of(env, &b->out[0]);
        args[3] = buffer_of(env, &b->out[1]);
        if (b->rc < 0 ||
            (!res->started && res->exit_code != CORDON_EXIT_NOTFOUND && res->exit_code != CORDON_EXIT_NOEXEC)) {
            char text[1100];
            snprintf(text, sizeof text, "cordon: %s", b->err.message);
            napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &msg);
            napi_create_error(env, NULL, msg, &args[0]);
            napi_value stage;
            napi_create_string_utf8(env, cordon_stage_name(b->err.stage), NAPI_AUTO_LENGTH, &stage);
            napi_set_named_property(env, args[0], "stage", stage);
        }
        if (napi_get_reference_value(env, b->on_exit, &cb) == napi_ok)
            napi_make_callback(env, b->async, recv, cb, 4, args, &ignored);
        napi_delete_reference(env, b->on_exit);
        napi_async_destroy(env, b->async);
        napi_close_handle_scope(env, scope);
    }
    cordon_result_free(&b->res);
    for (int i = 0; i < 2; i++) {
        free(b->out[i].buf);
        b->out[i].buf = NULL;
    }
}

static void done_one(proc_box *b)
{
    if (--b->pending == 0)
        deliver(b);
}

static void on_exit_readable(uv_poll_t *h, int status, int events)
{
    (void)status, (void)events;
    proc_box *b = h->data;
    b->res = (cordon_result)CORDON_RESULT_INIT;
    b->err = (cordon_error)CORDON_ERROR_INIT;
    b->rc = cordon_proc_wait(b->c, 0, &b->res, &b->err);
    if (b->rc == 1)
        return; /* not yet: the next readiness */
    uv_poll_stop(h);
    uv_close((uv_handle_t *)h, poll_closed);
    done_one(b);
}

/* Read what the pipe has; at its end (or on an error, which ends it too), stop. */
static void on_sink_readable(uv_poll_t *h, int status, int events)
{
    (void)events;
    sink *k = (sink *)h;
    for (;;) {
        if (status < 0)
            break;
        if (k->cap - k->len < 65536) {
            size_t cap = k->cap ? k->cap * 2 : 65536;
            char *nb = realloc(k->buf, cap);
            if (!nb)
                break; /* out of memory: what came so far */
            k->buf = nb, k->cap = cap;
        }
        ssize_t n = read(k->fd, k->buf + k->len, k->cap - k->len);
        if (n > 0) {
            k->len += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return; /* more later */
        break;      /* the end (0), or an error */
    }
    uv_poll_stop(h);
    uv_close((uv_handle_t *)h, sink_closed);
    done_one(k->box);
}

static int dup_fd(int fd)
{
    return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

/* spawn(session, argv, cwd, env, timeout, keep, flags, collect, onExit)
 *   -> [proc, stdin, stdout, stderr]; with collect, the addon reads stdout and stderr
 *   itself and hands them to onExit as Buffers (their descriptors are then -1 here) */
static napi_value spawn(napi_env env, napi_callback_info info)
{
    size_t argc = 9;
    napi_value a[9], out, v;
    bool ok = false, keep = false, collect = false;
    double timeout = -1;
    uint32_t flags = 0;
    napi_valuetype t;
    cordon_error err = CORDON_ERROR_INIT;
    cordon_cmd cmd = CORDON_CMD_INIT;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, a, NULL, NULL));
    if (argc != 9) {
        napi_throw_type_error(env, NULL, "cordon: spawn takes 9 arguments");
        return NULL;
    }
    session_box *sb = get_external(env, a[0]);
    if (!sb)
        return NULL;
    if (!sb->s) {
        napi_throw_error(env, NULL, "cordon: the session was stopped");
        return NULL;
    }
    char **argvv = get_strv(env, a[1], &ok);
    if (!ok)
        return NULL;
    char *cwd = get_string(env, a[2], true, &ok);
    char **envv = ok ? get_strv(env, a[3], &ok) : NULL;
    if (ok && napi_typeof(env, a[4], &t) == napi_ok && t == napi_number)
        napi_get_value_double(env, a[4], &timeout);
    if (ok)
        ok = napi_get_value_bool(env, a[5], &keep) == napi_ok && napi_get_value_uint32(env, a[6], &flags) == napi_ok &&
             napi_get_value_bool(env, a[7], &collect) == napi_ok;
    proc_box *b = ok ? calloc(1, sizeof *b) : NULL;
    if (!b || !argvv || !argvv[0]) {
        free_strv(argvv), free(cwd), free_strv(envv), free(b);
        if (ok)
            napi_throw_type_error(env, NULL, "cordon: the command is a non-empty array of strings");
        return NULL;
    }
    cmd.cwd = cwd;
    cmd.env = envv;
    cmd.keep = keep;
    if (timeout >= 0) {
        cmd.has_timeout = true;
        cmd.timeout = timeout;
    }
    int rc = cordon_session_spawn_cmd(sb->s, argvv, flags, &cmd, &b->c, &err);
    free_strv(argvv), free(cwd), free_strv(envv);
    if (rc < 0) {
        free(b);
        return throw_cordon(env, &err);
    }
    b->env = env;
    b->refs = 2; /* the poll handle and the JS handle */
    int fds[3] = {dup_fd(cordon_proc_stdin(b->c)), dup_fd(cordon_proc_stdout(b->c)), dup_fd(cordon_proc_stderr(b->c))};
    /* ours is the only writer of stdin: closing it is the command's EOF */
    if (fds[0] >= 0)
        cordon_proc_close_stdin(b->c, NULL);
    uv_loop_t *loop = NULL;
    napi_value name;
    if (napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &b->poll, cordon_proc_exit_fd(b->c)) != 0 ||
        napi_create_reference(env, a[8], 1, &b->on_exit) != napi_ok ||
        napi_create_string_utf8(env, "cordon.exec", NAPI_AUTO_LENGTH, &name) != napi_ok ||
        napi_async_init(env, NULL, name, &b->async) != napi_ok) {
        for (int i = 0; i < 3; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        cordon_proc_free(b->c);
        free(b);
        napi_throw_error(env, NULL, "cordon: cannot watch the command's end on the event loop");
        return NULL;
    }
    b->poll.data = b;
    b->pending = 1;
    for (int i = 0; i < 2; i++) {
        sink *k = &b->out[i];
        k->fd = -1;
        k->box = b;
        /* uv_poll_init makes the descriptor non-blocking, as on_sink_readable needs */
        if (!collect || fds[i + 1] < 0 || uv_poll_init(loop, &k->poll, fds[i + 1]) != 0)
            continue;
        k->fd = fds[i + 1];
        fds[i + 1] = -1;
        k->on = true;
        b->refs++, b->pending++;
        uv_poll_start(&k->poll, UV_READABLE, on_sink_readable);
    }
    uv_poll_start(&b->poll, UV_READABLE, on_exit_readable);
    CHECK_NAPI(env, napi_create_array_with_length(env, 4, &out));
    CHECK_NAPI(env, napi_create_external(env, b, proc_finalize, NULL, &v));
    napi_set_element(env, out, 0, v);
    for (int i = 0; i < 3; i++) {
        napi_create_int32(env, fds[i], &v);
        napi_set_element(env, out, (uint32_t)i + 1, v);
    }
    return out;
}

static napi_value kill_proc(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value a[2];
    int32_t sig = 0;
    cordon_error err = CORDON_ERROR_INIT;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, a, NULL, NULL));
    proc_box *b = argc == 2 ? get_external(env, a[0]) : NULL;
    if (!b)
        return NULL;
    CHECK_NAPI(env, napi_get_value_int32(env, a[1], &sig));
    napi_value r;
    napi_get_boolean(env, cordon_proc_kill(b->c, sig, &err) == 0, &r);
    return r;
}

static napi_value version(napi_env env, napi_callback_info info)
{
    (void)info;
    napi_value v;
    CHECK_NAPI(env, napi_create_string_utf8(env, cordon_version(), NAPI_AUTO_LENGTH, &v));
    return v;
}

static napi_value init(napi_env env, napi_value exports)
{
    napi_property_descriptor d[] = {
        {"policyNew", NULL, policy_new, NULL, NULL, NULL, napi_default, NULL},
        {"policySet", NULL, policy_set, NULL, NULL, NULL, napi_default, NULL},
        {"sessionNew", NULL, session_new, NULL, NULL, NULL, napi_default, NULL},
        {"sessionFree", NULL, session_free, NULL, NULL, NULL, napi_default, NULL},
        {"spawn", NULL, spawn, NULL, NULL, NULL, napi_default, NULL},
        {"kill", NULL, kill_proc, NULL, NULL, NULL, napi_default, NULL},
        {"version", NULL, version, NULL, NULL, NULL, napi_default, NULL},
    };
    if (napi_define_properties(env, exports, sizeof d / sizeof *d, d) != napi_ok)
        return NULL;
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
