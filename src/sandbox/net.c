// SPDX-License-Identifier: Apache-2.0
#include "sandbox/net.h"

#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "util/cleanup.h"
#include "util/err.h"

int net_loopback_up(cordon_error *err)
{
    _cleanup_fd_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return err_set(err, CORDON_STAGE_NAMESPACES, errno, "cannot open a socket to set up loopback");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strcpy(ifr.ifr_name, "lo");
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
        return err_set(err, CORDON_STAGE_NAMESPACES, errno, "cannot read the flags of lo");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
        return err_set(err, CORDON_STAGE_NAMESPACES, errno, "cannot bring up lo");
    return 0;
}
