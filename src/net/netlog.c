// SPDX-License-Identifier: Apache-2.0
#include "net/netlog.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct out {
    char *p;
    size_t n, cap;
} out;

static void put(out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n && o->n + 1 < o->cap; i++)
        o->p[o->n++] = s[i];
    o->p[o->n] = '\0';
}

static void put_str(out *o, const char *s)
{
    put(o, s, strlen(s));
}

/* A JSON string, or null; the host and reason may hold what the command sent. */
static void put_json(out *o, const char *s)
{
    if (!s) {
        put_str(o, "null");
        return;
    }
    put_str(o, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char esc[8];
        if (*c == '"' || *c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*c;
            put(o, esc, 2);
        } else if (*c < 0x20 || *c == 0x7f) {
            snprintf(esc, sizeof esc, "\\u%04x", *c);
            put_str(o, esc);
        } else if (*c >= 0x80) {
            put_str(o, "\\ufffd"); /* not necessarily UTF-8: keep the line valid JSON */
        } else {
            put(o, (const char *)c, 1);
        }
    }
    put_str(o, "\"");
}

size_t netlog_format(const netlog_entry *e, long long unix_ms, char *buf, size_t n)
{
    out o = {.p = buf, .cap = n};
    if (n == 0)
        return 0;
    buf[0] = '\0';
    /* UTC by hand: gmtime_r(3) takes the time-zone lock, which a copy of a multi-threaded
     * process may find held (Howard Hinnant's civil_from_days) */
    long long secs = unix_ms / 1000, days = secs / 86400, sod = secs % 86400;
    long long z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    long long d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9, y = yoe + era * 400 + (m <= 2);
    char t[64];
    snprintf(t, sizeof t, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03dZ", y, m, d, sod / 3600, sod / 60 % 60,
             sod % 60, (int)(unix_ms % 1000));
    put_str(&o, "{\"time\":");
    put_json(&o, t);
    put_str(&o, ",\"kind\":");
    put_json(&o, e->kind);
    put_str(&o, ",\"host\":");
    put_json(&o, e->host);
    put_str(&o, ",\"port\":");
    if (e->port) {
        char p[16];
        snprintf(p, sizeof p, "%u", e->port);
        put_str(&o, p);
    } else {
        put_str(&o, "null");
    }
    put_str(&o, ",\"decision\":");
    put_json(&o, e->decision);
    put_str(&o, ",\"reason\":");
    put_json(&o, e->reason);
    put_str(&o, ",\"rule\":");
    put_json(&o, e->rule);
    put_str(&o, ",\"address\":");
    put_json(&o, e->address);
    /* a line cut short by the buffer is still one JSON object */
    if (o.n + 3 >= o.cap) {
        o.n = 0;
        put_str(&o, "{\"decision\":\"?\",\"reason\":\"entry too long\"");
    }
    put_str(&o, "}\n");
    return o.n;
}

void netlog_write(int fd, const netlog_entry *e)
{
    if (fd < 0)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char line[4096];
    size_t n = netlog_format(e, (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, line, sizeof line);
    /* One write, so that a line is never split; a full disk loses lines, not the run. */
    ssize_t w;
    do
        w = write(fd, line, n);
    while (w < 0 && errno == EINTR);
}
