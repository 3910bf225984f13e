// SPDX-License-Identifier: Apache-2.0
/* A kernel overlay mounted by descriptor (copy-on-write workspaces): used by root.c for
 * a PLAN_OVERLAY and by the workspace's probe (src/workspace/backend.c). */
#pragma once
#include <stddef.h>

/* The layers are directories opened (O_PATH) in the caller's own mount namespace: lowers
 * from the topmost down.  Mounted with userxattr (the whiteouts and opaque directories of
 * a user namespace's overlay), redirect_dir=nofollow, metacopy=off, index=off, xino=off:
 * the upper layer then holds every change as whole files that src/workspace/changes.c
 * reads.  Returns a detached mount (fsmount, with `attrs`), or -1 with errno set and the
 * step that failed (with the kernel's own message when it gave one) in why. */
int overlay_mount(const int *lowers, size_t n_lowers, int upper, int work, unsigned attrs, char *why, size_t why_len);
