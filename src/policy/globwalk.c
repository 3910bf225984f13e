// SPDX-License-Identifier: Apache-2.0
// Deny globs, the walker: every match of a set of patterns (glob.c, the matcher) below
// their roots on the host, found without following a symlink (see glob.h).  (Line
// comments in this file, as in glob.c: patterns in examples hold the characters that end
// a block comment.)
#include "policy/glob.h"
#include "policy/glob_nfa.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"

// ---- the walker ---------------------------------------------------------------------
//
// Directories are jobs on a shared stack.  A job names a directory by its parent's
// descriptor and its own name, so it is opened with openat(O_NOFOLLOW) relative to a
// directory that was itself reached without following a symlink; a parent's descriptor
// stays open (reference-counted) until every child job has opened its own.  Taking the
// newest job first keeps the walk depth-first, so few descriptors are open at once.
// On a large tree helper threads join in (up to GLOB_MAX_THREADS, no more than the CPUs
// cordon may run on): listing directories is system-call bound (ext4 hashes and sorts
// every directory it lists), and a second CPU halves the wall time.  The threads are
// joined before glob_expand returns, so nothing of them outlives the call (cordon forks
// the sandbox later).

void glob_hits_free(glob_hits *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n; i++) {
        free(h->v[i].path);
        free(h->v[i].target);
    }
    free(h->v);
    *h = (glob_hits){0};
}

#define DIRBUF_SIZE      (32 * 1024)
#define GLOB_MAX_THREADS 4
// Helpers start once this many directories wait: small trees stay on one thread.
#define HELPERS_AFTER 32

struct linux_dirent64 {
    ino64_t d_ino;
    off64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

// An open directory, shared by the jobs of its children.
typedef struct dirref {
    int fd;
    int refs; // under the walker's lock
    char *path;
} dirref;

typedef struct job {
    struct job *next;
    dirref *parent; // NULL: the walk's root, opened by path
    char *name;     // in parent; the root's full path when parent is NULL
    int depth;      // of this directory below the root
    uint64_t st[];  // one state set per pattern
} job;

typedef struct wpat {
    const glob_pat *g;
    size_t index; // in the caller's array
    size_t count; // matches so far (atomic)
} wpat;

typedef struct walker {
    wpat *p;
    size_t np;
    const glob_walk_opts *o;
    size_t max_matches;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    job *stack;
    size_t pending; // jobs on the stack
    size_t busy;    // workers inside a job
    bool stop;      // a worker failed: everyone stops
    int n_threads;  // helpers started
    int max_threads;
    pthread_t threads[GLOB_MAX_THREADS];

    cordon_error err; // the first failure
    size_t failed;
} walker;

// What one thread owns.
typedef struct worker {
    walker *w;
    glob_hits hits;
    char *buf;      // getdents buffer
    uint64_t *next; // scratch: states for an entry
    cordon_error err;
    size_t failed;
} worker;

static void dirref_put(walker *w, dirref *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&w->lock);
    bool last = --d->refs == 0;
    pthread_mutex_unlock(&w->lock);
    if (last) {
        close(d->fd);
        free(d->path);
        free(d);
    }
}

// Fail closed, naming pattern pi.
__attribute__((format(printf, 4, 5))) static int wfail(worker *k, size_t pi, int errnum, const char *fmt, ...)
{
    char msg[sizeof((cordon_error *)NULL)->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    k->failed = k->w->p[pi].index;
    return err_set(&k->err, CORDON_STAGE_RESOLVE, errnum, "deny glob '%s': %s", k->w->p[pi].g->text, msg);
}

static ftype type_of_mode(mode_t m)
{
    if (S_ISDIR(m))
        return FT_DIR;
    if (S_ISREG(m))
        return FT_FILE;
    return FT_OTHER;
}

static bool pattern_depth_ok(const walker *w, size_t i, int depth)
{
    return w->p[i].g->literal || w->o->max_depth < 0 || depth <= w->o->max_depth;
}

// Could the states `st` (one per pattern) need a listing of the directory they apply to?
static bool needs_listing(const walker *w, const uint64_t *st)
{
    for (size_t i = 0; i < w->np; i++)
        if (st[i] & w->p[i].g->wild)
            return true;
    return false;
}

// The first pattern still alive in the state sets st: the one an error there is about.
static size_t live_pattern(const walker *w, const uint64_t *st)
{
    for (size_t i = 0; i < w->np; i++)
        if (st[i])
            return i;
    return 0;
}

static char *child_path(const char *dir, const char *name)
{
    return dir[1] ? xasprintf("%s/%s", dir, name) : xasprintf("/%s", name);
}

// cordon could not get into `path` (EACCES, EPERM): fine only when a command running as
// the caller could not either (canon_unreadable); else fail closed, naming pattern pi.
static int unreadable(worker *k, size_t pi, const char *path)
{
    cordon_error e = {0};
    if (canon_unreadable(path, "cannot be expanded in full", &e) == 0)
        return 0;
    return wfail(k, pi, e.errnum, "%s", e.message);
}

// Resolve the symlink `path` into *h.
static int resolve_link(worker *k, size_t pi, const char *path, glob_hit *h)
{
    canon c;
    cordon_error e = {0};
    if (canon_resolve(path, &c, &e) < 0) {
        switch (e.errnum) {
        case ELOOP: h->unfollowable = "a symlink loop"; return 0;
        case EACCES:
        case EPERM:
            // the command may reach the target if the caller can make it reachable
            if (unreadable(k, pi, path) < 0)
                return -1;
            h->unfollowable = "its target cannot be reached (permission denied)";
            return 0;
        case ENAMETOOLONG: h->unfollowable = "its target's path is too long"; return 0;
        default: return wfail(k, pi, e.errnum, "cannot follow the symlink %s", path);
        }
    }
    h->target = steal_pointer(&c.path);
    h->target_type = c.type;
    h->target_dev = c.dev;
    h->target_ino = c.ino;
    canon_free(&c);
    return 0;
}

// Record `path` (owned) as a match of the patterns in `matched` (bit i: w->p[i]).
static int add_hit(worker *k, uint64_t matched, char *path, const struct stat *st, glob_hit *h)
{
    walker *w = k->w;
    size_t first = SIZE_MAX;
    for (size_t i = 0; i < w->np; i++) {
        if (!(matched & BIT(i)))
            continue;
        if (first == SIZE_MAX)
            first = i;
        if (__atomic_add_fetch(&w->p[i].count, 1, __ATOMIC_RELAXED) > w->max_matches) {
            free(path);
            free(h->target);
            return wfail(k, i, 0,
                         "matches more than %zu paths (the limit); narrow the pattern, or hide a whole "
                         "directory with a deny rule",
                         w->max_matches);
        }
    }
    h->path = path;
    h->pattern = w->p[first].index;
    h->type = type_of_mode(st->st_mode);
    h->dev = st->st_dev;
    h->ino = st->st_ino;
    h->is_link = S_ISLNK(st->st_mode);
    grow(&k->hits.v, &k->hits.cap, k->hits.n + 1, sizeof *k->hits.v);
    k->hits.v[k->hits.n++] = *h;
    return 0;
}

static void push_job(walker *w, job *j);

// Look inside the matched directory `path`?
static bool keep_inside(const glob_walk_opts *o, const char *path)
{
    if (o->descend_matches)
        return true;
    for (size_t i = 0; i < o->n_keep; i++)
        if (strcmp(o->keep_below[i], path) != 0 && path_has_prefix(o->keep_below[i], path))
            return true;
    return false;
}

// One entry `name` of directory d (at `depth` below the root; the entry is one deeper),
// whose states are st.  dtype is getdents' d_type, or DT_UNKNOWN; `probe`: the name was
// not listed, only taken from a literal component, so it may not exist.
static int visit(worker *k, dirref *d, const uint64_t *st, int depth, const char *name, unsigned char dtype, bool probe)
{
    walker *w = k->w;
    uint64_t *next = k->next;
    int e = depth + 1;
    uint64_t matched = 0;
    bool more = false;
    for (size_t i = 0; i < w->np; i++) {
        next[i] = 0;
        if (!st[i] || !pattern_depth_ok(w, i, e))
            continue;
        const glob_pat *g = w->p[i].g;
        uint64_t t = glob_step(g, st[i], name);
        if (t & BIT(g->n))
            matched |= BIT(i);
        if (pattern_depth_ok(w, i, e + 1))
            next[i] = t & ~BIT(g->n);
        more |= next[i] != 0;
    }
    if (!matched && !more)
        return 0;

    // What is it?  getdents said, unless it did not know, or this is a match (whose
    // device and inode go into the rule) or a guess.
    struct stat sb = {0};
    bool is_dir = dtype == DT_DIR;
    if (matched || probe || dtype == DT_UNKNOWN) {
        if (fstatat(d->fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                return 0; // not there (a guess), or gone since it was listed
            if (errno == EACCES || errno == EPERM) {
                // d may be listed but not searched: no one running as the caller (no
                // capabilities) can open anything in it -- unless d is the caller's, who
                // could chmod it
                char *path = child_path(d->path, name);
                int r = unreadable(k, live_pattern(w, st), path);
                free(path);
                return r;
            }
            return wfail(k, live_pattern(w, st), errno, "cannot look at %s/%s", d->path, name);
        }
        is_dir = S_ISDIR(sb.st_mode);
    }

    if (matched) {
        size_t pi = (size_t)__builtin_ctzll(matched);
        char *path = child_path(d->path, name);
        glob_hit h = {0};
        if (S_ISLNK(sb.st_mode) && resolve_link(k, pi, path, &h) < 0) {
            free(path);
            return -1;
        }
        bool to_dir = is_dir || (h.target && h.target_type == FT_DIR);
        for (size_t i = 0; i < w->np; i++)
            if ((matched & BIT(i)) && w->p[i].g->dir_only && !to_dir)
                matched &= ~BIT(i);
        // A matched directory is hidden whole: nothing below it needs a rule of its own,
        // unless a rule below shows part of it again.
        bool inside = matched && is_dir && keep_inside(w->o, path);
        if (!matched) {
            free(path);
            free(h.target);
        } else if (add_hit(k, matched, path, &sb, &h) < 0) {
            return -1;
        }
        if (matched && !inside)
            return 0;
    }
    if (!more || !is_dir)
        return 0;

    job *j = xmalloc(sizeof *j + w->np * sizeof *j->st);
    *j = (job){.parent = d, .name = xstrdup(name), .depth = e};
    memcpy(j->st, next, w->np * sizeof *next);
    pthread_mutex_lock(&w->lock);
    d->refs++;
    pthread_mutex_unlock(&w->lock);
    push_job(w, j);
    return 0;
}

// Open the job's directory.  0 with *out NULL: nothing to walk (gone, or unreachable for
// anyone running as the caller).
static int open_job(worker *k, const job *j, bool list, dirref **out)
{
    *out = NULL;
    int flags = (list ? O_RDONLY : O_PATH) | O_DIRECTORY | O_CLOEXEC;
    int fd;
    char *path;
    if (j->parent) {
        fd = openat(j->parent->fd, j->name, flags | O_NOFOLLOW);
        path = child_path(j->parent->path, j->name);
    } else {
        // The root is canonical: no component of it may be a symlink now.
        fd = open_no_symlinks(j->name, flags);
        path = xstrdup(j->name);
    }
    if (fd >= 0) {
        if (strlen(path) >= PATH_MAX) {
            close(fd);
            int r = wfail(k, live_pattern(k->w, j->st), ENAMETOOLONG,
                          "%.200s...: the path is longer than PATH_MAX, so cordon cannot hide what lies "
                          "there; narrow the pattern or limit the glob depth",
                          path);
            snprintf(k->err.option, sizeof k->err.option, "globDepth");
            free(path);
            return r;
        }
        dirref *d = xmalloc(sizeof *d);
        *d = (dirref){.fd = fd, .refs = 1, .path = path};
        *out = d;
        return 0;
    }
    int e = errno;
    int r = 0;
    if (e == ENOENT || e == ENOTDIR) {
        // gone, or replaced by a file since it was listed; or a missing root: nothing there
    } else if (e == ELOOP && j->parent) {
        // replaced by a symlink since it was listed: not followed
    } else if (e == ELOOP) {
        r = wfail(k, live_pattern(k->w, j->st), e, "%s changed into a symlink while it was being resolved", path);
    } else if (e == EACCES || e == EPERM) {
        // We may not list it (or not reach it).  If it is someone else's and we may not
        // search it either, neither may the command (same user, no capabilities): nothing
        // below is reachable, skip it.  If we may search it, the command could open a file
        // in it by a guessed name; if it is ours, the command could chmod it (one run's
        // `chmod 000 config`, the next's `chmod 755 config; cat config/.env`): fail closed.
        r = unreadable(k, live_pattern(k->w, j->st), path);
    } else if (e == EMFILE || e == ENFILE) {
        r = wfail(k, live_pattern(k->w, j->st), e, "too many directories open at once below %s; limit the glob depth",
                  path);
        snprintf(k->err.option, sizeof k->err.option, "globDepth");
    } else {
        r = wfail(k, live_pattern(k->w, j->st), e, "cannot open %s", path);
    }
    free(path);
    return r;
}

static int run_job(worker *k, job *j)
{
    walker *w = k->w;
    bool list = needs_listing(w, j->st);
    dirref *d;
    int r = open_job(k, j, list, &d);
    dirref_put(w, j->parent);
    if (r < 0 || !d)
        return r;
    if (!list) {
        // Only literal names can come next: look them up, do not list.  Several patterns
        // may name the same entry; look at each name once.
        for (size_t i = 0; i < w->np && r == 0; i++) {
            const glob_pat *g = w->p[i].g;
            for (size_t c = 0; c < g->n && r == 0; c++) {
                if (!(j->st[i] & BIT(c)))
                    continue;
                const char *name = g->c[c].text;
                bool seen = false;
                for (size_t i2 = 0; i2 <= i && !seen; i2++) {
                    const glob_pat *g2 = w->p[i2].g;
                    for (size_t c2 = 0; c2 < g2->n && !seen; c2++)
                        if ((i2 < i || c2 < c) && (j->st[i2] & BIT(c2)) && strcmp(g2->c[c2].text, name) == 0)
                            seen = true;
                }
                if (!seen)
                    r = visit(k, d, j->st, j->depth, name, DT_UNKNOWN, true);
            }
        }
        dirref_put(w, d);
        return r;
    }
    if (!k->buf)
        k->buf = xmalloc(DIRBUF_SIZE);
    for (;;) {
        long n = syscall(SYS_getdents64, d->fd, k->buf, DIRBUF_SIZE);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = wfail(k, live_pattern(w, j->st), errno, "cannot list %s", d->path);
            break;
        }
        if (n == 0)
            break;
        bool exhausted = false;
        for (long off = 0; off < n && r == 0;) {
            const struct linux_dirent64 *de = (const struct linux_dirent64 *)(k->buf + off);
            off += de->d_reclen;
            // The last entry's d_off is where the next call would start.  ext4 (hashed
            // directories: every directory of one block or more), XFS, kernfs and tmpfs
            // say "end of directory" with INT64_MAX or INT32_MAX there, positions their
            // entries can never have (ext4 and kernfs remap a hash that would collide),
            // so the empty call that would only confirm it is skipped: one system call
            // less per directory.  Anywhere else the loop reads on until 0.
            if (off >= n)
                exhausted = de->d_off == INT64_MAX || de->d_off == INT32_MAX;
            const char *nm = de->d_name;
            if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0')))
                continue;
            r = visit(k, d, j->st, j->depth, nm, de->d_type, false);
        }
        if (r < 0 || exhausted)
            break;
    }
    dirref_put(w, d);
    return r;
}

static void *worker_main(void *arg);

static void free_job(job *j)
{
    free(j->name);
    free(j);
}

static void push_job(walker *w, job *j)
{
    pthread_mutex_lock(&w->lock);
    j->next = w->stack;
    w->stack = j;
    w->pending++;
    // A big tree: let helpers in.  (If a thread cannot be created, the walk goes on with
    // those it has.)
    while (w->pending > HELPERS_AFTER && w->n_threads < w->max_threads - 1) {
        worker *k = xcalloc(1, sizeof *k);
        k->w = w;
        k->next = xcalloc(w->np, sizeof *k->next);
        if (pthread_create(&w->threads[w->n_threads], NULL, worker_main, k) != 0) {
            free(k->next);
            free(k);
            w->max_threads = w->n_threads + 1;
            break;
        }
        w->n_threads++;
    }
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

// Take jobs until none is left and no one is busy (or someone failed).
static void work(worker *k)
{
    walker *w = k->w;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->stack && w->busy > 0 && !w->stop)
            pthread_cond_wait(&w->cond, &w->lock);
        if (w->stop || !w->stack)
            break;
        job *j = w->stack;
        w->stack = j->next;
        w->pending--;
        w->busy++;
        pthread_mutex_unlock(&w->lock);
        int r = run_job(k, j);
        free_job(j);
        pthread_mutex_lock(&w->lock);
        w->busy--;
        if (r < 0 && !w->stop) {
            w->stop = true;
            w->err = k->err;
            w->failed = k->failed;
        }
        if (w->stop || (!w->stack && w->busy == 0))
            pthread_cond_broadcast(&w->cond);
    }
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static void *worker_main(void *arg)
{
    work(arg);
    return arg;
}

static int allowed_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) < 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n < 1 ? 1 : n > GLOB_MAX_THREADS ? GLOB_MAX_THREADS : n;
}

static void merge_hits(glob_hits *out, glob_hits *in)
{
    for (size_t i = 0; i < in->n; i++) {
        grow(&out->v, &out->cap, out->n + 1, sizeof *out->v);
        out->v[out->n++] = in->v[i];
    }
    free(in->v);
    *in = (glob_hits){0};
}

// Walk one group of patterns sharing the root `root`.
static int walk_group(walker *w, const char *root, glob_hits *out, cordon_error *err, size_t *failed)
{
    worker main_worker = {.w = w};
    worker *k = &main_worker;
    k->next = xcalloc(w->np, sizeof *k->next);
    job *j = xmalloc(sizeof *j + w->np * sizeof *j->st);
    *j = (job){.name = xstrdup(root)};
    uint64_t root_match = 0;
    for (size_t i = 0; i < w->np; i++) {
        const glob_pat *g = w->p[i].g;
        j->st[i] = glob_closure(g, BIT(g->walk));
        if (j->st[i] & BIT(g->n)) // e.g. "/r/**" matches /r itself
            root_match |= BIT(i);
        j->st[i] &= ~BIT(g->n);
    }
    int r = 0;
    if (root_match) {
        // Hidden whole (unless a rule below may show part of it again).
        dirref *d;
        r = open_job(k, j, false, &d);
        if (r == 0 && d) {
            struct stat sb;
            glob_hit h = {0};
            if (fstat(d->fd, &sb) < 0)
                r = wfail(k, (size_t)__builtin_ctzll(root_match), errno, "cannot look at %s", root);
            else
                r = add_hit(k, root_match, xstrdup(root), &sb, &h);
            dirref_put(w, d);
        }
        if (r < 0 || !d || !keep_inside(w->o, root)) {
            free_job(j);
            j = NULL;
        }
    }
    if (r == 0 && j) {
        push_job(w, j);
        work(k);
    }
    for (int t = 0; t < w->n_threads; t++) {
        void *ret;
        pthread_join(w->threads[t], &ret);
        worker *h = ret;
        merge_hits(&k->hits, &h->hits);
        free(h->buf);
        free(h->next);
        free(h);
    }
    w->n_threads = 0;
    while (w->stack) { // left by a failure
        job *x = w->stack;
        w->stack = x->next;
        dirref_put(w, x->parent);
        free_job(x);
    }
    if (r == 0 && w->stop) {
        r = -1;
        k->err = w->err;
        k->failed = w->failed;
    }
    if (r < 0) {
        *err = k->err;
        if (failed)
            *failed = k->failed;
        glob_hits_free(&k->hits);
    } else {
        merge_hits(out, &k->hits);
    }
    free(k->buf);
    free(k->next);
    return r;
}

static int cmp_hits(const void *a, const void *b)
{
    const glob_hit *x = a, *y = b;
    int c = path_cmp(x->path, y->path);
    if (c)
        return c;
    return (x->pattern > y->pattern) - (x->pattern < y->pattern);
}

int glob_expand(glob_pat *const *pats, const char *const *roots, size_t n, const glob_walk_opts *opts, glob_hits *out,
                size_t *failed, cordon_error *err)
{
    *out = (glob_hits){0};
    glob_walk_opts dflt = {.max_depth = -1};
    if (!opts)
        opts = &dflt;
    _cleanup_free_ bool *done = xcalloc(n ? n : 1, sizeof *done);
    _cleanup_free_ wpat *group = xcalloc(n ? n : 1, sizeof *group);
    int threads = allowed_cpus();
    int ret = 0;
    for (size_t i = 0; i < n && ret == 0; i++) {
        if (done[i] || !roots[i])
            continue;
        walker w = {
            .p = group,
            .o = opts,
            .max_matches = opts->max_matches ? opts->max_matches : GLOB_MAX_MATCHES,
            .max_threads = threads,
        };
        for (size_t j = i; j < n; j++) {
            if (done[j] || !roots[j] || strcmp(roots[j], roots[i]) != 0)
                continue;
            done[j] = true;
            group[w.np++] = (wpat){.g = pats[j], .index = j};
        }
        pthread_mutex_init(&w.lock, NULL);
        pthread_cond_init(&w.cond, NULL);
        ret = walk_group(&w, roots[i], out, err, failed);
        pthread_cond_destroy(&w.cond);
        pthread_mutex_destroy(&w.lock);
    }
    if (ret < 0) {
        glob_hits_free(out);
        return -1;
    }
    if (out->n > 1) {
        qsort(out->v, out->n, sizeof *out->v, cmp_hits);
        size_t k = 1;
        for (size_t i = 1; i < out->n; i++) {
            if (strcmp(out->v[i].path, out->v[k - 1].path) == 0) {
                free(out->v[i].path);
                free(out->v[i].target);
                continue;
            }
            out->v[k++] = out->v[i];
        }
        out->n = k;
    }
    return 0;
}
