/*
 * gzip.h — gzip through zlib, for shipped requests (gzip.c).
 */
#ifndef CCRASHWATCH_GZIP_H
#define CCRASHWATCH_GZIP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Compresses `length` bytes into a malloc'd gzip member (`*out`, `*out_length`); 0, or -1 with errno. */
int cw_gzip(const void *data, size_t length, unsigned char **out, size_t *out_length);

/** A gzip stream written to a file descriptor (not owned) as its input arrives. */
typedef struct cw_gzip_writer cw_gzip_writer;

/** Starts a gzip stream at zlib `level` (1 fastest … 9 smallest) on `fd`; NULL with errno. */
cw_gzip_writer *cw_gzip_writer_create(int fd, int level);

/** Compresses `length` bytes into the stream, writing what comes out; 0, or -1 with errno. */
int cw_gzip_writer_write(cw_gzip_writer *writer, const void *data, size_t length);

/** Ends the stream (the gzip trailer) and writes the rest; 0, or -1 with errno. */
int cw_gzip_writer_finish(cw_gzip_writer *writer);

/** Compressed bytes written to the file so far. */
uint64_t cw_gzip_writer_written(const cw_gzip_writer *writer);

void cw_gzip_writer_destroy(cw_gzip_writer *writer);

/* Inflates the gzip stream read from `in` and writes it to `out`. 0, or -1 with errno (EINVAL: not gzip or
 * damaged). */
int cw_gunzip_fd(int in, int out);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_GZIP_H */
