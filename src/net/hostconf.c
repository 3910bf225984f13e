// SPDX-License-Identifier: Apache-2.0
#include "net/hostconf.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fdutil.h"
#include "util/strv.h"

/* The next whitespace-separated word of [*p, end) into w (at most n - 1 bytes; longer
 * words are cut and fail to parse as anything); false at the end of the line. */
static bool word(const char **p, const char *end, char *w, size_t n)
{
    const char *s = *p;
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    if (s >= end || *s == '#' || *s == ';') {
        *p = end;
        return false;
    }
    const char *e = s;
    while (e < end && *e != ' ' && *e != '\t' && *e != '\r' && *e != '#')
        e++;
    size_t l = (size_t)(e - s) < n - 1 ? (size_t)(e - s) : n - 1;
    memcpy(w, s, l);
    w[l] = '\0';
    *p = e;
    return true;
}

static void add_ns(hostconf *c, const char *ip)
{
    if (c->n_ns >= HOSTCONF_NS_MAX)
        return;
    struct sockaddr_storage *ss = &c->ns[c->n_ns];
    socklen_t len;
    if (!net_host_is_ip(ip, ss, &len))
        return;
    if (ss->ss_family == AF_INET)
        ((struct sockaddr_in *)ss)->sin_port = htons(53);
    else
        ((struct sockaddr_in6 *)ss)->sin6_port = htons(53);
    c->ns_len[c->n_ns++] = len;
}

void hostconf_parse_resolv(hostconf *c, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        char w[64];
        const char *q = p;
        if (word(&q, le, w, sizeof w) && strcmp(w, "nameserver") == 0 && word(&q, le, w, sizeof w))
            add_ns(c, w);
        p = nl ? nl + 1 : end;
    }
    if (c->n_ns == 0)
        add_ns(c, "127.0.0.1");
}

void hostconf_parse_hosts(hostconf *c, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    size_t cap = c->n_hosts;
    while (p < end && c->n_hosts < HOSTCONF_HOSTS_MAX) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        char ip[64], name[NET_HOST_MAX + 1];
        const char *q = p;
        struct sockaddr_storage ss;
        socklen_t sl;
        if (word(&q, le, ip, sizeof ip) && net_host_is_ip(ip, &ss, &sl)) {
            while (c->n_hosts < HOSTCONF_HOSTS_MAX && word(&q, le, name, sizeof name)) {
                char norm[NET_HOST_MAX];
                const char *why;
                if (net_host_normalize(name, strlen(name), norm, &why) < 0 || net_host_is_ip(norm, NULL, NULL))
                    continue;
                grow(&c->hosts, &cap, c->n_hosts, sizeof *c->hosts);
                hostconf_entry *e = &c->hosts[c->n_hosts++];
                memcpy(e->name, norm, sizeof e->name);
                e->addr = ss;
                e->len = sl;
            }
        }
        p = nl ? nl + 1 : end;
    }
}

static char *slurp(const char *path, size_t *len)
{
    _cleanup_fd_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    size_t max = 256 * 1024; /* a hosts file larger than this is cut */
    char *buf = xmalloc(max);
    ssize_t n = read_all(fd, buf, max);
    if (n < 0) {
        free(buf);
        return NULL;
    }
    *len = (size_t)n;
    return buf;
}

void hostconf_load(hostconf *c, const char *resolv_path, const char *hosts_path)
{
    *c = (hostconf){0};
    size_t len = 0;
    char *t = slurp(resolv_path, &len);
    hostconf_parse_resolv(c, t ? t : "", t ? len : 0);
    free(t);
    t = slurp(hosts_path, &len);
    if (t)
        hostconf_parse_hosts(c, t, len);
    free(t);
}

void hostconf_free(hostconf *c)
{
    free(c->hosts);
    *c = (hostconf){0};
}
