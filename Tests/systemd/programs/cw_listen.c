/* cw_listen STATEFILE: a socket-activated service. Requires sd_listen_fds(0) == 1 (else exits 4) and
 * answers each connection on that socket with one line, "hello from cw_listen <pid>". */
#include "common.h"
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cw_listen STATEFILE\n");
        return 64;
    }
    int count = sd_listen_fds(0);
    write_state(argv[1], ENV_STATE_FORMAT "listen_fds=%d\n", ENV_STATE_ARGS, count);
    if (count != 1) {
        fprintf(stderr, "cw_listen: sd_listen_fds(0) = %d (LISTEN_PID=%s, my pid %d)\n", count,
                env_or("LISTEN_PID", "(unset)"), (int)getpid());
        return 4;
    }
    for (;;) {
        int connection = accept(SD_LISTEN_FDS_START, NULL, NULL);
        if (connection < 0) {
            if (errno == EINTR) continue;
            perror("cw_listen: accept");
            return 5;
        }
        dprintf(connection, "hello from cw_listen %d\n", (int)getpid());
        close(connection);
    }
}
