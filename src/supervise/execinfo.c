// SPDX-License-Identifier: Apache-2.0
#include "supervise/execinfo.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <unistd.h>

/* snprintf where cutting a long description short is fine (gcc's truncation warnings are
 * not) */
__attribute__((format(printf, 3, 4))) static void fmt(char *buf, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, n, f, ap);
    va_end(ap);
}

/* The file execvp() would have run for `cmd`: cmd itself when it holds a '/', else the
 * first regular file named cmd in $PATH (as the command's environment has it).  0 when
 * one is found. */
static int find_file(const char *cmd, char *const envp[], char *out, size_t n)
{
    if (strchr(cmd, '/')) {
        fmt(out, n, "%s", cmd);
        return 0;
    }
    const char *path = "/bin:/usr/bin"; /* glibc's default */
    for (char *const *e = envp; e && *e; e++)
        if (strncmp(*e, "PATH=", 5) == 0)
            path = *e + 5;
    while (*path) {
        size_t len = strcspn(path, ":");
        struct stat st;
        if (len == 0)
            fmt(out, n, "%s", cmd);
        else
            fmt(out, n, "%.*s/%s", (int)len, path, cmd);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
            return 0;
        path += len + (path[len] == ':');
    }
    return -1;
}

/* The program interpreter (PT_INTERP) of the ELF file on fd, into out; 0 when it has one. */
static int elf_interp(int fd, const unsigned char *head, size_t got, char *out, size_t n)
{
    if (got < EI_NIDENT || head[EI_MAG0] != ELFMAG0 || head[EI_MAG1] != ELFMAG1 || head[EI_MAG2] != ELFMAG2 ||
        head[EI_MAG3] != ELFMAG3)
        return -1;
    bool is64 = head[EI_CLASS] == ELFCLASS64;
    unsigned long long phoff;
    unsigned phnum, phentsize;
    if (is64 && got >= sizeof(Elf64_Ehdr)) {
        Elf64_Ehdr eh;
        memcpy(&eh, head, sizeof eh);
        phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
    } else if (!is64 && head[EI_CLASS] == ELFCLASS32 && got >= sizeof(Elf32_Ehdr)) {
        Elf32_Ehdr eh;
        memcpy(&eh, head, sizeof eh);
        phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
    } else {
        return -1;
    }
    if (phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || phnum > 256)
        return -1;
    for (unsigned i = 0; i < phnum; i++) {
        unsigned long long off, size;
        unsigned type;
        if (is64) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(phoff + (unsigned long long)i * sizeof ph)) != (ssize_t)sizeof ph)
                return -1;
            type = ph.p_type, off = ph.p_offset, size = ph.p_filesz;
        } else {
            Elf32_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(phoff + (unsigned long long)i * sizeof ph)) != (ssize_t)sizeof ph)
                return -1;
            type = ph.p_type, off = ph.p_offset, size = ph.p_filesz;
        }
        if (type != PT_INTERP)
            continue;
        if (size < 2 || size >= n)
            return -1;
        if (pread(fd, out, (size_t)size, (off_t)off) != (ssize_t)size)
            return -1;
        out[size - 1] = '\0'; /* it ends in a NUL already; make sure */
        return out[0] == '/' ? 0 : -1;
    }
    return -1; /* static: no loader */
}

/* What `file` needs the kernel to load first that is missing: its #! interpreter or its
 * ELF loader, one level down (an interpreter that is there but whose own loader is not);
 * into what (a description).  0 when something is missing. */
static int missing_part(const char *file, char *what, size_t n, int depth)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -1;
    unsigned char head[256];
    ssize_t got = pread(fd, head, sizeof head - 1, 0);
    if (got < 2) {
        close(fd);
        return -1;
    }
    head[got] = '\0';
    char need[256];
    const char *kind;
    if (head[0] == '#' && head[1] == '!') {
        const char *p = (const char *)head + 2;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, " \t\n");
        if (len == 0 || len >= sizeof need) {
            close(fd);
            return -1;
        }
        memcpy(need, p, len);
        need[len] = '\0';
        kind = "interpreter";
    } else if (elf_interp(fd, head, (size_t)got, need, sizeof need) == 0) {
        kind = "ELF loader";
    } else {
        close(fd);
        return -1;
    }
    close(fd);
    struct stat st;
    if (stat(need, &st) < 0) {
        fmt(what, n, "its %s %s (%s) is not in the sandbox", kind, need,
            kind[0] == 'i' ? "named on its #! line" : "the dynamic linker named in the program");
        return 0;
    }
    if (depth == 0) {
        char deeper[512];
        if (missing_part(need, deeper, sizeof deeper, 1) == 0) {
            fmt(what, n, "its %s %s is there, but %s", kind, need, deeper);
            return 0;
        }
    }
    return -1;
}

void exec_explain(const char *cmd, char *const envp[], char *out, size_t n)
{
    out[0] = '\0';
    char file[4096];
    if (find_file(cmd, envp, file, sizeof file) < 0)
        return;
    char what[700];
    if (missing_part(file, what, sizeof what, 0) == 0) {
        if (strcmp(file, cmd) == 0)
            fmt(out, n, "%s", what);
        else
            fmt(out, n, "%s (%s) was found, but %s", cmd, file, what);
    }
}
