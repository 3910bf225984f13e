// SPDX-License-Identifier: Apache-2.0
/* bwrap's mount operations, in its order, as cordon rules (pure: the host is asked
 * through bw_host).  bwrap applies them one after the other, each on top of what is
 * there: a mount at DEST covers whatever earlier ones put at DEST or below it.  So the
 * operations still in effect at the end are, for each path, the last one there that no
 * later one covers; among those, a deeper one always came after a shallower one, which
 * is exactly cordon's "the longest matching path wins" (README, "Rules").  The rest of
 * cordon's pipeline (resolve, protect, plan) then builds that view with cordon's
 * protections on top (doc/bwrap.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwrap/bwrap.h"
#include "util/path.h"
#include "util/strv.h"

typedef struct live {
    const bw_op *op;
    char *dest; /* normalized */
    bool read_only;
    bool hide;       /* a --tmpfs remounted read-only: an empty, read-only directory */
    int perms;       /* the op's, or --chmod's after it */
    bool host_mkdir; /* DIR: to be made in a writable host directory */
} live;

static void free_live(live *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(l[i].dest);
    free(l);
}

static void add_rule(bw_plan *p, const char *path, cordon_access access, const char *why)
{
    p->rules = xrealloc(p->rules, (p->n_rules + 1) * sizeof *p->rules);
    p->rules[p->n_rules++] = (bw_rule){.path = xstrdup(path), .access = access, .why = why};
}

static bool host_exists(const bw_host *host, const char *path)
{
    return host->exists ? host->exists(path, host->ctx) : host->src_type(path, host->ctx) != BW_SRC_MISSING;
}

/* The live operation whose mount holds `dest` (the deepest one strictly above it; not a
 * symlink, not a data file), or NULL: the root as the line began it (bwrap's tmpfs). */
static const live *place_of(const live *l, size_t nl, const char *dest)
{
    const live *best = NULL;
    for (size_t k = 0; k < nl; k++)
        if (l[k].op->kind != BW_SYMLINK && l[k].op->kind != BW_FILE && strcmp(l[k].dest, dest) != 0 &&
            path_has_prefix(dest, l[k].dest) && (!best || strlen(l[k].dest) > strlen(best->dest)))
            best = &l[k];
    return best;
}

/* Is that place one of cordon's own (its empty root, a --tmpfs, a --dir), as opposed to a
 * host directory shown by a bind? */
static bool own_place(const live *p)
{
    return !p || p->op->kind == BW_TMPFS || p->op->kind == BW_DIR;
}

/* --dir DEST, --file, --bind-data, --ro-bind-data, --chmod at their place in the order:
 * 1 to add `op` as a live operation, 0 when it changes nothing (a --dir that exists,
 * a --chmod folded into what it changes), -1 with msg. */
static int settle_made(const bw_op *op, const char *dest, live *l, size_t nl, const bw_host *host, char *msg, size_t n)
{
    const live *at = place_of(l, nl, dest);
    bool host_dir = !own_place(at);
    if (op->kind == BW_CHMOD) {
        for (size_t k = nl; k-- > 0;)
            if (strcmp(l[k].dest, dest) == 0 && strcmp(dest, "/") != 0 &&
                (l[k].op->kind == BW_TMPFS || l[k].op->kind == BW_DIR || l[k].op->kind == BW_FILE)) {
                l[k].perms = op->perms;
                return 0;
            }
        return bw_fail(msg, n,
                       "--chmod %o %s: cordon's bwrap changes the mode only of a --tmpfs, --dir, --file or "
                       "--bind-data made at that path earlier on the line",
                       (unsigned)op->perms, op->dest);
    }
    if (op->kind == BW_DIR) {
        /* already there: a mount at or below it, or the host's own directory (bwrap then
         * leaves its mode alone) */
        for (size_t k = 0; k < nl; k++)
            if (path_has_prefix(l[k].dest, dest))
                return 0;
        if (host_dir && host_exists(host, dest))
            return 0;
        if (host_dir && at->read_only)
            return bw_fail(msg, n, "Can't mkdir %s: Read-only file system", op->dest);
        return host_dir ? 2 : 1; /* on the host (main.c decides), or a tmpfs of cordon's own */
    }
    /* BW_FILE: written by cordon in a place of its own; its root is read-only once built */
    if (host_dir)
        return bw_fail(msg, n,
                       "%s %s: cordon's bwrap writes a data file only in a place of its own (its root, a --tmpfs, "
                       "a --dir), not in a host directory",
                       op->option, op->dest);
    if (op->writable && !at)
        return bw_fail(msg, n, "--bind-data %s: cordon's root is read-only; put a writable data file inside a --tmpfs",
                       op->dest);
    if (op->read_only && at)
        return bw_fail(msg, n,
                       "--ro-bind-data %s: inside a --tmpfs or --dir the file would be writable; cordon's bwrap "
                       "makes a read-only data file only in its read-only root",
                       op->dest);
    return 1;
}

/* The operations in effect at the end, in order (see the top of this file). */
static int settle(const bw_args *a, const bw_host *host, live **out, size_t *n_out, char *msg, size_t n)
{
    live *l = xcalloc(a->n_ops + 1, sizeof *l);
    size_t nl = 0;
    for (size_t i = 0; i < a->n_ops; i++) {
        const bw_op *op = &a->ops[i];
        if (op->dest[0] != '/') {
            free_live(l, nl);
            return bw_fail(msg, n, "%s %s: cordon's bwrap needs an absolute destination", op->option, op->dest);
        }
        if (op->kind == BW_BIND && op->src[0] != '/') {
            free_live(l, nl);
            return bw_fail(msg, n, "%s %s: cordon's bwrap needs an absolute source", op->option, op->src);
        }
        char *dest = path_normalize(op->dest);
        if (op->kind == BW_REMOUNT_RO) {
            size_t k = nl;
            while (k > 0 && strcmp(l[k - 1].dest, dest) != 0)
                k--;
            free(dest);
            if (k == 0 || (l[k - 1].op->kind != BW_BIND && l[k - 1].op->kind != BW_TMPFS)) {
                free_live(l, nl);
                return bw_fail(
                    msg, n,
                    "--remount-ro %s: cordon's bwrap remounts only a --bind or --tmpfs made at that path by an "
                    "earlier option",
                    op->dest);
            }
            if (l[k - 1].op->kind == BW_TMPFS)
                l[k - 1].hide = true;
            else
                l[k - 1].read_only = true;
            continue;
        }
        if (op->kind == BW_BIND && !host_exists(host, op->src)) {
            free(dest);
            if (op->try_)
                continue; /* as bwrap: a missing source of a -try option is skipped */
            free_live(l, nl);
            return bw_fail(msg, n, "Can't find source path %s: No such file or directory", op->src);
        }
        if (op->kind == BW_DIR || op->kind == BW_FILE || op->kind == BW_CHMOD) {
            int r = settle_made(op, dest, l, nl, host, msg, n);
            if (r < 0) {
                free(dest);
                free_live(l, nl);
                return -1;
            }
            if (r == 0) {
                free(dest);
                continue;
            }
            if (op->kind == BW_FILE || r == 2) { /* a file, a host directory: cover nothing */
                l[nl++] = (live){.op = op, .dest = dest, .perms = op->perms, .host_mkdir = r == 2};
                continue;
            }
        }
        /* what this one covers goes (a symlink is made, not mounted: it covers nothing) */
        size_t w = 0;
        if (op->kind == BW_SYMLINK) {
            l[nl++] = (live){.op = op, .dest = dest};
            continue;
        }
        for (size_t k = 0; k < nl; k++) {
            if (path_has_prefix(l[k].dest, dest))
                free(l[k].dest);
            else
                l[w++] = l[k];
        }
        nl = w;
        l[nl++] = (live){.op = op, .dest = dest, .read_only = op->kind == BW_BIND && op->read_only, .perms = op->perms};
    }
    *out = l;
    *n_out = nl;
    return 0;
}

int bw_map(const bw_args *a, const bw_host *host, bw_plan *out, char *msg, size_t n)
{
    *out = (bw_plan){.base = CORDON_BASE_EMPTY};
    out->network = a->unshare_net || (a->unshare_all && !a->share_net) ? CORDON_NETWORK_NONE : CORDON_NETWORK_HOST;
    live *l = NULL;
    size_t nl = 0;
    if (settle(a, host, &l, &nl, msg, n) < 0)
        return -1;
    int ret = 0;
    for (size_t i = 0; i < nl && ret == 0; i++) {
        const bw_op *op = l[i].op;
        const char *dest = l[i].dest;
        bool root = strcmp(dest, "/") == 0;
        switch (op->kind) {
        case BW_TMPFS:
            if (root && op->size) /* (cordon's root has no size to give, its /tmp none of its own) */
                ret = bw_fail(msg, n,
                              "--size %llu --tmpfs /: cordon's bwrap root is its own read-only tmpfs with a private "
                              "/tmp; a size for it is not supported",
                              op->size);
            else if (root) /* bwrap's own root is a tmpfs: cordon's --base empty */
                out->base = CORDON_BASE_EMPTY;
            else if (l[i].hide)
                add_rule(out, dest, CORDON_ACCESS_NONE, "--tmpfs, --remount-ro");
            else {
                add_rule(out, dest, CORDON_ACCESS_NONE, "--tmpfs");
                out->rules[out->n_rules - 1].tmpfs = true;
                out->rules[out->n_rules - 1].mode = l[i].perms >= 0 ? (unsigned)l[i].perms : 0755;
                out->rules[out->n_rules - 1].size = op->size;
            }
            break;
        case BW_DIR: /* (settle: one that is not there yet) a directory of cordon's own */
            if (root)
                break; /* (the root is there) */
            if (l[i].host_mkdir) {
                add_rule(out, dest, CORDON_ACCESS_NONE, "--dir");
                out->rules[out->n_rules - 1].host_mkdir = true;
                out->rules[out->n_rules - 1].mode = l[i].perms >= 0 ? (unsigned)l[i].perms : 0755;
                break;
            }
            add_rule(out, dest, CORDON_ACCESS_NONE, "--dir");
            out->rules[out->n_rules - 1].tmpfs = true;
            out->rules[out->n_rules - 1].mode = l[i].perms >= 0 ? (unsigned)l[i].perms : 0755;
            break;
        case BW_FILE:
            add_rule(out, dest, CORDON_ACCESS_NONE, op->option);
            out->rules[out->n_rules - 1].data = op->src;
            out->rules[out->n_rules - 1].mode = (unsigned)l[i].perms;
            break;
        case BW_CHMOD: break; /* (folded into the operation it changes) */
        case BW_BIND: {
            char *src = path_normalize(op->src);
            bool same = strcmp(src, dest) == 0;
            bw_src_type type;
            free(src);
            if (root && same && l[i].read_only)
                out->base = CORDON_BASE_HOST;
            else if (root)
                ret = bw_fail(msg, n, "%s %s /: cordon's bwrap shows the whole host only read-only (--ro-bind / /)",
                              op->option, op->src);
            else if (same)
                add_rule(out, dest, l[i].read_only ? CORDON_ACCESS_READ : CORDON_ACCESS_WRITE, op->option);
            else if (l[i].read_only && (type = host->src_type(op->src, host->ctx)) != BW_SRC_OTHER) {
                /* /dev/null or an empty directory over a path: what hides it (doc/bwrap.md);
                 * nothing of the source is mounted, only its type asked (once) */
                add_rule(out, dest, CORDON_ACCESS_NONE, op->option);
                out->rules[out->n_rules - 1].file = type == BW_SRC_DEVNULL;
            } else
                ret = bw_fail(msg, n,
                              "%s %s %s: cordon's bwrap binds a source at another path only read-only and only "
                              "/dev/null or an empty directory (which hide the destination)",
                              op->option, op->src, op->dest);
            break;
        }
        case BW_DEV:
            if (strcmp(dest, "/dev") != 0) /* cordon's minimal /dev is always at /dev */
                ret = bw_fail(msg, n, "--dev %s: cordon's bwrap mounts /dev only at /dev", op->dest);
            break;
        case BW_PROC:
            if (strcmp(dest, "/proc") != 0)
                ret = bw_fail(msg, n, "--proc %s: cordon's bwrap mounts /proc only at /proc", op->dest);
            else
                out->proc = true;
            break;
        case BW_SYMLINK:
            if (root)
                ret = bw_fail(msg, n, "--symlink %s /: no symlink at /", op->src);
            else {
                add_rule(out, dest, CORDON_ACCESS_NONE, "--symlink");
                out->rules[out->n_rules - 1].target = op->src;
            }
            break;
        case BW_REMOUNT_RO: break; /* (folded into the operation it remounts) */
        }
    }
    free_live(l, nl);
    /* The host's /tmp as the host root shows it: cordon's --base host would put a private
     * /tmp there, which bwrap's --ro-bind / / does not */
    bool tmp_ruled = false;
    for (size_t i = 0; i < out->n_rules; i++)
        tmp_ruled |= strcmp(out->rules[i].path, "/tmp") == 0;
    if (ret == 0 && out->base == CORDON_BASE_HOST && !tmp_ruled)
        add_rule(out, "/tmp", CORDON_ACCESS_READ, "--ro-bind / /");
    if (ret < 0)
        bw_plan_free(out);
    return ret;
}

void bw_plan_free(bw_plan *p)
{
    for (size_t i = 0; i < p->n_rules; i++)
        free(p->rules[i].path);
    free(p->rules);
    *p = (bw_plan){0};
}
