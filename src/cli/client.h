/*
 * client.h - a small HTTP/1.1 client for talking to tesserad.
 *
 * Just enough HTTP for the daemon's REST API: plain http:// URLs (no TLS),
 * one request per connection (`Connection: close`), bodies framed by
 * Content-Length, chunked transfer encoding or the end of the connection,
 * and a streaming mode that hands a text/event-stream body to a callback
 * one Server-Sent Event at a time.  Calls return 0 or a negative TSR_E*
 * code with a message in the tsr_err; nothing here prints.
 */
#ifndef TESSERA_CLI_CLIENT_H
#define TESSERA_CLI_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "tessera/error.h"

/* A parsed base URL: http://host[:port][/prefix]. */
typedef struct cli_url {
    char host[256];   /* without the brackets of an IPv6 literal */
    char port[8];     /* "80" when the URL names none */
    char prefix[512]; /* path prefix without a trailing slash; "" for none */
    char hostport[272]; /* the Host header: host[:port], IPv6 in brackets */
    char text[800];   /* the URL as shown in messages */
} cli_url;

int cli_url_parse(const char *url, cli_url *out, tsr_err *err);

/* Where and how to connect.  Zero timeouts and cap take the defaults. */
typedef struct cli_http {
    cli_url url;
    const char *token;      /* sent as "Authorization: Bearer TOKEN" when not NULL */
    int connect_timeout_ms; /* default 10 s */
    int read_timeout_ms;    /* silence allowed between bytes; default 30 s */
    size_t max_body;        /* default 64 MiB: a larger answer is TSR_ETOOBIG */
} cli_http;

/* An answer.  body is NUL-terminated (len excludes the NUL) and owned by the
 * response; free it with cli_response_free.  sys_errno is the errno of a
 * failed connection attempt (ECONNREFUSED, ETIMEDOUT, ...), else 0, so a
 * caller can tell "no daemon there" from a broken conversation. */
typedef struct cli_response {
    int status;
    char content_type[128];
    char location[256];
    char *body;
    size_t len;
    int sys_errno;
} cli_response;

void cli_response_free(cli_response *r);

/* One request.  path starts with '/' and may carry a query; the URL's
 * prefix is put before it.  body may be NULL (no body; POST sends
 * Content-Length: 0).  Any HTTP status is a success of this call: the
 * caller looks at resp->status. */
int cli_http_request(const cli_http *h, const char *method, const char *path,
                     const char *content_type, const char *body, size_t len,
                     cli_response *resp, tsr_err *err);

/* One Server-Sent Event.  event is "message" when the stream named none;
 * id is the last id seen on the stream ("" if none). */
typedef struct cli_sse_event {
    const char *event;
    const char *data;
    const char *id;
} cli_sse_event;

/* Return 0 to go on, non-zero to close the stream. */
typedef int (*cli_sse_fn)(void *ctx, const cli_sse_event *ev);

/* GET path with Accept: text/event-stream.  When the answer is 200 with a
 * text/event-stream body, each event goes to fn until the server ends the
 * stream (return 0) or fn asks to stop (TSR_ECANCELED); resp then has the
 * status and headers and no body.  Any other answer is read whole into
 * resp like cli_http_request.  Comment lines (": keepalive") only keep
 * the read timeout from expiring. */
int cli_http_stream(const cli_http *h, const char *path, cli_sse_fn fn, void *ctx,
                    cli_response *resp, tsr_err *err);

/* One line of a JSON-lines answer, without its LF, NUL-terminated.  Return
 * 0 to go on, non-zero to close the connection. */
typedef int (*cli_line_fn)(void *ctx, const char *line, size_t len);

/* GET path whose 200 answer is JSON lines (the export): each line goes to
 * fn as it arrives, never the whole body in memory; resp then has the
 * status and headers and no body.  Any other answer is read whole into
 * resp like cli_http_request.  A body that ends inside a line is TSR_EIO. */
int cli_http_lines(const cli_http *h, const char *path, cli_line_fn fn, void *ctx,
                   cli_response *resp, tsr_err *err);

#endif
