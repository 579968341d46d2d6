/*
 * files.c - the static files of the dashboard (www/) and the documents
 * under /docs/: only safe path segments, known types, regular files that
 * resolve inside their root.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/server_impl.h"

/* ---- static files ---------------------------------------------------------------- */

static const struct {
    const char *ext;
    const char *type;
} mime_types[] = {
    {".html", "text/html; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".json", SRV_JSON_TYPE},
    {".ico", "image/x-icon"},
    {".map", SRV_JSON_TYPE},
    {".wasm", "application/wasm"},
    {".txt", SRV_TEXT_TYPE},
};


/* Answer GET `url` from www_root, or a document under /docs/ from
 * docs_root.  The path must be made of safe segments (so no "..", no
 * hidden files, no odd bytes) and name a file of a known type; a directory
 * path ("/", "/js/") means its index.html.  Symbolic links are followed
 * only while they stay inside the root: the resolved path must lie under
 * the resolved root. */
enum MHD_Result srv_serve_static(srv_server *s, struct MHD_Connection *c,
                                    const char *url)
{
    char echo[ECHO_MAX * 2], rel[PATH_MAX], full[PATH_MAX];
    srv_printable(echo, sizeof echo, url, strlen(url));
    const char *root = s->www_root;
    bool doc = s->docs_root && strncmp(url, DOCS_PREFIX, strlen(DOCS_PREFIX)) == 0;
    if (doc) {
        root = s->docs_root;
        url += strlen(DOCS_PREFIX) - 1; /* keeps its slash */
    }
    if (!root)
        return srv_answer_error(s, c, 404, "no file %s", echo);
    size_t n = strlen(url);
    if (url[0] != '/' || n + sizeof "index.html" > sizeof rel)
        return srv_answer_error(s, c, 404, "no file %s", echo);
    memcpy(rel, url + 1, n); /* with the NUL */
    if (n == 1 || url[n - 1] == '/')
        strcat(rel, "index.html");
    const char *last = rel;
    for (const char *p = rel;; p++)
        if (*p == '/' || *p == 0) {
            if (!srv_safe_segment(last, (size_t)(p - last)))
                return srv_answer_error(s, c, 404, "no file %s", echo);
            if (*p == 0)
                break;
            last = p + 1;
        }
    const char *dot = strrchr(last, '.'), *type = NULL;
    for (size_t i = 0; !doc && dot && i < sizeof mime_types / sizeof *mime_types; i++)
        if (strcmp(dot, mime_types[i].ext) == 0)
            type = mime_types[i].type;
    if (doc && dot && strcmp(dot, ".md") == 0)
        type = SRV_TEXT_TYPE;
    if (!type || snprintf(full, sizeof full, "%s/%s", root, rel) >= (int)sizeof full)
        return srv_answer_error(s, c, 404, "no file %s", echo);

    char *real = realpath(full, NULL);
    size_t rl = strlen(root);
    bool inside = real && strncmp(real, root, rl) == 0 &&
                  (real[rl] == '/' || root[rl - 1] == '/');
    int fd = inside ? open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    free(real);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        return srv_answer_error(s, c, 404, "no file %s", echo);
    struct MHD_Response *resp = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
    if (!resp) {
        close(fd);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return srv_queue(s, c, 200, resp, type);
}

