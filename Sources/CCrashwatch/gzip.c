/*
 * gzip.c — gzip through zlib (already loaded by libdw): whole buffers for shipped requests, and a stream
 * written to a file as its input arrives for the cores `core-handler` keeps.
 */
#define _GNU_SOURCE
#include "ccrashwatch/gzip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

int cw_gzip(const void *data, size_t length, unsigned char **out, size_t *out_length) {
    *out = NULL;
    *out_length = 0;
    if (length > (size_t)UINT32_MAX) {
        errno = EFBIG;
        return -1;
    }
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    /* windowBits 15 + 16: a gzip header and trailer around the deflate stream. */
    if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        errno = ENOMEM;
        return -1;
    }
    uLong bound = deflateBound(&stream, (uLong)length);
    unsigned char *buffer = malloc(bound);
    if (!buffer) {
        deflateEnd(&stream);
        errno = ENOMEM;
        return -1;
    }
    stream.next_in = (Bytef *)data;
    stream.avail_in = (uInt)length;
    stream.next_out = buffer;
    stream.avail_out = (uInt)bound;
    int result = deflate(&stream, Z_FINISH);
    if (result != Z_STREAM_END) {
        deflateEnd(&stream);
        free(buffer);
        errno = EINVAL;
        return -1;
    }
    *out = buffer;
    *out_length = stream.total_out;
    deflateEnd(&stream);
    return 0;
}

/* A gzip stream written to a file as its input arrives (a core dump kept by `core-handler`). */
struct cw_gzip_writer {
    z_stream stream;
    int fd;
    uint64_t written;
    unsigned char buffer[1 << 16];
};

cw_gzip_writer *cw_gzip_writer_create(int fd, int level) {
    cw_gzip_writer *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    if (deflateInit2(&w->stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(w);
        errno = ENOMEM;
        return NULL;
    }
    w->fd = fd;
    return w;
}

/* Runs deflate with `flush` until it wants more input (or, for Z_FINISH, ends), writing what it makes. */
static int gzip_pump(cw_gzip_writer *w, int flush) {
    for (;;) {
        w->stream.next_out = w->buffer;
        w->stream.avail_out = sizeof w->buffer;
        int result = deflate(&w->stream, flush);
        if (result == Z_STREAM_ERROR) {
            errno = EINVAL;
            return -1;
        }
        size_t made = sizeof w->buffer - w->stream.avail_out;
        for (size_t done = 0; done < made;) {
            ssize_t n = write(w->fd, w->buffer + done, made - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return -1;
            done += (size_t)n;
        }
        w->written += made;
        if (flush == Z_FINISH ? result == Z_STREAM_END : w->stream.avail_out != 0) return 0;
    }
}

int cw_gzip_writer_write(cw_gzip_writer *w, const void *data, size_t length) {
    while (length > 0) {
        uInt chunk = length > (1u << 30) ? (1u << 30) : (uInt)length;
        w->stream.next_in = (Bytef *)data;
        w->stream.avail_in = chunk;
        if (gzip_pump(w, Z_NO_FLUSH) != 0) return -1;
        data = (const unsigned char *)data + chunk;
        length -= chunk;
    }
    return 0;
}

int cw_gzip_writer_finish(cw_gzip_writer *w) {
    w->stream.next_in = NULL;
    w->stream.avail_in = 0;
    return gzip_pump(w, Z_FINISH);
}

uint64_t cw_gzip_writer_written(const cw_gzip_writer *w) {
    return w->written;
}

void cw_gzip_writer_destroy(cw_gzip_writer *w) {
    if (!w) return;
    deflateEnd(&w->stream);
    free(w);
}

int cw_gunzip_fd(int in, int out) {
    int copy = dup(in);
    if (copy < 0) return -1;
    gzFile file = gzdopen(copy, "rb");
    if (file == NULL) {
        close(copy);
        errno = ENOMEM;
        return -1;
    }
    unsigned char buffer[65536];
    int result = 0;
    for (;;) {
        int got = gzread(file, buffer, sizeof buffer);
        if (got == 0) break;
        if (gzdirect(file)) { /* zlib passes other data through as it is: only gzip is taken */
            errno = EINVAL;
            result = -1;
            break;
        }
        if (got < 0) {
            errno = EINVAL;
            result = -1;
            break;
        }
        for (int done = 0; done < got;) {
            ssize_t written = write(out, buffer + done, (size_t)(got - done));
            if (written < 0 && errno == EINTR) continue;
            if (written <= 0) {
                result = -1;
                break;
            }
            done += (int)written;
        }
        if (result != 0) break;
    }
    int saved = errno;
    gzclose(file);
    errno = saved;
    return result;
}
