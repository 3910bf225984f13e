// SPDX-License-Identifier: Apache-2.0
/* --toolchains (toolchains.h). */
#include "policy/toolchains.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "util/cleanup.h"
#include "util/path.h"

/* rustup and cargo, pyenv, nvm, volta, fnm, Go, Deno, Bun, rbenv, asdf, mise, SDKMAN!,
 * pip's and pipx's --user programs (~/.local/bin) */
const char *const toolchain_dirs[] = {
    ".cargo",  ".rustup",    ".pyenv", ".nvm",   ".volta", ".local/share/fnm",
    "go",      ".deno",      ".bun",   ".rbenv", ".asdf",  ".local/share/mise",
    ".sdkman", ".local/bin",
};
const size_t n_toolchain_dirs = sizeof toolchain_dirs / sizeof *toolchain_dirs;

int toolchains_add(resolved *r, cordon_error *err)
{
    if (!r->home)
        return 0;
    _cleanup_fd_ int home = open(r->home, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (home < 0)
        return 0; /* no home to show anything of */
    for (size_t i = 0; i < n_toolchain_dirs; i++) {
        struct stat st;
        /* (the rule itself is resolved as every rule is: canon.h) */
        if (fstatat(home, toolchain_dirs[i], &st, 0) < 0 || !S_ISDIR(st.st_mode))
            continue;
        _cleanup_free_ char *path = path_join(r->home, toolchain_dirs[i]);
        if (resolve_add_rule(r, path, CORDON_ACCESS_READ, ORIGIN_FLAG, "--toolchains", 0, err) < 0)
            return -1;
    }
    return 0;
}
