// SPDX-License-Identifier: Apache-2.0
#include "libtest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

cordon_policy *test_policy(double timeout)
{
    cordon_policy *p = cordon_policy_new();
    cordon_error e = {0};
    if (!p || cordon_policy_set_no_workspace(p, true, &e) < 0 || cordon_policy_set_cwd(p, "/", &e) < 0 ||
        (timeout > 0 && cordon_policy_set_timeout(p, timeout, &e) < 0)) {
        fprintf(stderr, "test_policy: %s\n", e.message);
        abort();
    }
    return p;
}

int collect(const char *data, size_t len, void *ctx)
{
    collected *c = ctx;
    if (c->calls++ == 0)
        c->first_ms = mono_ms();
    if (c->len + len + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + len + 1)
            cap *= 2;
        char *d = realloc(c->data, cap);
        if (!d)
            abort();
        c->data = d;
        c->cap = cap;
    }
    memcpy(c->data + c->len, data, len);
    c->len += len;
    c->data[c->len] = '\0';
    return c->stop_after && c->len >= c->stop_after;
}

size_t strip_sanitizer_notes(char *buf, size_t len)
{
    static const char *const notes[] = {"__asan_handle_no_return", "False positive error reports may follow",
                                        "For details see https://github.com/google/sanitizers/issues/189"};
    size_t out = 0;
    for (size_t at = 0; at < len;) {
        char *nl = memchr(buf + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - buf) + 1 : len;
        bool note = false;
        for (size_t i = 0; i < sizeof notes / sizeof *notes && !note; i++)
            note = memmem(buf + at, end - at, notes[i], strlen(notes[i])) != NULL;
        if (!note) {
            memmove(buf + out, buf + at, end - at);
            out += end - at;
        }
        at = end;
    }
    if (buf)
        buf[out] = '\0';
    return out;
}

const char *output(collected *c)
{
    c->len = strip_sanitizer_notes(c->data, c->len);
    return c->data ? c->data : "";
}

void collected_free(collected *c)
{
    free(c->data);
    *c = (collected){0};
}

long long mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

int count_children(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], buf[4096];
        snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (r <= 0)
            continue;
        buf[r] = '\0';
        for (char *p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
            n++;
    }
    closedir(d);
    return n;
}

int await_marked(const char *marker, int want, int ms)
{
    int n = count_marked(marker);
    for (int waited = 0; waited < ms; waited += 100) {
        bool first = n == want;
        usleep(100000);
        n = count_marked(marker);
        if (first && n == want)
            break;
    }
    return n;
}

int count_marked(const char *marker)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], buf[8192];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (r <= 0)
            continue;
        for (ssize_t i = 0; i < r; i++)
            if (buf[i] == '\0')
                buf[i] = ' ';
        buf[r] = '\0';
        if (strstr(buf, marker))
            n++;
    }
    closedir(d);
    return n;
}

char *read_all_fd(int fd)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 1 >= cap)
            buf = realloc(buf, cap *= 2);
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            return NULL;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    strip_sanitizer_notes(buf, len);
    return buf;
}

bool write_str(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}
