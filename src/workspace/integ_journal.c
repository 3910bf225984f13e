// SPDX-License-Identifier: Apache-2.0
/* journal.json (integ.h): what an integration in progress has decided, written
 * atomically at each step, so that whoever finds it finishes or undoes the integration. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"
#include "util/trace.h"
#include "workspace/integ.h"
#include "workspace/ws.h"

void integ_journal_free(journal *j)
{
    for (size_t i = 0; i < j->n; i++) {
        free(j->v[i].path);
        free(j->v[i].from);
        free(j->v[i].oid);
    }
    free(j->v);
    free(j->phase);
    free(j->branch);
    free(j->old);
    free(j->commit);
    free(j->message);
    free(j->stage);
    free(j->boot);
    *j = (journal){0};
}

char *integ_dupn(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

void integ_setstr(char **dst, const char *v)
{
    free(*dst);
    *dst = integ_dupn(v);
}

int integ_journal_write(const cordon_workspace *ws, const journal *j, cordon_error *err)
{
    json_t *o = json_object();
    json_object_set_new(o, "version", json_integer(1));
    json_object_set_new(o, "phase", json_string(j->phase));
    json_object_set_new(o, "git", json_boolean(j->git));
    json_object_set_new(o, "worktree", json_boolean(j->worktree));
    json_object_set_new(o, "ref_done", json_boolean(j->ref_done));
    json_object_set_new(o, "files_done", json_boolean(j->files_done));
    json_object_set_new(o, "branch", j->branch ? json_string(j->branch) : json_null());
    json_object_set_new(o, "old", j->old ? json_string(j->old) : json_null());
    json_object_set_new(o, "commit", j->commit ? json_string(j->commit) : json_null());
    json_object_set_new(o, "message", j->message ? json_string(j->message) : json_null());
    json_object_set_new(o, "stage", j->stage ? json_string(j->stage) : json_null());
    json_object_set_new(o, "boot", j->boot ? json_string(j->boot) : json_null());
    json_t *a = json_array();
    for (size_t i = 0; i < j->n; i++) {
        const jrec *r = &j->v[i];
        json_t *e = json_object();
        char st[2] = {r->status, 0};
        json_object_set_new(e, "s", json_string(st));
        json_object_set_new(e, "p", json_string(r->path));
        json_object_set_new(e, "m", json_integer(r->mode));
        if (r->from)
            json_object_set_new(e, "f", json_string(r->from));
        if (r->oid)
            json_object_set_new(e, "o", json_string(r->oid));
        json_array_append_new(a, e);
    }
    json_object_set_new(o, "changes", a);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text)
        return err_set(err, CORDON_STAGE_WORKSPACE, ENOMEM, "journal");
    int r = ws_write_atomic(ws->dir, INTEG_JOURNAL, text, strlen(text), err);
    free(text);
    return r;
}

int integ_journal_read(const cordon_workspace *ws, journal *j, cordon_error *err)
{
    *j = (journal){0};
    char *path = ws_path(ws, INTEG_JOURNAL);
    size_t len;
    char *text = ws_read_file(path, (size_t)1 << 30, &len);
    int e = errno;
    free(path);
    if (!text)
        return err_set(err, CORDON_STAGE_WORKSPACE, e, "workspace %s: cannot read its journal", ws->st.name);
    json_error_t je;
    json_t *o = json_loadb(text, len, 0, &je);
    free(text);
    json_t *a = o ? json_object_get(o, "changes") : NULL;
    const char *phase = o ? json_string_value(json_object_get(o, "phase")) : NULL;
    if (!o || !json_is_array(a) || !phase || (strcmp(phase, "stage") != 0 && strcmp(phase, "apply") != 0)) {
        json_decref(o);
        return err_set(err, CORDON_STAGE_WORKSPACE, 0,
                       "workspace %s: its journal %s/%s is corrupt; an integration was interrupted and cannot be "
                       "finished: check the source, then remove the journal",
                       ws->st.name, ws->dir, INTEG_JOURNAL);
    }
    j->phase = xstrdup(phase);
    j->git = json_is_true(json_object_get(o, "git"));
    j->worktree = json_is_true(json_object_get(o, "worktree"));
    j->ref_done = json_is_true(json_object_get(o, "ref_done"));
    j->files_done = json_is_true(json_object_get(o, "files_done"));
    j->branch = integ_dupn(json_string_value(json_object_get(o, "branch")));
    j->old = integ_dupn(json_string_value(json_object_get(o, "old")));
    j->commit = integ_dupn(json_string_value(json_object_get(o, "commit")));
    j->message = integ_dupn(json_string_value(json_object_get(o, "message")));
    j->stage = integ_dupn(json_string_value(json_object_get(o, "stage")));
    j->boot = integ_dupn(json_string_value(json_object_get(o, "boot")));
    size_t i;
    json_t *el;
    json_array_foreach(a, i, el)
    {
        const char *s = json_string_value(json_object_get(el, "s"));
        const char *p = json_string_value(json_object_get(el, "p"));
        if (!s || !p)
            continue;
        grow(&j->v, &j->cap, j->n + 1, sizeof *j->v);
        j->v[j->n++] = (jrec){
            .status = s[0],
            .path = xstrdup(p),
            .mode = (unsigned)json_integer_value(json_object_get(el, "m")),
            .from = integ_dupn(json_string_value(json_object_get(el, "f"))),
            .oid = integ_dupn(json_string_value(json_object_get(el, "o"))),
        };
    }
    json_decref(o);
    return 0;
}

bool ws_journal_pending(const cordon_workspace *ws)
{
    char *p = ws_path(ws, INTEG_JOURNAL);
    bool yes = access(p, F_OK) == 0;
    free(p);
    return yes;
}

int integ_journal_remove(const cordon_workspace *ws, cordon_error *err)
{
    char *p = ws_path(ws, INTEG_JOURNAL);
    int r = unlink(p) < 0 && errno != ENOENT ? err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot remove %s", p) : 0;
    free(p);
    _cleanup_fd_ int d = open(ws->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d >= 0)
        fsync(d);
    return r;
}
