// SPDX-License-Identifier: Apache-2.0
/* ipc: System V IPC and POSIX message queues of the host.
 *
 *   ipc mq-create NAME TEXT     (host) create the POSIX queue /NAME holding one message
 *   ipc mq-count NAME           (host) "mq_count ok N": messages waiting in /NAME
 *   ipc mq-unlink NAME          (host) remove it
 *   ipc attack SHMKEY SHMID MSGKEY SEMKEY MQNAME
 *       open the host's objects by key, id and name (must fail: the sandbox has an IPC
 *       namespace of its own); positive controls: creating objects with the very same
 *       keys and name works inside, and they work (attach, send, receive).
 */
#include "esc.h"

#include <mqueue.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

static key_t key_of(const char *s)
{
    return (key_t)strtoul(s, NULL, 0);
}

int main(int argc, char **argv)
{
    char name[256];
    if (argc >= 3)
        snprintf(name, sizeof name, "/%s", argv[argc == 7 ? 6 : 2]);
    if (argc == 4 && !strcmp(argv[1], "mq-create")) {
        struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = 64};
        mqd_t q = mq_open(name, O_CREAT | O_EXCL | O_WRONLY, 0666, &a);
        if (q == (mqd_t)-1 || mq_send(q, argv[3], strlen(argv[3]), 0) < 0) {
            perror("mq");
            return 1;
        }
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "mq-count")) {
        mqd_t q = mq_open(name, O_RDONLY);
        struct mq_attr a;
        if (q == (mqd_t)-1 || mq_getattr(q, &a) < 0)
            return report("mq_count", -1), 1;
        reportf("mq_count", "%ld", a.mq_curmsgs);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "mq-unlink"))
        return mq_unlink(name) < 0;
    if (argc != 7 || strcmp(argv[1], "attack")) {
        fprintf(stderr, "usage: ipc mq-create NAME TEXT | mq-count NAME | mq-unlink NAME | attack SHMKEY SHMID MSGKEY "
                        "SEMKEY MQNAME\n");
        return 2;
    }
    key_t shmkey = key_of(argv[2]), msgkey = key_of(argv[4]), semkey = key_of(argv[5]);
    int shmid = atoi(argv[3]);

    /* the host's objects */
    report("shmget_host_key", shmget(shmkey, 0, 0));
    void *p = shmat(shmid, NULL, SHM_RDONLY);
    report("shmat_host_id", p == (void *)-1 ? -1 : 0);
    report("msgget_host_key", msgget(msgkey, 0));
    report("semget_host_key", semget(semkey, 0, 0));
    mqd_t q = mq_open(name, O_RDONLY | O_NONBLOCK);
    report("mq_open_host", q == (mqd_t)-1 ? -1 : 0);
    if (q != (mqd_t)-1) {
        char buf[128];
        ssize_t n = mq_receive(q, buf, sizeof buf, NULL);
        report("mq_receive_host", n);
    }

    /* positive controls: the same keys and name are free here, and work */
    int s = shmget(shmkey, 4096, IPC_CREAT | IPC_EXCL | 0600);
    report("control_shmget_same_key", s);
    if (s >= 0) {
        char *m = shmat(s, NULL, 0);
        report("control_shmat", m == (void *)-1 ? -1 : 0);
        if (m != (void *)-1) {
            strcpy(m, "written inside");
            shmdt(m);
        }
        shmctl(s, IPC_RMID, NULL);
    }
    int mq = msgget(msgkey, IPC_CREAT | IPC_EXCL | 0600);
    report("control_msgget_same_key", mq);
    if (mq >= 0) {
        struct {
            long type;
            char text[16];
        } msg = {1, "inside"};
        report("control_msgsnd", msgsnd(mq, &msg, sizeof msg.text, IPC_NOWAIT));
        msgctl(mq, IPC_RMID, NULL);
    }
    int sem = semget(semkey, 1, IPC_CREAT | IPC_EXCL | 0600);
    report("control_semget_same_key", sem);
    if (sem >= 0)
        semctl(sem, 0, IPC_RMID);
    struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = 64};
    mqd_t own = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, &a);
    report("control_mq_same_name", own == (mqd_t)-1 ? -1 : 0);
    if (own != (mqd_t)-1) {
        char buf[64];
        mq_send(own, "inside", 6, 0);
        report("control_mq_roundtrip", mq_receive(own, buf, sizeof buf, NULL));
        mq_unlink(name);
    }
    return 0;
}
