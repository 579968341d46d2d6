/*
 * trust.h - which requests the HTTP server takes as coming from its user
 * (used by server.c; docs/api.md, "Security model", says it for users).
 *
 * A daemon on loopback without a token is within reach of every web page
 * its user opens.  A page may send a "simple" cross-origin request (a form
 * post, a fetch of text/plain, a bodiless POST) and the browser delivers it
 * without asking the server first; and a page on a name its author
 * controls can point that name at 127.0.0.1 (DNS rebinding) and then read
 * the answers as its own.  Three rules close both:
 *
 *   - Host.  Every request's Host names this server: the address it
 *     listens on (any address literal when it listens on all of them), a
 *     loopback address, `localhost`, or a name given with --allow-host.
 *     A rebound name arrives with the attacker's name in Host and fails.
 *   - Origin.  A request that can change something (every method but GET
 *     and HEAD) that a browser marks as coming from a page (Origin, or
 *     Sec-Fetch-Site) must come from the server's own origin (the Host it
 *     was sent to, over http) or from an origin given with --allow-origin.
 *   - Content-Type.  A request body is application/json, which no page
 *     can send to another origin without a CORS preflight, and the server
 *     answers no preflight with a permission.
 *
 * Programs that are not browsers (curl, tessera) send no Origin and pass
 * the second rule; the third only asks them to say what they send.
 */
#ifndef SRV_TRUST_H
#define SRV_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "tessera/error.h"

#define TRUST_MAX_NAMES 64 /* --allow-host and --allow-origin entries, each */

typedef struct trust trust;

/* The rules for a server listening on `listen` (its address: an IPv4 or
 * IPv6 address, the wildcard for all), with the extra host names and
 * origins allowed.  A name or origin that does not parse is refused
 * (TSR_EINVAL), its message naming it. */
int trust_new(const struct sockaddr *listen, const char *const *hosts, int nhosts,
              const char *const *origins, int norigins, trust **out, tsr_err *err);
void trust_free(trust *t); /* NULL is fine */

/* Does the Host header value `host` name this server?  NULL (no Host: an
 * HTTP/1.0 client, never a browser) passes. */
bool trust_host(const trust *t, const char *host);

/* May a request that can change something, sent to Host `host` with the
 * Origin and Sec-Fetch-Site headers given (each NULL when absent), go on?
 * NULL when it may, else why not, one sentence naming the origin. */
const char *trust_write(const trust *t, const char *host, const char *origin,
                        const char *fetch_site, char *why, size_t cap);

/* Is a Content-Type header value application/json (parameters such as
 * charset aside)? */
bool trust_json_type(const char *content_type);

#endif
