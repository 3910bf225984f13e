// SPDX-License-Identifier: Apache-2.0
/* The report pipe from the sandbox to cordon (report.h): its messages, written whole. */
#include "supervise/report.h"

#include <string.h>
#include <unistd.h>

#include "util/fdutil.h"

void report_send(int fd, report_kind kind, const cordon_error *e, int value, const char *text)
{
    report_msg m;
    report_fill(&m, kind, e, value, text);
    /* Nothing useful can be done if cordon is gone; the exit status still tells. */
    (void)write_all(fd, &m, sizeof m);
}

void report_fill(report_msg *mp, report_kind kind, const cordon_error *e, int value, const char *text)
{
    report_msg m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.value = value;
    if (e) {
        m.stage = (int32_t)e->stage;
        m.errnum = e->errnum;
        memcpy(m.option, e->option, sizeof m.option);
        m.option[sizeof m.option - 1] = '\0';
        text = e->message;
    }
    if (text && strlen(text) >= sizeof m.text) {
        /* cut visibly, as err_set does */
        memcpy(m.text, text, sizeof m.text - 4);
        memcpy(m.text + sizeof m.text - 4, "...", 4);
    } else if (text) {
        memcpy(m.text, text, strlen(text) + 1);
    }
    *mp = m;
}

void report_fail(int fd, const cordon_error *e)
{
    report_send(fd, REPORT_SETUP_ERROR, e, 0, NULL);
    _exit(CORDON_EXIT_SETUP);
}
