#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_set(cordon_error *err, cordon_stage stage, int errnum, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    if (n < 0)
        err->message[0] = '\0';
    if (errnum != 0) {
        size_t len = strlen(err->message);
        if (len < sizeof err->message)
            snprintf(err->message + len, sizeof err->message - len, ": %s", strerror(errnum));
    }
    err->stage = stage;
    err->errnum = errnum;
    return -1;
}

int err_wrap(cordon_error *err, const char *fmt, ...)
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
    size_t pl = strlen(prefix);
    if (pl + 2 >= sizeof err->message)
        pl = sizeof err->message - 3;
    memcpy(err->message, prefix, pl);
    memcpy(err->message + pl, ": ", 2);
    size_t room = sizeof err->message - pl - 2;
    size_t ol = strnlen(old, room - 1);
    memcpy(err->message + pl + 2, old, ol);
    err->message[pl + 2 + ol] = '\0';
    return -1;
}

void err_clear(cordon_error *err)
{
    if (!err)
        return;
    err->stage = CORDON_STAGE_NONE;
    err->errnum = 0;
    err->message[0] = '\0';
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
    }
    return "unknown";
}
