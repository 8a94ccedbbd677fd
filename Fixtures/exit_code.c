/*
 * exit_code — exits normally with the status given as argv[1] (default 3); never crashes.
 *
 * BUILD: -O0 -g
 * ARGS: 42
 * EXIT: code 42
 * CRASHES: 0
 * STDOUT:
 */
#include <stdlib.h>

int main(int argc, char **argv)
{
    int code = 3;
    if (argc > 1)
        code = atoi(argv[1]);
    return code & 0xff;
}
