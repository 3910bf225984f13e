// SPDX-License-Identifier: Apache-2.0
/* What the filtering proxy's resolver knows of the host, read by the run before the
 * helper starts (the helper reads no file): the name servers of /etc/resolv.conf and the
 * names of /etc/hosts.  The parsers are pure. */
#pragma once
#include <stddef.h>
#include <sys/socket.h>

#include "net/domain.h"

#define HOSTCONF_NS_MAX    3    /* as glibc's MAXNS */
#define HOSTCONF_HOSTS_MAX 1024 /* name/address pairs kept from /etc/hosts */

typedef struct hostconf_entry {
    char name[NET_HOST_MAX];
    struct sockaddr_storage addr;
    socklen_t len;
} hostconf_entry;

typedef struct hostconf {
    struct sockaddr_storage ns[HOSTCONF_NS_MAX]; /* port 53 */
    socklen_t ns_len[HOSTCONF_NS_MAX];
    int n_ns;
    hostconf_entry *hosts; /* malloc'ed (by the run, before the helper starts) */
    size_t n_hosts;
} hostconf;

/* "nameserver ADDRESS" lines (IPv4 or IPv6, no zone), the first three; none: 127.0.0.1,
 * as glibc assumes. */
void hostconf_parse_resolv(hostconf *c, const char *text, size_t len);
/* "ADDRESS NAME [ALIAS...]" lines; '#' starts a comment. */
void hostconf_parse_hosts(hostconf *c, const char *text, size_t len);
/* Read both files (missing or unreadable: none from it). */
void hostconf_load(hostconf *c, const char *resolv_path, const char *hosts_path);
void hostconf_free(hostconf *c);
