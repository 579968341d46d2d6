/*
 * convert.c - tessera convert: a puzzle file in another format.
 *
 *   tessera convert [--problem=N|NAME] [--to=FORMAT] [-o OUT] IN
 *
 * IN is anything solve reads (Puzzle JSON, a polycube definition, a
 * BurrTools file; - for stdin); FORMAT is json, polycube or xmpuzzle,
 * else what OUT's extension says (.json, .txt or .polycube, .xmpuzzle).
 * The puzzle is written whole (src/puzzle/convert.c), so a refusal (what
 * the format cannot express, named) leaves OUT as it was: the file is
 * written beside OUT under a temporary name and renamed over it.  A
 * BurrTools file is binary (gzip): it goes to a terminal only with -o.
 * A job file's options are not part of the puzzle and are not carried.
 *
 * Exit status: 0 written, 1 writing failed, 2 bad usage, a file that does
 * not read, or a puzzle the format cannot express.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "cli/cli.h"

/* buf into path: a temporary file beside it, renamed over it once
 * complete.  0, or 1 after saying why. */
static int write_file(const char *path, const char *buf, size_t len)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (tmp == NULL)
        return 1;
    snprintf(tmp, n + 16, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    int e = errno;
    bool ok = f != NULL && fwrite(buf, 1, len, f) == len;
    if (f != NULL) {
        ok = fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
        e = ok ? 0 : errno;
        ok = fclose(f) == 0 && ok;
    } else if (fd >= 0) {
        close(fd);
    }
    /* mkstemp makes it 0600; a converted file is an ordinary one */
    if (ok) {
        mode_t mask = umask(0);
        umask(mask);
        ok = chmod(tmp, 0666 & ~mask) == 0 && rename(tmp, path) == 0;
        e = ok ? 0 : errno;
    }
    if (!ok) {
        fprintf(stderr, "tessera: %s: %s\n", path, strerror(e ? e : EIO));
        if (fd >= 0)
            unlink(tmp);
    }
    free(tmp);
    return ok ? 0 : 1;
}

/* What the file will not say that the puzzle did: a note on stderr. */
static void note_losses(const tsr_puzzle *pz, enum tsr_format to)
{
    int fixed = 0;
    for (int k = 0; k < pz->npieces; k++)
        fixed += pz->pieces[k].fixed;
    if (to == TSR_FORMAT_XMPUZZLE && fixed > 0)
        fprintf(stderr, "tessera: note: BurrTools has no fixed pieces: the cells of %d fixed "
                        "piece%s are left out of the result shape\n",
                fixed, fixed == 1 ? "" : "s");
}

int cli_convert_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"to", required_argument, NULL, 't'},
        {"output", required_argument, NULL, 'o'},
        {"problem", required_argument, NULL, O_PROBLEM},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *to = NULL, *out = NULL, *problem = NULL;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 't': to = optarg; break;
        case 'o': out = optarg; break;
        case O_PROBLEM: problem = optarg; break;
        case 'h':
            printf("usage: tessera convert [--problem=N|NAME] [--to=json|polycube|xmpuzzle] "
                   "[-o OUT] IN\n");
            return 0;
        default:
            fprintf(stderr, "Try 'tessera help'.\n");
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("convert needs exactly one puzzle file%s", "");
    const char *in = argv[optind];
    if (out != NULL && strcmp(out, "-") == 0)
        out = NULL; /* stdout */
    int format = to != NULL ? tsr_format_parse(to) : -1;
    int by_name = out != NULL ? tsr_format_of_path(out) : -1;
    if (to != NULL && format < 0)
        return cli_usage_error("--to: expected json, polycube or xmpuzzle, got '%s'", to);
    if (to == NULL && by_name < 0)
        return cli_usage_error("convert: say the format with --to=json|polycube|xmpuzzle, or "
                               "give -o a name ending .json, .txt or .xmpuzzle%s", "");
    if (format >= 0 && by_name >= 0 && format != by_name)
        return cli_usage_error("convert: --to=%s, but OUT's extension says another format",
                               to);
    if (format < 0)
        format = by_name;
    if (out == NULL && format == TSR_FORMAT_XMPUZZLE && isatty(STDOUT_FILENO))
        return cli_usage_error("convert: a BurrTools file is gzip-compressed, not text for a "
                               "terminal: give -o FILE.xmpuzzle or redirect the output%s", "");

    tsr_err err = {{0}};
    char *text = NULL;
    size_t len = 0;
    tsr_puzzle *pz = NULL;
    int rc = tsr_file_read(in, &text, &len, &err);
    if (rc == 0 && problem != NULL && !tsr_is_xmpuzzle(text, len))
        rc = tsr_err_set(&err, TSR_EINVAL, "%s: --problem is for BurrTools files (.xmpuzzle)",
                         tsr_file_name(in));
    else if (rc == 0 && problem != NULL)
        rc = tsr_puzzle_read_xmpuzzle(text, len, tsr_file_name(in), problem, &pz, &err);
    else if (rc == 0)
        rc = tsr_puzzle_read(text, len, tsr_file_name(in), &pz, NULL, &err);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "tessera: %s\n", err.msg[0] ? err.msg : tsr_strerror(rc));
        return rc == TSR_ENOMEM ? 1 : EXIT_USAGE; /* as solve: a file that does not read */
    }
    char *buf = NULL;
    rc = tsr_puzzle_write(pz, (enum tsr_format)format, &buf, &len, &err);
    if (rc != 0) {
        fprintf(stderr, "tessera: %s: cannot be written as %s: %s\n", tsr_file_name(in),
                tsr_format_names[format], err.msg);
        tsr_puzzle_free(pz);
        return rc == TSR_ENOMEM || rc == TSR_EIO ? 1 : EXIT_USAGE;
    }
    note_losses(pz, (enum tsr_format)format);
    tsr_puzzle_free(pz);
    if (out != NULL)
        rc = write_file(out, buf, len);
    else
        rc = fwrite(buf, 1, len, stdout) == len ? 0 : 1; /* main reports a failed flush */
    free(buf);
    return rc;
}
