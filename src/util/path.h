/* Pure, lexical path helpers: no filesystem access. */
#pragma once
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
/* Number of components: "/" is 0, "/a/b" is 2. */
size_t path_depth(const char *p);
/* Order paths so that a parent sorts before everything below it and siblings keep a
 * stable order: plain strcmp, except that '/' sorts before every other byte. */
int path_cmp(const char *a, const char *b);
