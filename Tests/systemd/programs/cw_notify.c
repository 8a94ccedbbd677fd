/* cw_notify STATEFILE STATUS: a Type=notify service: sends READY=1, then STATUS=<STATUS>, records what
 * sd_notify returned and its environment in STATEFILE, then sleeps. */
#include "common.h"
#include <systemd/sd-daemon.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cw_notify STATEFILE STATUS\n");
        return 64;
    }
    int ready = sd_notify(0, "READY=1");
    char status[1024];
    snprintf(status, sizeof status, "STATUS=%s", argv[2]);
    int status_sent = sd_notify(0, status);
    write_state(argv[1], ENV_STATE_FORMAT "ready_result=%d\nstatus_result=%d\n", ENV_STATE_ARGS, ready,
                status_sent);
    printf("cw_notify: READY=1 -> %d, %s -> %d\n", ready, status, status_sent);
    fflush(stdout);
    for (;;) pause();
}
