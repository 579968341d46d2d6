/*
 * read.c - format detection and whole-file loading.
 *
 * tsr_puzzle_read looks at the first character that is neither blank nor
 * inside a '#' comment: '{' means puzzle JSON, anything else a polycube
 * definition (which has no options, so *opt gets the defaults).
 *
 * tsr_puzzle_load_file reads the whole file ("-" is standard input, named
 * "<stdin>" in messages) up to 16 MiB, which is far beyond any real puzzle
 * and keeps a wrong path (a disk image, /dev/zero) from exhausting memory.
 * Over the cap is TSR_ETOOBIG; an open or read failure is TSR_EIO with the
 * message "PATH: reason".  The path names the document in parse errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "tessera/puzzle.h"

#define MAX_FILE_BYTES ((size_t)16 << 20)

static bool starts_json(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '#') {
            while (i < len && text[i] != '\n')
                i++;
        } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' &&
                   c != '\v') {
            return c == '{';
        }
    }
    return false;
}

int tsr_puzzle_read(const char *text, size_t len, const char *source,
                    tsr_puzzle **out, tsr_options *opt, tsr_err *err)
{
    if (starts_json(text, len))
        return tsr_puzzle_read_json(text, len, source, out, opt, err);
    if (opt)
        tsr_options_init(opt);
    if (tsr_is_xmpuzzle(text, len))
        return tsr_puzzle_read_xmpuzzle(text, len, source, NULL, out, err);
    return tsr_puzzle_read_polycube(text, len, source, out, err);
}

static int io_error(tsr_err *err, const char *name, int errnum)
{
    char reason[128];
    if (strerror_r(errnum, reason, sizeof reason) != 0)
        snprintf(reason, sizeof reason, "error %d", errnum);
    return tsr_err_set(err, TSR_EIO, "%s: %s", name, reason);
}

/* Reads all of f into a new buffer; *len excludes the NUL added after it. */
static int slurp(FILE *f, const char *name, char **text, size_t *len, tsr_err *err)
{
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        /* Room for a byte more and the NUL: one byte past the cap is
         * enough to know the file is too big. */
        if (base_grow((void **)&buf, &cap, n + 1, 1, 64 * 1024, MAX_FILE_BYTES + 2) != 0) {
            free(buf);
            return tsr_err_set(err, TSR_ENOMEM, "%s: out of memory", name);
        }
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n > MAX_FILE_BYTES) {
            free(buf);
            return tsr_err_set(err, TSR_ETOOBIG, "%s: larger than %zu MiB", name,
                               MAX_FILE_BYTES >> 20);
        }
        if (ferror(f)) {
            int e = errno;
            free(buf);
            return io_error(err, name, e);
        }
        if (feof(f))
            break;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

const char *tsr_file_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

int tsr_file_read(const char *path, char **text, size_t *len, tsr_err *err)
{
    bool std_in = strcmp(path, "-") == 0;
    const char *name = tsr_file_name(path);
    FILE *f = std_in ? stdin : fopen(path, "rb");
    if (!f)
        return io_error(err, name, errno);
    int rc = slurp(f, name, text, len, err);
    if (!std_in)
        fclose(f);
    return rc;
}

int tsr_puzzle_load_file(const char *path, tsr_puzzle **out, tsr_options *opt,
                         tsr_err *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = tsr_file_read(path, &text, &len, err);
    if (rc < 0)
        return rc;
    rc = tsr_puzzle_read(text, len, tsr_file_name(path), out, opt, err);
    free(text);
    return rc;
}
