// SPDX-License-Identifier: Apache-2.0
/* The network part of the plan: what listens inside the sandbox's network namespace and
 * where it leads on the host, what is published from inside, the filtering proxy's rules,
 * and how the command's proxy variables are rewritten.  Pure data, computed from the
 * policy and the command's environment by pure code, printed by `cordon explain`.
 *
 * Three kinds of listening sockets live inside, on 127.0.0.1: a bridge to a loopback proxy
 * named in a proxy variable (--network proxy without --allow-domain), cordon's filtering
 * proxy (--allow-domain; HTTP, CONNECT and SOCKS5 on one port), and a forwarded host port
 * (--forward-port).  The sandbox's PID 1 creates them (net/inside.c) and hands them to a
 * helper process on the host side (net/host.c), which accepts on them directly: nothing of
 * cordon runs inside the sandbox for the network. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "cordon.h"
#include "util/strv.h"

struct cordon_policy;

typedef enum net_listen_kind {
    NET_LISTEN_BRIDGE = 0, /* to a loopback proxy of the host's (a proxy variable) */
    NET_LISTEN_PROXY,      /* cordon's filtering proxy */
    NET_LISTEN_FORWARD,    /* --forward-port */
} net_listen_kind;

/* Where the host side connects: the addresses tried in order ("localhost": 127.0.0.1, ::1). */
#define NET_DNS_MAX 3
typedef struct net_endpoint {
    struct sockaddr_storage addr[NET_DNS_MAX];
    socklen_t len[NET_DNS_MAX];
    int n;
} net_endpoint;

typedef struct net_listen {
    net_listen_kind kind;
    uint16_t port;   /* inside: 127.0.0.1:port */
    net_endpoint to; /* BRIDGE, FORWARD */
    char *what;      /* for explain and the log: "HTTPS_PROXY https_proxy", "--forward-port 5432" */
} net_listen;

typedef struct net_publish {
    uint16_t inside, host;
} net_publish;

typedef struct net_hostent {
    char *name;
    struct sockaddr_storage addr;
    socklen_t len;
} net_hostent;

typedef struct net_plan {
    bool active;     /* anything listens or is published: the host-side helper runs */
    bool proxy;      /* --network proxy: the seccomp filter allows only IP sockets */
    bool allow_unix; /* --allow-unix-sockets: and AF_UNIX ones */
    net_listen *listen;
    size_t n_listen;
    net_publish *publish;
    size_t n_publish;
    strv allow, deny;   /* the filtering proxy's patterns (copies) */
    net_hostent *hosts; /* --add-host */
    size_t n_hosts;
    net_endpoint dns; /* --dns-server (up to 3 in addr[], see NET_DNS_MAX), n = 0: the host's */
    char *log;        /* --network-log FILE, or NULL */
    strv sockets;     /* --allow-socket: host pathname sockets the command may reach (copies) */
} net_plan;

/* The most listeners (bridges, the proxy, forwarded ports) and published ports one sandbox
 * can have: one SCM_RIGHTS message (at most 253 descriptors) carries the listening
 * sockets, two per forwarded port (127.0.0.1 and ::1). */
#define NET_MAX_LISTEN 120

/* The port the filtering proxy listens on inside, unless a forwarded or published port
 * takes it. */
#define NET_PROXY_PORT 3128

/* Compute the network plan from the policy and the command's environment `env` (as
 * env_build made it), which it rewrites: bridged proxy variables point at their inside
 * end; with --allow-domain every proxy variable points at cordon's proxy.  Fails (stage
 * USAGE) on conflicting options, a proxy variable that cannot be bridged, and proxy mode
 * with nothing to reach. */
int net_plan_build(const struct cordon_policy *pol, strv *env, net_plan *out, cordon_error *err);
/* What the command's NO_PROXY/no_proxy (in env, as net_plan_build left it) takes past the
 * proxy that the proxy was meant to see: a name an --allow-domain allows (localhost above
 * all: the command's clients then reach the sandbox's own loopback, not the host's), or,
 * bridging a proxy of the host's, a host the sandbox has no other way to.  One warning
 * each, pushed onto warnings. */
void net_plan_no_proxy_warnings(const struct cordon_policy *pol, const strv *env, const net_plan *np, strv *warnings);
void net_plan_free(net_plan *np);

/* `cordon explain`: the network section. */
void net_plan_explain(FILE *out, const net_plan *np, cordon_network network);
