// SPDX-License-Identifier: Apache-2.0
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first layout of each growable struct: what a caller with size 0 has (for results,
 * 0.2's: 0.2 broke 0.1's layout, doc/api.md). */
#define ERROR_V1_SIZE  (offsetof(cordon_error, message) + sizeof(((cordon_error *)0)->message))
#define RESULT_V1_SIZE (offsetof(cordon_result, pid) + sizeof(int))

/* A message that did not fit: cut it at a character boundary and say so. */
static void mark_truncated(cordon_error *err)
{
    size_t cut = sizeof err->message - 4;
    while (cut > 0 && ((unsigned char)err->message[cut] & 0xC0) == 0x80)
        cut--; /* not inside a UTF-8 sequence */
    memcpy(err->message + cut, "...", 4);
    err->truncated = true;
}

int err_setv(cordon_error *err, cordon_stage stage, int errnum, const char *fmt, va_list ap)
{
    if (!err)
        return -1;
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    err->truncated = false;
    if (n < 0)
        snprintf(err->message, sizeof err->message, "(a message that could not be formatted)");
    else if ((size_t)n >= sizeof err->message)
        mark_truncated(err);
    err->stage = stage;
    err->errnum = errnum;
    err->option[0] = '\0';
    return -1;
}

int(err_opt)(cordon_error *err, cordon_stage stage, int errnum, const char *option, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_setv(err, stage, errnum, fmt, ap);
    va_end(ap);
    if (err && option)
        snprintf(err->option, sizeof err->option, "%s", option);
    return -1;
}

int(err_set)(cordon_error *err, cordon_stage stage, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_setv(err, stage, errnum, fmt, ap);
    va_end(ap);
    return -1;
}

int(err_wrap)(cordon_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    char old[sizeof err->message];
    memcpy(old, err->message, sizeof old);
    int w = snprintf(err->message, sizeof err->message, "%s: %s", prefix, old);
    if (w < 0 || (size_t)w >= sizeof err->message || (size_t)n >= sizeof prefix)
        mark_truncated(err);
    return -1;
}

void err_clear(cordon_error *err)
{
    if (!err)
        return;
    err->stage = CORDON_STAGE_NONE;
    err->errnum = 0;
    err->truncated = false;
    err->option[0] = '\0';
    err->message[0] = '\0';
}

/* How much of a growable struct the caller has: 0 means the first layout; otherwise its
 * size, never more than ours (a size smaller than the first layout is a caller's mistake,
 * and still nothing is written beyond it). */
static size_t caller_size(unsigned size, size_t v1, size_t ours)
{
    if (size == 0)
        return v1;
    return size < ours ? size : ours;
}

void err_export(cordon_error *to, const cordon_error *from)
{
    if (!to || to == from)
        return;
    unsigned size = to->size;
    size_t n = caller_size(size, ERROR_V1_SIZE, sizeof *from);
    memcpy(to, from, n);
    to->size = size;
}

/* A NUL-separated list of n strings, copied. */
static char *list_dup(const char *list, unsigned n)
{
    if (!list || n == 0)
        return NULL;
    const char *end = list;
    for (unsigned i = 0; i < n; i++)
        end += strlen(end) + 1;
    size_t len = (size_t)(end - list);
    char *c = malloc(len);
    if (c)
        memcpy(c, list, len);
    return c;
}

#define COVERS(n, type, field) ((n) >= offsetof(type, field) + sizeof(((type *)0)->field))

void result_export(cordon_result *to, const cordon_result *from)
{
    if (!to || to == from)
        return;
    unsigned size = to->size;
    size_t n = caller_size(size, RESULT_V1_SIZE, sizeof *from);
    memcpy(to, from, n);
    to->size = size;
    /* the lists are the caller's own copies (cordon_result_free), where its layout has them */
    if (COVERS(n, cordon_result, refusals))
        to->refusals = list_dup(from->refusals, from->n_refusals);
    if (COVERS(n, cordon_result, network_refusals))
        to->network_refusals = list_dup(from->network_refusals, from->n_network_refusals);
}

void cordon_result_free(cordon_result *res)
{
    if (!res)
        return;
    size_t n = caller_size(res->size, RESULT_V1_SIZE, sizeof *res);
    if (COVERS(n, cordon_result, refusals)) {
        free(res->refusals);
        res->refusals = NULL;
    }
    if (COVERS(n, cordon_result, network_refusals)) {
        free(res->network_refusals);
        res->network_refusals = NULL;
    }
}

int cordon_error_text(const cordon_error *err, char *buf, size_t n)
{
    if (!err)
        return snprintf(buf, n, "%s", "(no error)");
    const char *msg = err->message[0] ? err->message : "unknown error";
    if (err->errnum) {
        char tmp[128];
        return snprintf(buf, n, "%s: %s", msg, strerror_r(err->errnum, tmp, sizeof tmp)); /* GNU: thread-safe */
    }
    return snprintf(buf, n, "%s", msg);
}

const char *cordon_stage_name(cordon_stage stage)
{
    switch (stage) {
    case CORDON_STAGE_NONE: return "none";
    case CORDON_STAGE_USAGE: return "usage";
    case CORDON_STAGE_SETTINGS: return "settings";
    case CORDON_STAGE_RESOLVE: return "resolve";
    case CORDON_STAGE_PLAN: return "plan";
    case CORDON_STAGE_NAMESPACES: return "namespaces";
    case CORDON_STAGE_ROOT: return "root";
    case CORDON_STAGE_CONFINE: return "confine";
    case CORDON_STAGE_EXEC: return "exec";
    case CORDON_STAGE_SUPERVISE: return "supervise";
    case CORDON_STAGE_LIMITS: return "limits";
    case CORDON_STAGE_WORKSPACE: return "workspace";
    }
    return "unknown";
}
