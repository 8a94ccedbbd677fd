/*
 * thread_state.h — for fixtures that wait until one of their threads sleeps before they crash: the state
 * letter of thread `tid` of this process ('R', 'S', 'D', ...: the field after "(comm)" in
 * /proc/self/task/TID/stat; comm may hold spaces and parentheses, so the last ')' ends it), 0 when it
 * cannot be read. Included, not built on its own.
 */
#ifndef FIXTURE_THREAD_STATE_H
#define FIXTURE_THREAD_STATE_H

#include <stdio.h>
#include <string.h>
#include <sys/types.h>

static char thread_state(pid_t tid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *file = fopen(path, "r");
    if (!file)
        return 0;
    char *got = fgets(line, sizeof line, file);
    fclose(file);
    char *end = got ? strrchr(line, ')') : NULL;
    return end && end[1] == ' ' ? end[2] : 0;
}

#endif
