/*
 * http.c — HTTP(S) POST through libcurl, for `crashwatch ship` (its gzip is gzip.c).
 *
 * libcurl is loaded with dlopen on first use, not linked: `crashwatch run` (the supervisor, in every
 * service) must not pay for loading libcurl and the TLS, HTTP/2, LDAP and Kerberos libraries it pulls in,
 * and a machine without libcurl4 can still run and read reports. Only `ship` needs it. curl.h gives the
 * types and constants; the functions come from the loaded library.
 */
#define _GNU_SOURCE
#include "ccrashwatch/http.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The libcurl entry points crashwatch uses, resolved once. */
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    curl_version_info_data *(*version_info)(CURLversion);
} curl;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static char curl_load_error[256];
static int curl_loaded;

static void load_curl(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(curl_load_error, sizeof curl_load_error, "%s", dlerror());
        return;
    }
#define RESOLVE(field, symbol)                                                                   \
    do {                                                                                         \
        *(void **)&curl.field = dlsym(library, symbol);                                          \
        if (!curl.field) {                                                                       \
            snprintf(curl_load_error, sizeof curl_load_error, "libcurl.so.4 lacks %s", symbol);  \
            return;                                                                              \
        }                                                                                        \
    } while (0)
    RESOLVE(global_init, "curl_global_init");
    RESOLVE(easy_init, "curl_easy_init");
    RESOLVE(easy_setopt, "curl_easy_setopt");
    RESOLVE(easy_perform, "curl_easy_perform");
    RESOLVE(easy_getinfo, "curl_easy_getinfo");
    RESOLVE(easy_cleanup, "curl_easy_cleanup");
    RESOLVE(easy_strerror, "curl_easy_strerror");
    RESOLVE(slist_append, "curl_slist_append");
    RESOLVE(slist_free_all, "curl_slist_free_all");
    RESOLVE(version_info, "curl_version_info");
#undef RESOLVE
    /* CURLOPT_PROTOCOLS_STR and CURLINFO_RETRY_AFTER need 7.85 and 7.66. */
    curl_version_info_data *info = curl.version_info(CURLVERSION_NOW);
    if (!info || info->version_num < 0x075500) {
        snprintf(curl_load_error, sizeof curl_load_error, "libcurl %s is older than 7.85.0",
                 info ? info->version : "(unknown)");
        return;
    }
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(curl_load_error, sizeof curl_load_error, "curl_global_init failed");
        return;
    }
    curl_loaded = 1;
}

struct cw_http_client {
    CURL *handle;
};

cw_http_client *cw_http_client_new(char *error, size_t error_size) {
    pthread_once(&curl_once, load_curl);
    if (!curl_loaded) {
        snprintf(error, error_size, "cannot load libcurl (Debian package libcurl4): %s", curl_load_error);
        return NULL;
    }
    cw_http_client *client = calloc(1, sizeof *client);
    if (!client) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    client->handle = curl.easy_init();
    if (!client->handle) {
        free(client);
        snprintf(error, error_size, "curl_easy_init failed");
        return NULL;
    }
    return client;
}

void cw_http_client_free(cw_http_client *client) {
    if (!client) return;
    curl.easy_cleanup(client->handle);
    free(client);
}

/* The response body as it arrives, kept up to `limit` bytes. A body longer than that ends the transfer
 * at the limit (`truncated`): the rest is not waited for, and the response is known not to be whole. */
typedef struct {
    unsigned char *bytes;
    size_t length;
    size_t capacity;
    size_t limit;
    int truncated;
} response_buffer;

static size_t collect_body(char *data, size_t size, size_t count, void *context) {
    response_buffer *buffer = context;
    size_t total = size * count;
    size_t room = buffer->limit > buffer->length ? buffer->limit - buffer->length : 0;
    size_t keep = total < room ? total : room;
    if (keep > 0) {
        if (buffer->length + keep > buffer->capacity) {
            size_t capacity = buffer->capacity ? buffer->capacity : 4096;
            while (capacity < buffer->length + keep) capacity *= 2;
            if (capacity > buffer->limit) capacity = buffer->limit;
            unsigned char *grown = realloc(buffer->bytes, capacity);
            if (!grown) return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
            buffer->bytes = grown;
            buffer->capacity = capacity;
        }
        memcpy(buffer->bytes + buffer->length, data, keep);
        buffer->length += keep;
    }
    if (keep == total) return total;
    /* Fewer bytes than given abort the transfer with CURLE_WRITE_ERROR, which cw_http_post turns back
     * into a response (status known, body cut) because `truncated` says why. */
    buffer->truncated = 1;
    return keep;
}

/* libcurl's header callback: keeps the X-Sentry-Rate-Limits header's value (a Sentry server's rate limits,
 * which a 2xx may carry too), cut to the field's size; every other header is left to libcurl. */
static size_t collect_header(char *data, size_t size, size_t count, void *context) {
    cw_http_response *response = context;
    size_t total = size * count;
    static const char name[] = "x-sentry-rate-limits:";
    size_t name_length = sizeof name - 1;
    if (total > name_length && strncasecmp(data, name, name_length) == 0) {
        const char *value = data + name_length;
        size_t length = total - name_length;
        while (length > 0 && (*value == ' ' || *value == '\t')) value++, length--;
        while (length > 0 && (value[length - 1] == '\r' || value[length - 1] == '\n' || value[length - 1] == ' ')) length--;
        if (length >= sizeof response->rate_limits) length = sizeof response->rate_limits - 1;
        memcpy(response->rate_limits, value, length);
        response->rate_limits[length] = 0;
    }
    return total;
}

/* libcurl's progress callback, at least once a second while a request waits: a readable cancel
 * descriptor (the shipper's signalfd, once SIGTERM is pending) abandons the request. */
static int check_cancel(void *context, curl_off_t download_total, curl_off_t downloaded, curl_off_t upload_total,
                        curl_off_t uploaded) {
    (void)download_total, (void)downloaded, (void)upload_total, (void)uploaded;
    struct pollfd descriptor = {.fd = *(int *)context, .events = POLLIN};
    return poll(&descriptor, 1, 0) > 0 ? 1 : 0;
}

#define SET(option, value)                                                               \
    do {                                                                                 \
        CURLcode set_code = curl.easy_setopt(handle, option, value);                     \
        if (set_code != CURLE_OK) {                                                      \
            response->curl_code = set_code;                                              \
            snprintf(response->error, sizeof response->error, "curl_easy_setopt(%s): %s", \
                     #option, curl.easy_strerror(set_code));                             \
            goto done;                                                                   \
        }                                                                                \
    } while (0)

int cw_http_post(cw_http_client *client, const cw_http_request *request, cw_http_response *response) {
    memset(response, 0, sizeof *response);
    response->retry_after_seconds = -1;
    CURL *handle = client->handle;
    struct curl_slist *headers = NULL;
    response_buffer body = {.limit = request->max_response_bytes};
    char error[CURL_ERROR_SIZE] = "";

    for (size_t i = 0; i < request->header_count; i++) {
        struct curl_slist *next = curl.slist_append(headers, request->headers[i]);
        if (!next) {
            response->curl_code = CURLE_OUT_OF_MEMORY;
            snprintf(response->error, sizeof response->error, "out of memory for headers");
            goto done;
        }
        headers = next;
    }
    SET(CURLOPT_URL, request->url);
    /* Only HTTP and HTTPS, never redirected elsewhere: the operator's endpoint is the only server. */
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_POST, 1L);
    SET(CURLOPT_POSTFIELDS, request->body);
    SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request->body_length);
    SET(CURLOPT_HTTPHEADER, headers);
    SET(CURLOPT_USERAGENT, request->user_agent);
    SET(CURLOPT_TIMEOUT_MS, request->timeout_ms);
    SET(CURLOPT_CONNECTTIMEOUT_MS, request->timeout_ms);
    SET(CURLOPT_SSL_VERIFYPEER, 1L);
    SET(CURLOPT_SSL_VERIFYHOST, 2L);
    /* Unset, curl uses the system's CA bundle (Debian: /etc/ssl/certs). */
    if (request->ca_file) SET(CURLOPT_CAINFO, request->ca_file);
    if (request->client_certificate) SET(CURLOPT_SSLCERT, request->client_certificate);
    if (request->client_key) SET(CURLOPT_SSLKEY, request->client_key);
    SET(CURLOPT_WRITEFUNCTION, collect_body);
    SET(CURLOPT_WRITEDATA, &body);
    SET(CURLOPT_HEADERFUNCTION, collect_header);
    SET(CURLOPT_HEADERDATA, response);
    SET(CURLOPT_ERRORBUFFER, error);
    int cancel_fd = request->cancel_fd;
    SET(CURLOPT_NOPROGRESS, cancel_fd >= 0 ? 0L : 1L);
    if (cancel_fd >= 0) {
        SET(CURLOPT_XFERINFOFUNCTION, check_cancel);
        SET(CURLOPT_XFERINFODATA, &cancel_fd);
    }

    CURLcode code = curl.easy_perform(handle);
    if (code == CURLE_WRITE_ERROR && body.truncated) {
        /* Not a failed exchange: the status and headers arrived, the body is longer than the limit. */
        code = CURLE_OK;
        response->body_truncated = 1;
    }
    response->curl_code = code;
    long status = 0;
    if (curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK) response->status = status;
    curl_off_t retry_after = -1;
    if (curl.easy_getinfo(handle, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK && retry_after > 0) {
        response->retry_after_seconds = (int64_t)retry_after;
    }
    if (code != CURLE_OK) {
        snprintf(response->error, sizeof response->error, "%s", error[0] ? error : curl.easy_strerror(code));
    }
    response->body = body.bytes;
    response->body_length = body.length;
    body.bytes = NULL;

done:
    /* The handle keeps its connection for the next request, but none of this request's pointers. */
    curl.easy_setopt(handle, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    curl.easy_setopt(handle, CURLOPT_POSTFIELDS, (char *)NULL);
    curl.easy_setopt(handle, CURLOPT_ERRORBUFFER, (char *)NULL);
    curl.easy_setopt(handle, CURLOPT_WRITEDATA, (void *)NULL);
    curl.easy_setopt(handle, CURLOPT_HEADERDATA, (void *)NULL);
    curl.easy_setopt(handle, CURLOPT_HEADERFUNCTION, (void *)NULL);
    curl.easy_setopt(handle, CURLOPT_XFERINFODATA, (void *)NULL);
    curl.easy_setopt(handle, CURLOPT_NOPROGRESS, 1L);
    curl.slist_free_all(headers);
    free(body.bytes);
    return response->curl_code == CURLE_OK ? 0 : -1;
}

#undef SET

void cw_http_response_free(cw_http_response *response) {
    free(response->body);
    response->body = NULL;
    response->body_length = 0;
}
