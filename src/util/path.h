// SPDX-License-Identifier: Apache-2.0
/* Pure, lexical path helpers: no filesystem access. */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* Normalise an absolute path lexically: collapse "//", drop "." and trailing "/",
 * apply ".." to the preceding component ("/.." is "/").  Returns a new string, or
 * NULL when `in` is not absolute. */
char *path_normalize(const char *in);
/* True when `child` is `parent` or lies below it ("/" is above everything).
 * Both must be normalised. */
bool path_has_prefix(const char *child, const char *parent);
/* "a" + "/" + "b" with exactly one slash between them. */
char *path_join(const char *a, const char *b);
/* Cut a normalised absolute path to its parent, in place ("/a/b" -> "/a", "/a" -> "/");
 * false, leaving it, for "/". */
bool path_to_parent(char *p);
/* The next component of the path at *p, as a string in `name`, with the slashes before and
 * after it skipped (**p == '\0' afterwards: it was the last): 1; 0 at the end of the path;
 * -1 with errno ENAMETOOLONG for a component longer than NAME_MAX.  The one way the
 * descriptor walks (util/fdutil.c, sandbox/mount.c) and the glob matcher split a path. */
int path_next_name(const char **p, char name[NAME_MAX + 1]);
/* Number of components: "/" is 0, "/a/b" is 2. */
size_t path_depth(const char *p);
/* Order paths so that a parent sorts before everything below it and siblings keep a
 * stable order: plain strcmp, except that '/' sorts before every other byte. */
int path_cmp(const char *a, const char *b);
/* A name as git prints it (its C-style quoting, core.quotePath=false), safe to write to a
 * terminal: unchanged when every byte is printable (no C0 control, no DEL), it holds no '"'
 * or '\\' and it is valid UTF-8 without C1 controls (U+0080..U+009F, which some terminals
 * obey like ESC [); else inside double quotes, with \a \b \t \n \v \f \r \" \\ and every
 * other such byte as a three-digit octal escape ("\033").  A name the command chose (a file
 * in a workspace, a refused path) must never reach the user's terminal raw: an ESC or a CR
 * in it could erase a line and print another.  Returns a new string. */
char *path_quote(const char *name);
