#pragma once
#include <stddef.h>
#include <sys/types.h>

/* Write/read all of buf, retrying on EINTR and short transfers. */
int write_all(int fd, const void *buf, size_t n);
ssize_t read_all(int fd, void *buf, size_t n);
/* Close every descriptor >= 3 except those in keep[] (n entries). */
int close_fds_except(const int *keep, size_t n);
/* Mark every descriptor >= 3 close-on-exec. */
int cloexec_all_fds(void);
