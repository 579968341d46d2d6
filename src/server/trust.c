/*
 * trust.c - the Host, Origin and Content-Type rules of the HTTP server
 * (the reasons are in trust.h).
 *
 * Everything here is a pure function of header values and the settings
 * fixed at start, so the rules can be read and tested on their own.  Host
 * names and origins are compared in one normal form: lower case, an IPv6
 * address without its brackets, no trailing dot, and the port a number
 * (the scheme's default when absent).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/server_impl.h"
#include "server/trust.h"

#define NAME_MAX_LEN 253 /* a DNS name; an address literal is shorter */

/* A host in normal form, with its port (-1: none given). */
typedef struct hostport {
    char name[NAME_MAX_LEN + 1];
    int port;
    bool bracketed; /* written [..]: an IPv6 literal */
} hostport;

/* An origin: scheme://host[:port], the port made explicit. */
typedef struct origin {
    char scheme[16];
    hostport at;
} origin;

struct trust {
    struct sockaddr_storage listen;
    bool wildcard;                      /* listening on every address */
    char hosts[TRUST_MAX_NAMES][NAME_MAX_LEN + 1];
    int nhosts;
    origin origins[TRUST_MAX_NAMES];
    int norigins;
};

/* "name", "name:port", "[v6]" or "[v6]:port" (the Host header's syntax)
 * into *hp; false for anything else. */
static bool parse_hostport(const char *s, size_t n, hostport *hp)
{
    const char *name = s, *port = NULL;
    size_t nl = n;
    hp->bracketed = n > 0 && s[0] == '[';
    if (hp->bracketed) {
        const char *close = memchr(s, ']', n);
        if (close == NULL)
            return false;
        name = s + 1;
        nl = (size_t)(close - name);
        const char *rest = close + 1;
        if (rest < s + n) {
            if (*rest != ':')
                return false;
            port = rest + 1;
        }
    } else {
        const char *colon = memchr(s, ':', n);
        if (colon != NULL) {
            if (memchr(colon + 1, ':', (size_t)(s + n - colon - 1)) != NULL)
                return false; /* an IPv6 literal must be bracketed */
            nl = (size_t)(colon - s);
            port = colon + 1;
        }
    }
    if (nl > 1 && name[nl - 1] == '.' && !hp->bracketed)
        nl--; /* "localhost." is localhost */
    if (nl == 0 || nl > NAME_MAX_LEN)
        return false;
    for (size_t i = 0; i < nl; i++) {
        unsigned char ch = (unsigned char)name[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' ||
                  (hp->bracketed && ch == ':');
        if (!ok)
            return false;
        hp->name[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
    }
    hp->name[nl] = '\0';
    hp->port = -1;
    if (port != NULL) {
        size_t pl = (size_t)(s + n - port);
        if (pl == 0 || pl > 5)
            return false;
        int v = 0;
        for (size_t i = 0; i < pl; i++) {
            if (port[i] < '0' || port[i] > '9')
                return false;
            v = v * 10 + (port[i] - '0');
        }
        if (v > 65535)
            return false;
        hp->port = v;
    }
    return true;
}

/* "scheme://host[:port]" (an Origin header's syntax, no path) into *o. */
static bool parse_origin(const char *s, origin *o)
{
    const char *sep = strstr(s, "://");
    size_t sl = sep != NULL ? (size_t)(sep - s) : 0;
    if (sl == 0 || sl >= sizeof o->scheme)
        return false;
    for (size_t i = 0; i < sl; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (i > 0 && ((ch >= '0' && ch <= '9') || ch == '+' || ch == '-' || ch == '.'))))
            return false;
        o->scheme[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
    }
    o->scheme[sl] = '\0';
    const char *rest = sep + 3;
    if (!parse_hostport(rest, strlen(rest), &o->at))
        return false;
    if (o->at.port < 0)
        o->at.port = strcmp(o->scheme, "https") == 0 ? 443 : strcmp(o->scheme, "http") == 0 ? 80 : -1;
    return true;
}

static bool same_origin(const origin *a, const origin *b)
{
    return strcmp(a->scheme, b->scheme) == 0 && strcmp(a->at.name, b->at.name) == 0 &&
           a->at.port == b->at.port;
}

int trust_new(const struct sockaddr *listen, const char *const *hosts, int nhosts,
              const char *const *origins, int norigins, trust **out, tsr_err *err)
{
    *out = NULL;
    if (nhosts > TRUST_MAX_NAMES || norigins > TRUST_MAX_NAMES)
        return tsr_err_set(err, TSR_EINVAL, "more than %d allowed hosts or origins",
                           TRUST_MAX_NAMES);
    trust *t = calloc(1, sizeof *t);
    if (t == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    if (listen->sa_family == AF_INET) {
        memcpy(&t->listen, listen, sizeof(struct sockaddr_in));
        t->wildcard = ((const struct sockaddr_in *)listen)->sin_addr.s_addr == htonl(INADDR_ANY);
    } else if (listen->sa_family == AF_INET6) {
        memcpy(&t->listen, listen, sizeof(struct sockaddr_in6));
        t->wildcard = IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)listen)->sin6_addr);
    }
    for (int i = 0; i < nhosts; i++) {
        hostport hp;
        if (!parse_hostport(hosts[i], strlen(hosts[i]), &hp) || hp.port >= 0 || hp.bracketed) {
            trust_free(t);
            return tsr_err_set(err, TSR_EINVAL, "allowed host \"%.80s\": expected a host name "
                               "such as tessera.example (no port, no scheme)", hosts[i]);
        }
        snprintf(t->hosts[t->nhosts++], sizeof t->hosts[0], "%s", hp.name);
    }
    for (int i = 0; i < norigins; i++) {
        if (!parse_origin(origins[i], &t->origins[t->norigins]) ||
            t->origins[t->norigins].at.port < 0) {
            trust_free(t);
            return tsr_err_set(err, TSR_EINVAL, "allowed origin \"%.80s\": expected an origin "
                               "such as https://tessera.example or http://localhost:3000",
                               origins[i]);
        }
        t->norigins++;
    }
    *out = t;
    return TSR_OK;
}

void trust_free(trust *t)
{
    free(t);
}

/* Is the address literal in hp one of this server's? */
static bool our_address(const trust *t, const hostport *hp)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (!hp->bracketed && inet_pton(AF_INET, hp->name, &v4) == 1) {
        if ((ntohl(v4.s_addr) >> 24) == 127 || t->wildcard)
            return true;
        return t->listen.ss_family == AF_INET &&
               ((const struct sockaddr_in *)&t->listen)->sin_addr.s_addr == v4.s_addr;
    }
    if (hp->bracketed && inet_pton(AF_INET6, hp->name, &v6) == 1) {
        if (IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127) ||
            t->wildcard)
            return true;
        return t->listen.ss_family == AF_INET6 &&
               memcmp(&((const struct sockaddr_in6 *)&t->listen)->sin6_addr, &v6,
                      sizeof v6) == 0;
    }
    return false;
}

bool trust_host(const trust *t, const char *host)
{
    if (host == NULL)
        return true;
    hostport hp;
    if (!parse_hostport(host, strlen(host), &hp))
        return false;
    if (our_address(t, &hp) || (!hp.bracketed && strcmp(hp.name, "localhost") == 0))
        return true;
    for (int i = 0; !hp.bracketed && i < t->nhosts; i++)
        if (strcmp(hp.name, t->hosts[i]) == 0)
            return true;
    return false;
}

const char *trust_write(const trust *t, const char *host, const char *origin_hdr,
                        const char *fetch_site, char *why, size_t cap)
{
    char e[128];
    if (origin_hdr != NULL) {
        origin o;
        if (parse_origin(origin_hdr, &o)) {
            for (int i = 0; i < t->norigins; i++)
                if (same_origin(&o, &t->origins[i]))
                    return NULL;
            /* its own pages: the origin the request was sent to */
            origin self = {"http", {"", -1, false}};
            if (host != NULL && parse_hostport(host, strlen(host), &self.at)) {
                if (self.at.port < 0)
                    self.at.port = 80;
                if (same_origin(&o, &self))
                    return NULL;
            }
        }
        snprintf(why, cap, "cross-origin request refused: it comes from a page at %s, not "
                 "from this server's own pages (tesserad --allow-origin ORIGIN allows an "
                 "origin)", srv_printable(e, sizeof e, origin_hdr, strlen(origin_hdr)));
        return why;
    }
    if (fetch_site != NULL && strcmp(fetch_site, "same-origin") != 0 &&
        strcmp(fetch_site, "none") != 0) {
        snprintf(why, cap, "cross-origin request refused: the browser marks it as %s "
                 "(Sec-Fetch-Site) and it names no Origin", srv_printable(e, sizeof e, fetch_site, strlen(fetch_site)));
        return why;
    }
    return NULL;
}

bool trust_json_type(const char *ct)
{
    if (ct == NULL)
        return false;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    static const char json[] = "application/json";
    if (strncasecmp(ct, json, sizeof json - 1) != 0)
        return false;
    ct += sizeof json - 1;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    return *ct == '\0' || *ct == ';';
}
