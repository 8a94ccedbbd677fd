/* cw_sleep STATEFILE [LINE]: writes its pid and the environment systemd gave it (LISTEN_*, WATCHDOG_*,
 * NOTIFY_SOCKET) to STATEFILE, prints LINE (if given) to stdout, then sleeps until a signal kills it. */
#include "common.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cw_sleep STATEFILE [LINE]\n");
        return 64;
    }
    if (argc > 2) {
        printf("%s\n", argv[2]);
        fflush(stdout);
    }
    write_state(argv[1], ENV_STATE_FORMAT, ENV_STATE_ARGS);
    for (;;) pause();
}
