// SPDX-License-Identifier: Apache-2.0
/* Resource limits in the policy: --limit-pids, --limit-memory, --limit-cpu and the
 * settings keys limitPids, limitMemory, limitCpu.  Only values here; supervise/limits.c
 * decides at run time how they are enforced. */
#include "policy/policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"

/* pids.max cannot exceed PID_MAX_LIMIT (2^22), and cordon adds its own PID 1. */
#define PIDS_MAX   4194303ULL
#define MEMORY_MIN (1ULL << 20)
#define MEMORY_MAX (1ULL << 60)
#define CPU_MAX    31536000ULL /* a year, as --timeout */

const char *limit_name(cordon_limit which)
{
    switch (which) {
    case CORDON_LIMIT_PIDS: return "pids";
    case CORDON_LIMIT_MEMORY: return "memory";
    case CORDON_LIMIT_CPU: return "cpu";
    }
    return "?";
}

const char *limit_option(cordon_limit which)
{
    switch (which) {
    case CORDON_LIMIT_PIDS: return "limitPids";
    case CORDON_LIMIT_MEMORY: return "limitMemory";
    case CORDON_LIMIT_CPU: return "limitCpu";
    }
    return "";
}

static bool known(cordon_limit which)
{
    return which == CORDON_LIMIT_PIDS || which == CORDON_LIMIT_MEMORY || which == CORDON_LIMIT_CPU;
}

int limit_check(cordon_limit which, unsigned long long v, cordon_error *err)
{
    if (!known(which))
        return err_set(err, CORDON_STAGE_USAGE, 0, "unknown limit %d", (int)which);
    if (v == 0)
        return 0;
    switch (which) {
    case CORDON_LIMIT_PIDS:
        if (v > PIDS_MAX)
            return err_opt(err, CORDON_STAGE_USAGE, 0, "limitPids", "%llu is more than %llu processes", v, PIDS_MAX);
        break;
    case CORDON_LIMIT_MEMORY:
        if (v < MEMORY_MIN)
            return err_opt(err, CORDON_STAGE_USAGE, 0, "limitMemory",
                           "%llu bytes is less than 1M; nothing can run in that", v);
        if (v > MEMORY_MAX)
            return err_opt(err, CORDON_STAGE_USAGE, 0, "limitMemory", "%llu bytes is more than 1024 petabytes", v);
        break;
    case CORDON_LIMIT_CPU:
        if (v > CPU_MAX)
            return err_opt(err, CORDON_STAGE_USAGE, 0, "limitCpu", "%llu is more than a year (31536000 CPU seconds)",
                           v);
        break;
    }
    return 0;
}

/* Decimal digits only (no sign, no space, no 0x), into *out; false on anything else or
 * overflow.  *end is the first byte after the digits. */
static bool digits(const char *s, unsigned long long *out, const char **end)
{
    unsigned long long v = 0;
    const char *c = s;
    for (; *c >= '0' && *c <= '9'; c++) {
        unsigned d = (unsigned)(*c - '0');
        if (v > (~0ULL - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    *end = c;
    return c != s;
}

int limit_parse(cordon_limit which, const char *s, unsigned long long *out, cordon_error *err)
{
    if (!known(which))
        return err_set(err, CORDON_STAGE_USAGE, 0, "unknown limit %d", (int)which);
    const char *opt = limit_option(which);
    const char *what = which == CORDON_LIMIT_PIDS     ? "a whole number of processes, e.g. 100"
                       : which == CORDON_LIMIT_MEMORY ? "a size: bytes, or a number with K, M, G or T "
                                                        "(powers of 1024), e.g. 512M or 2G"
                                                      : "a whole number of CPU seconds, e.g. 60";
    if (!s || !*s)
        return err_opt(err, CORDON_STAGE_USAGE, 0, opt, "empty value; give %s", what);
    unsigned long long v = 0;
    const char *end = s;
    if (!digits(s, &v, &end))
        return err_opt(err, CORDON_STAGE_USAGE, 0, opt, "'%s' is not %s", s, what);
    if (which == CORDON_LIMIT_MEMORY && *end) {
        static const char units[] = "KMGT";
        const char *u = strchr(units, *end >= 'a' && *end <= 'z' ? *end - 'a' + 'A' : *end);
        /* "512M", "512m", "512MiB", "512MB": all powers of 1024, as ulimit and cgroups do. */
        if (!u || !(end[1] == '\0' || strcmp(end + 1, "B") == 0 || strcmp(end + 1, "iB") == 0))
            return err_opt(err, CORDON_STAGE_USAGE, 0, opt, "'%s' is not %s", s, what);
        unsigned shift = 10 * (unsigned)(u - units + 1);
        if (v > (MEMORY_MAX >> shift))
            return err_opt(err, CORDON_STAGE_USAGE, 0, opt, "'%s' is more than 1024 petabytes", s);
        v <<= shift;
        end += strlen(end);
    }
    if (*end)
        return err_opt(err, CORDON_STAGE_USAGE, 0, opt, "'%s' is not %s", s, what);
    if (v == 0)
        return err_opt(err, CORDON_STAGE_USAGE, 0, opt, "'%s' is not %s (at least 1)", s, what);
    if (limit_check(which, v, err) < 0)
        return -1;
    *out = v;
    return 0;
}

void limit_format(cordon_limit which, unsigned long long v, char *buf, size_t n)
{
    switch (which) {
    case CORDON_LIMIT_PIDS: snprintf(buf, n, "%llu", v); return;
    case CORDON_LIMIT_CPU: snprintf(buf, n, "%llu s", v); return;
    case CORDON_LIMIT_MEMORY: {
        static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
        unsigned i = 0;
        while (i + 1 < sizeof unit / sizeof *unit && v >= 1024 && v % 1024 == 0) {
            v /= 1024;
            i++;
        }
        snprintf(buf, n, "%llu %s", v, unit[i]);
        return;
    }
    }
    snprintf(buf, n, "%llu", v);
}

int cordon_policy_set_limit(cordon_policy *p, cordon_limit which, unsigned long long value, cordon_error *err)
{
    if (!p)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "no policy given (NULL)");
    if (limit_check(which, value, err) < 0)
        return -1;
    p->limits.v[which] = value;
    p->limits_set |= 1u << which;
    return 0;
}

int cordon_policy_set_limit_string(cordon_policy *p, cordon_limit which, const char *s, cordon_error *err)
{
    unsigned long long v = 0;
    if (limit_parse(which, s, &v, err) < 0)
        return -1;
    return cordon_policy_set_limit(p, which, v, err);
}
