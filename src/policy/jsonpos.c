// SPDX-License-Identifier: Apache-2.0
#include "policy/jsonpos.h"

#include <stdbool.h>
#include <string.h>

/* A read position in the text.  Every access is bounded by len (the text is not
 * NUL-terminated and may hold anything if a caller passes unchecked input: then the
 * walk simply finds nothing). */
typedef struct cursor {
    const char *s;
    size_t len, pos;
    int line;
} cursor;

static bool at(const cursor *c, char ch)
{
    return c->pos < c->len && c->s[c->pos] == ch;
}

/* JSON whitespace is exactly these four; jansson counts lines by '\n' alone. */
static bool is_ws(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static bool is_delimiter(char ch)
{
    return is_ws(ch) || ch == ',' || ch == ':' || ch == ']' || ch == '}';
}

static void skip_ws(cursor *c)
{
    while (c->pos < c->len && is_ws(c->s[c->pos])) {
        if (c->s[c->pos] == '\n')
            c->line++;
        c->pos++;
    }
}

/* At an opening quote: move past the closing one.  body and body_len receive the raw
 * (still escaped) contents.  An escape is a backslash and the byte after it; the hex
 * digits of \uXXXX contain no quote, so they need no special case here. */
static bool skip_string(cursor *c, const char **body, size_t *body_len)
{
    if (!at(c, '"'))
        return false;
    size_t start = ++c->pos;
    while (c->pos < c->len) {
        char ch = c->s[c->pos++];
        if (ch == '\\') {
            c->pos++;
        } else if (ch == '"') {
            if (body) {
                *body = c->s + start;
                *body_len = c->pos - 1 - start;
            }
            return true;
        } else if (ch == '\n') {
            c->line++; /* not valid JSON, but keep counting honestly */
        }
    }
    return false;
}

/* Skip one complete value.  Iterative with a depth counter, so deep nesting costs no
 * stack; inside containers ',' and ':' are just separators to step over. */
static void skip_value(cursor *c)
{
    long depth = 0;
    do {
        skip_ws(c);
        if (c->pos >= c->len)
            return;
        char ch = c->s[c->pos];
        if (ch == '"') {
            if (!skip_string(c, NULL, NULL))
                return;
        } else if (ch == '{' || ch == '[') {
            depth++;
            c->pos++;
        } else if (ch == '}' || ch == ']') {
            depth--;
            c->pos++;
        } else if (ch == ',' || ch == ':') {
            c->pos++;
        } else {
            /* a number, true, false or null: up to the next delimiter (at least one byte) */
            do
                c->pos++;
            while (c->pos < c->len && !is_delimiter(c->s[c->pos]));
        }
    } while (depth > 0);
}

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

static bool hex4(const char *s, size_t n, size_t i, unsigned *out)
{
    if (i + 4 > n)
        return false;
    unsigned v = 0;
    for (size_t k = 0; k < 4; k++) {
        int d = hex_digit(s[i + k]);
        if (d < 0)
            return false;
        v = v << 4 | (unsigned)d;
    }
    *out = v;
    return true;
}

static size_t utf8_encode(unsigned cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decode the escape whose letter is raw[*i] (the byte after the backslash) into out;
 * returns the number of bytes, 0 for a malformed escape.  A \uD8xx\uDCxx pair is one
 * code point, as jansson decodes it. */
static size_t unescape(const char *raw, size_t n, size_t *i, char out[4])
{
    char ch = raw[(*i)++];
    switch (ch) {
    case 'b': out[0] = '\b'; return 1;
    case 'f': out[0] = '\f'; return 1;
    case 'n': out[0] = '\n'; return 1;
    case 'r': out[0] = '\r'; return 1;
    case 't': out[0] = '\t'; return 1;
    case 'u': break;
    default: out[0] = ch; return 1; /* \" \\ \/ */
    }
    unsigned cp, lo;
    if (!hex4(raw, n, *i, &cp))
        return 0;
    *i += 4;
    if (cp >= 0xD800 && cp <= 0xDBFF && *i + 6 <= n && raw[*i] == '\\' && raw[*i + 1] == 'u' &&
        hex4(raw, n, *i + 2, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        *i += 6;
    }
    return utf8_encode(cp, out);
}

/* Does the raw JSON string body decode to exactly `want`? */
static bool key_equals(const char *raw, size_t n, const char *want)
{
    size_t wlen = strlen(want), w = 0, i = 0;
    while (i < n) {
        char buf[4];
        size_t k = 1;
        if (raw[i] == '\\' && i + 1 < n) {
            i++;
            k = unescape(raw, n, &i, buf);
        } else {
            buf[0] = raw[i++];
        }
        if (k == 0 || w + k > wlen || memcmp(want + w, buf, k) != 0)
            return false;
        w += k;
    }
    return w == wlen;
}

/* At '{': leave the cursor on the value of member `key`; returns the key's line. */
static int find_member(cursor *c, const char *key)
{
    if (!at(c, '{'))
        return 0;
    c->pos++;
    for (;;) {
        skip_ws(c);
        int line = c->line;
        const char *name;
        size_t name_len;
        if (!skip_string(c, &name, &name_len))
            return 0; /* '}' (no such member) or garbage */
        skip_ws(c);
        if (!at(c, ':'))
            return 0;
        c->pos++;
        skip_ws(c);
        if (key_equals(name, name_len, key))
            return line;
        skip_value(c);
        skip_ws(c);
        if (!at(c, ','))
            return 0;
        c->pos++;
    }
}

/* At '[': step to the first element; false when the array is empty or this is not one. */
static bool enter_array(cursor *c)
{
    if (!at(c, '['))
        return false;
    c->pos++;
    skip_ws(c);
    return c->pos < c->len && !at(c, ']');
}

/* After an element: step to the next one; false at the end of the array. */
static bool next_element(cursor *c)
{
    skip_value(c);
    skip_ws(c);
    if (!at(c, ','))
        return false;
    c->pos++;
    skip_ws(c);
    return c->pos < c->len;
}

/* At '[': leave the cursor on element `index`; returns its line. */
static int find_element(cursor *c, size_t index)
{
    if (!enter_array(c))
        return 0;
    for (size_t i = 0; i < index; i++)
        if (!next_element(c))
            return 0;
    return c->line;
}

/* Follow the path from the top-level value; returns the line of the last step. */
static int walk(cursor *c, const jsonpos_step *path, size_t n)
{
    skip_ws(c);
    if (c->pos >= c->len)
        return 0;
    int line = c->line;
    for (size_t i = 0; i < n && line > 0; i++) {
        skip_ws(c);
        line = path[i].key ? find_member(c, path[i].key) : find_element(c, path[i].index);
    }
    return line;
}

int jsonpos_line(const char *text, size_t len, const jsonpos_step *path, size_t n)
{
    cursor c = {.s = text, .len = text ? len : 0, .pos = 0, .line = 1};
    return walk(&c, path, n);
}

size_t jsonpos_array_lines(const char *text, size_t len, const jsonpos_step *path, size_t n, int *lines, size_t count)
{
    for (size_t i = 0; i < count; i++)
        lines[i] = 0;
    if (count == 0)
        return 0;
    cursor c = {.s = text, .len = text ? len : 0, .pos = 0, .line = 1};
    if (walk(&c, path, n) == 0)
        return 0;
    skip_ws(&c);
    if (!enter_array(&c))
        return 0;
    size_t found = 0;
    do
        lines[found++] = c.line;
    while (found < count && next_element(&c));
    return found;
}
