/*
 * http.h — HTTP(S) POST through libcurl, loaded on first use (http.c).
 */
#ifndef CCRASHWATCH_HTTP_H
#define CCRASHWATCH_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A reusable HTTP client (one libcurl easy handle: its connection is kept for the next request). */
typedef struct cw_http_client cw_http_client;

/** A POST request. Pointers are borrowed for the call only. */
typedef struct {
    const char *url;                  /* http:// or https:// only; redirects are not followed */
    char *const *headers;             /* "Name: value" lines */
    size_t header_count;
    const void *body;
    size_t body_length;
    long timeout_ms;                  /* the whole request, connection included */
    const char *user_agent;
    const char *ca_file;              /* PEM CA bundle; NULL: the system's */
    const char *client_certificate;   /* PEM client certificate for mutual TLS; NULL: none */
    const char *client_key;           /* its PEM key; NULL: in the certificate file */
    size_t max_response_bytes;        /* the response body kept; a longer one ends the transfer there */
    int cancel_fd;                    /* readable: abandon the request (CURLE_ABORTED_BY_CALLBACK); -1: none */
} cw_http_request;

/** What came back: a status, or a libcurl error code and message. */
typedef struct {
    long status;                      /* the HTTP status; 0 when no response arrived */
    int curl_code;                    /* CURLcode: 0 when the exchange completed */
    char error[256];                  /* libcurl's message when curl_code != 0 */
    int64_t retry_after_seconds;      /* Retry-After (seconds or HTTP date, as libcurl parses it); -1: none */
    unsigned char *body;              /* malloc'd; free with cw_http_response_free */
    size_t body_length;
    int body_truncated;               /* 1: the body was longer than max_response_bytes and was cut there */
    char rate_limits[512];            /* the X-Sentry-Rate-Limits header's value, cut at 511 bytes; "" when none */
} cw_http_response;

/** Loads libcurl (first call) and makes a client; NULL with a message in `error` when it cannot. */
cw_http_client *cw_http_client_new(char *error, size_t error_size);

/** Frees a client and closes its connection. */
void cw_http_client_free(cw_http_client *client);

/** POSTs `request`; 0 when a response arrived (any status), -1 when the exchange failed (`curl_code`, `error`). */
int cw_http_post(cw_http_client *client, const cw_http_request *request, cw_http_response *response);

/** Frees a response's body. */
void cw_http_response_free(cw_http_response *response);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_HTTP_H */
