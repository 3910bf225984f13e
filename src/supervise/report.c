#include "supervise/report.h"

#include <stdio.h>
#include <string.h>

#include "util/fdutil.h"

void report_send(int fd, report_kind kind, const cordon_error *e, int value, const char *text)
{
    report_msg m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.value = value;
    if (e) {
        m.stage = (int32_t)e->stage;
        m.errnum = e->errnum;
        snprintf(m.text, sizeof m.text, "%.*s", (int)sizeof m.text - 1, e->message);
    } else if (text) {
        snprintf(m.text, sizeof m.text, "%.*s", (int)sizeof m.text - 1, text);
    }
    /* Nothing useful can be done if cordon is gone; the exit status still tells. */
    (void)write_all(fd, &m, sizeof m);
}
