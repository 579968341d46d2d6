/*
 * options.c - the job options on the command line, shared by `tessera
 * solve` and `estimate` (tessera.c) and the daemon commands (remote.c),
 * all made from the options' list (tessera/options.h): the getopt entries,
 * the checks (the library reads the text as the JSON value it spells, so
 * --volume=once and "volume": "once" are one thing), the help and the
 * table of docs/puzzle-format.md.  The commands collect the flags, read
 * the file's own options, and apply the flags on top with cli_apply_flag,
 * so a job's options mean the same in-process and on the daemon.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define HELP_WIDTH 80
#define HELP_INDENT 25 /* the column the help starts in */

int cli_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tessera: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'tessera help'.\n");
    return EXIT_USAGE;
}

bool cli_parse_long(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

void cli_longopts(struct option *out, const struct option *own, bool daemon)
{
    int n = 0;
    for (; own[n].name != NULL; n++)
        out[n] = own[n];
    for (int i = 0; i < TSR_NOPTIONS; i++) {
        const tsr_option *op = &tsr_option_list[i];
        if ((op->flags & TSR_OPT_DAEMON) && !daemon)
            continue;
        int has_arg = op->cli[0] == '=' ? required_argument
                      : op->cli[0] == '[' ? optional_argument
                                          : no_argument;
        out[n++] = (struct option){op->name, has_arg, NULL, O_JOB + 2 * i};
        if (tsr_option_has_no(op)) { /* --no-NAME; the name lives as long as the list */
            static char no[TSR_NOPTIONS][40];
            snprintf(no[i], sizeof no[i], "no-%s", op->name);
            out[n++] = (struct option){no[i], no_argument, NULL, O_JOB + 2 * i + 1};
        }
    }
    out[n] = (struct option){NULL, 0, NULL, 0};
}

int cli_apply_flag(const flag *f, const tsr_puzzle *pz, tsr_options *o)
{
    if (f->code < O_JOB)
        return 0; /* not a job option: the command's own */
    const tsr_option *op = &tsr_option_list[(f->code - O_JOB) / 2];
    bool no = (f->code - O_JOB) % 2 == 1; /* --no-NAME: the option off */
    tsr_err err = {{0}};
    if (tsr_option_parse_text(o, op, no ? "off" : f->arg, pz, &err) != 0)
        return cli_usage_error("%s", err.msg);
    return 0;
}

/* ---- help ----------------------------------------------------------------- */

/* text from column `at`, wrapped at HELP_WIDTH, continued at `indent`. */
static void print_wrapped(FILE *f, const char *text, int at, int indent)
{
    while (*text) {
        int room = HELP_WIDTH - at, n = (int)strlen(text);
        if (n > room) { /* break at the last space that fits */
            n = room;
            while (n > 0 && text[n] != ' ')
                n--;
            if (n == 0)
                n = (int)strcspn(text, " ");
        }
        fprintf(f, "%.*s\n", n, text);
        text += n;
        text += strspn(text, " ");
        if (*text)
            fprintf(f, "%*s", indent, "");
        at = indent;
    }
}

/* "daemon only: " for the daemon's own options, the help, and the default
 * unless it is automatic (a word without its JSON quotes). */
static void meaning(const tsr_option *op, char *buf, size_t size)
{
    tsr_options def;
    tsr_options_init(&def);
    char d[96];
    tsr_option_value_text(op, &def, d, sizeof d);
    snprintf(buf, size, "%s%s", op->flags & TSR_OPT_DAEMON ? "daemon only: " : "", op->help);
    size_t len = strlen(buf);
    if (d[0] == '"')
        snprintf(buf + len, size - len, " (default: %.*s)", (int)strlen(d) - 2, d + 1);
    else if (strcmp(d, "automatic") != 0)
        snprintf(buf + len, size - len, " (default: %s)", d);
}

void cli_print_options(FILE *f, bool engine)
{
    for (int i = 0; i < TSR_NOPTIONS; i++) {
        const tsr_option *op = &tsr_option_list[i];
        if (((op->flags & TSR_OPT_ENGINE) != 0) != engine)
            continue;
        char form[64], text[512];
        int at = fprintf(f, "      %s", tsr_option_flag_text(op, form, sizeof form));
        if (at < HELP_INDENT - 1) /* else the help goes on the next line */
            fprintf(f, "%*s", HELP_INDENT - at, "");
        else
            fprintf(f, "\n%*s", HELP_INDENT, "");
        meaning(op, text, sizeof text);
        print_wrapped(f, text, HELP_INDENT, HELP_INDENT);
        for (int u = 0; op->kind == TSR_KIND_MODE && tsr_unique_names[u] != NULL; u++) {
            fprintf(f, "%*s%-11s", HELP_INDENT + 2, "", tsr_unique_names[u]);
            print_wrapped(f, tsr_unique_help[u], HELP_INDENT + 13, HELP_INDENT + 13);
        }
    }
}

/* A table cell: '|' escaped, as GitHub's tables want it even in code. */
static void print_cell(FILE *f, const char *s)
{
    fputs("| ", f);
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc(' ', f);
}

void cli_print_options_markdown(FILE *f)
{
    tsr_options def;
    tsr_options_init(&def);
    fputs("| key | value | default | command line | meaning |\n", f);
    fputs("|-----|-------|---------|--------------|---------|\n", f);
    for (int i = 0; i < TSR_NOPTIONS; i++) {
        const tsr_option *op = &tsr_option_list[i];
        char key[64], accepts[256], d[96], dflt[128], form[64], cli[128], text[1024];
        snprintf(key, sizeof key, "`%s`", op->name);
        tsr_option_value_text(op, &def, d, sizeof d);
        snprintf(dflt, sizeof dflt, strcmp(d, "automatic") ? "`%s`" : "%s", d);
        tsr_option_flag_text(op, form, sizeof form);
        /* "--nof, --no-nof": each flag in its own backquotes */
        char *comma = strstr(form, ", ");
        if (comma) {
            *comma = '\0';
            snprintf(cli, sizeof cli, "`%s`, `%s`", form, comma + 2);
        } else {
            snprintf(cli, sizeof cli, "`%s`", form);
        }
        snprintf(text, sizeof text, "%s%s", op->flags & TSR_OPT_DAEMON ? "daemon only: " : "",
                 op->help);
        for (int u = 0; op->kind == TSR_KIND_MODE && tsr_unique_names[u] != NULL; u++)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s `%s`: %s",
                     u ? ";" : ":", tsr_unique_names[u], tsr_unique_help[u]);
        print_cell(f, key);
        print_cell(f, tsr_option_accepts(op, true, accepts, sizeof accepts));
        print_cell(f, dflt);
        print_cell(f, cli);
        print_cell(f, text);
        fputs("|\n", f);
    }
}
