/* cw_oom: allocates and touches memory 1 MiB at a time until it is killed (a MemoryMax= test); exits 1
 * after 8 GiB (the limit did not work). */
#include "common.h"

int main(void)
{
    size_t chunk = 1 << 20;
    for (size_t mib = 1; mib <= 8192; mib++) {
        char *block = malloc(chunk);
        if (!block) {
            printf("cw_oom: malloc failed at %zu MiB\n", mib);
            return 2;
        }
        memset(block, (int)mib, chunk);
        if (mib % 16 == 0) {
            printf("cw_oom: %zu MiB touched\n", mib);
            fflush(stdout);
        }
    }
    printf("cw_oom: 8 GiB touched and still alive: no memory limit\n");
    return 1;
}
