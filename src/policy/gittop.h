// SPDX-License-Identifier: Apache-2.0
/* The workspace's default (README, "A five-minute tour"; doc/reference.md, --workspace):
 * the top of the git work tree the current directory is in. */
#pragma once

/* The nearest directory at or above DIR (canonical, absolute) that holds a `.git` — a
 * directory with a HEAD, or a file (a linked worktree's, a submodule's) — as `git rev-parse
 * --show-toplevel` finds it: on DIR's file system only (git stops at a mount point unless
 * told otherwise), walked by descriptor (O_PATH, no symlink followed), the path checked to
 * name the directory the walk found. NULL when there is none, when the walk cannot go on
 * (a directory it may not search), or when the top would be HOME (canonical, or NULL), a
 * directory above it, or `/`: a repository of the home's dotfiles does not make the whole
 * home the workspace. Returns a new string. */
char *git_top_level(const char *dir, const char *home);
