/*
 * libreplaced_other — another build of libreplaced.c (OTHER_BUILD: an 8 KiB function placed
 * before the others, so every function of libreplaced.so has another offset here, and another
 * build-id), built into OUTDIR as libreplaced_other.so with the same soname libreplaced.so.
 * replaced_library `replace` copies it to libreplaced.so.new beside itself and renames that
 * over libreplaced.so. A reader that opens the path /proc/PID/maps shows for the mapped
 * library gets this file: wrong CFI, wrong names (other_build_padding), wrong build-id.
 *
 * BUILD: -O2 -g -fomit-frame-pointer -Wl,-soname,libreplaced.so -Wl,--build-id
 */
#define OTHER_BUILD 1
#include "libreplaced.c"
