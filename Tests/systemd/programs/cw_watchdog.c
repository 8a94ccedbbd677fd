/* cw_watchdog STATEFILE: a service under WatchdogSec=. Exits 3 unless sd_watchdog_enabled() > 0; else
 * pings WATCHDOG=1 every 300 ms. On SIGUSR2 it stops pinging and spins forever in hang_here(). */
#include "common.h"
#include <systemd/sd-daemon.h>

static volatile sig_atomic_t hang_requested;
static volatile unsigned long spins;

static void on_usr2(int signo)
{
    (void)signo;
    hang_requested = 1;
}

__attribute__((noinline)) void hang_here(void)
{
    for (;;) spins = spins + 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cw_watchdog STATEFILE\n");
        return 64;
    }
    uint64_t usec = 0;
    int enabled = sd_watchdog_enabled(0, &usec);
    write_state(argv[1], ENV_STATE_FORMAT "watchdog_enabled=%d\nwatchdog_usec=%llu\n", ENV_STATE_ARGS, enabled,
                (unsigned long long)usec);
    if (enabled <= 0) {
        fprintf(stderr, "cw_watchdog: sd_watchdog_enabled() = %d (WATCHDOG_PID=%s, my pid %d)\n", enabled,
                env_or("WATCHDOG_PID", "(unset)"), (int)getpid());
        return 3;
    }
    struct sigaction action = {.sa_handler = on_usr2};
    sigaction(SIGUSR2, &action, NULL);
    unsigned long pings = 0;
    for (;;) {
        if (hang_requested) {
            write_state(argv[1], ENV_STATE_FORMAT "watchdog_enabled=%d\nwatchdog_usec=%llu\npings=%lu\nhanging=1\n",
                        ENV_STATE_ARGS, enabled, (unsigned long long)usec, pings);
            printf("cw_watchdog: hanging after %lu pings\n", pings);
            fflush(stdout);
            hang_here();
        }
        sd_notify(0, "WATCHDOG=1");
        pings++;
        sleep_ms(300);
    }
}
