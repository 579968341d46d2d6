/*
 * remote.c - tessera's daemon commands: submit, status, watch, solutions,
 * pause, resume, cancel, delete and record (batch submit|show|list are in
 * batch.c), each one or a few calls of tesserad's REST API (the HTTP
 * itself is client.c's).
 *
 * One getopt loop serves every command: a table says which options each
 * takes and how many operands.  submit reads and checks the puzzle with the
 * library's reader before anything goes on the wire, so bad input gets the
 * same message (and exit 2) as `tessera solve`, and takes the job options
 * with solve's own checks (cli_apply_flag, options.c).  watch follows the job's event
 * stream and falls back to polling once a second when the stream fails.
 *
 * Exit status: 0 done; 1 the daemon failed (5xx, a broken answer) or cannot
 * be reached, or the watched job was cancelled or failed; 2 bad usage or
 * input, or the daemon refused the request (4xx).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/remote.h"
#include "tessera/job.h"

#define DEFAULT_SERVER "http://127.0.0.1:8080"
#define PLAIN_PROGRESS_SECONDS 10           /* between progress lines off a terminal */

typedef struct command {
    const char *name;
    int (*run)(remote *r, const args *a);
    int operands;   /* 1: exactly one; -1: at most one; 2: one or more */
    bool file;      /* the operand is a file, not a job id */
    bool job;       /* it takes the job options */
    const int *opts; /* its own options beyond the global ones; 0-terminated */
    const char *usage;
} command;


/* ---- talking to the daemon ----------------------------------------------------- */

/* Says why there was no answer.  Always EXIT_FAILED: the request was fine. */
static int report_transport(int rc, const cli_response *resp, const tsr_err *err)
{
    fprintf(stderr, "tessera: %s%s\n", err->msg[0] ? err->msg : tsr_strerror(rc),
            resp->sys_errno == ECONNREFUSED ? " (is it running? start it with `tesserad`)"
                                            : "");
    return EXIT_FAILED;
}

/* Says what the daemon refused, with its own words when it gave them. */
static int report_status(const remote *r, const cli_response *resp)
{
    json_t *root = json_loads(resp->body ? resp->body : "", 0, NULL);
    const char *msg = json_string_value(json_object_get(json_object_get(root, "error"),
                                                        "message"));
    if (msg != NULL) {
        fprintf(stderr, "tessera: %s (HTTP %d)\n", msg, resp->status);
    } else { /* not our daemon's error body: show the start of whatever it is */
        size_t n = resp->body ? strcspn(resp->body, "\r\n") : 0;
        fprintf(stderr, "tessera: %s answered HTTP %d%s%.*s\n", r->http.url.text,
                resp->status, n ? ": " : "", (int)(n > 200 ? 200 : n),
                resp->body ? resp->body : "");
    }
    json_decref(root);
    if (resp->status == 401)
        fputs(r->http.token ? "tessera: tesserad refused the token\n"
                            : "tessera: tesserad wants a token: give --token or set "
                              "TESSERA_TOKEN\n",
              stderr);
    return resp->status >= 400 && resp->status < 500 ? EXIT_USAGE : EXIT_FAILED;
}

/* One request that must succeed: 0 with the 2xx answer in resp, else the
 * exit status after saying why (resp is then empty). */
static int call(const remote *r, const char *method, const char *path, const char *body,
                cli_response *resp)
{
    tsr_err err = {{0}};
    int rc = cli_http_request(&r->http, method, path, body ? "application/json" : NULL, body,
                              body ? strlen(body) : 0, resp, &err);
    if (rc)
        return report_transport(rc, resp, &err);
    if (resp->status >= 200 && resp->status < 300)
        return 0;
    int status = report_status(r, resp);
    cli_response_free(resp);
    return status;
}

/* A call whose answer is a JSON object: 0 and *out, or the exit status.
 * With --json and echo, the answer is also printed as the daemon sent it. */
int rmt_call_json(const remote *r, const char *method, const char *path, const char *body,
                     bool echo, json_t **out)
{
    cli_response resp;
    int status = call(r, method, path, body, &resp);
    if (status)
        return status;
    json_error_t jerr;
    *out = json_loadb(resp.body, resp.len, 0, &jerr);
    if (*out == NULL || !json_is_object(*out)) {
        fprintf(stderr, "tessera: %s%s: not a JSON object in the answer%s%s\n",
                r->http.url.text, path, *out ? "" : ": ", *out ? "" : jerr.text);
        json_decref(*out);
        *out = NULL;
        status = EXIT_FAILED;
    } else if (echo && r->json) {
        fwrite(resp.body, 1, resp.len, stdout);
        if (resp.len == 0 || resp.body[resp.len - 1] != '\n')
            fputc('\n', stdout);
        fflush(stdout);
    }
    cli_response_free(&resp);
    return status;
}

/* 15 digits: enough for any double the daemon means, and 9.8 stays 9.8. */
void rmt_print_json_line(const json_t *j)
{
    json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    fputc('\n', stdout);
    fflush(stdout);
}

static void job_path(char *buf, size_t size, long long id, const char *suffix)
{
    snprintf(buf, size, "/api/v1/jobs/%lld%s", id, suffix);
}

/* ---- reading job objects ------------------------------------------------------------ */

double rmt_num(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key)); /* 0 when absent or null */
}

const char *rmt_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

bool rmt_is_final(const char *state)
{
    return tsr_job_state_final(state);
}

/* 12s, 3m05s, 2h03m, 4d05h; "?" when unknown. */
/* Seconds from the API in the one duration format (tessera/eta.h); "?"
 * when there are none. */
static const char *duration(char *buf, size_t size, const json_t *seconds)
{
    if (!json_is_number(seconds))
        return snprintf(buf, size, "?"), buf;
    return tsr_duration_text(json_number_value(seconds), buf, size);
}

/* The time left with its range, as the daemon words it. */
static const char *eta_text(const json_t *progress)
{
    const char *t = json_string_value(json_object_get(json_object_get(progress, "eta"), "text"));
    return t ? t : "?";
}

/* The time left in a word or two, as the dashboard's job list shows it:
 * the estimate, or the daemon's text where there is no number ("more
 * than a century"). */
static const char *eta_short(char *buf, size_t size, const json_t *progress)
{
    const json_t *eta = json_object_get(progress, "eta");
    const json_t *est = json_object_get(eta, "estimate_s");
    return json_is_number(est) ? duration(buf, size, est) : eta_text(progress);
}

/* 950, 12.5k, 3.2M, ... */
static const char *si(char *buf, size_t size, double v)
{
    static const char units[] = " kMGTPE";
    int u = 0;
    while (v >= 999.5 && u < 6) {
        v /= 1000;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.3g%c", v, units[u]);
    return buf;
}

/* Nodes per second: the recent rate while the job runs, else the average
 * over its search (a finished job has no rate of its own). */
static const char *rate_text(char *buf, size_t size, const json_t *job)
{
    const json_t *pg = json_object_get(job, "progress");
    double secs = rmt_num(pg, "seconds");
    if (strcmp(rmt_str(job, "state"), "running") == 0)
        return si(buf, size, rmt_num(pg, "rate"));
    if (secs <= 0)
        return snprintf(buf, size, "-"), buf;
    return si(buf, size, rmt_num(pg, "nodes") / secs);
}

/* How the job's search ended, for a finished job that a limit stopped:
 * ", stopped at its limit of N solutions after F% of the search"; else "". */
static const char *ending_text(char *buf, size_t size, const json_t *job)
{
    char pct[32];
    buf[0] = '\0';
    if (json_is_true(json_object_get(job, "limit_reached")))
        snprintf(buf, size, ", stopped at its limit of %.0f solutions after %s of the search",
                 rmt_num(json_object_get(job, "options"), "limit"),
                 tsr_fraction_text(rmt_num(json_object_get(job, "progress"), "fraction"), pct, sizeof pct));
    return buf;
}

/* The job's error as text: a string, or an object's "message". */
static const char *job_error(const json_t *job)
{
    const json_t *e = json_object_get(job, "error");
    if (json_is_object(e))
        e = json_object_get(e, "message");
    return json_string_value(e);
}

/* ---- submit --------------------------------------------------------------------------- */

/* The request body: the file's puzzle (JSON) or text (polycube) and the
 * options in force (the file's, with the command line's on top: opt).
 * NULL after saying why. */
char *rmt_submit_body(const char *name, const char *text, size_t len, const tsr_puzzle *pz,
                      const tsr_options *opt)
{
    json_t *doc = json_object(), *root = NULL;
    bool is_json = text[strspn(text, " \t\r\n\f\v")] == '{';
    if (pz != NULL && tsr_is_xmpuzzle(text, len)) { /* the daemon reads Puzzle JSON */
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);
        int rc = f ? tsr_write_puzzle_json(f, pz) : TSR_ENOMEM;
        if (f)
            fclose(f);
        json_t *puzzle = rc == 0 ? json_loadb(buf, n, 0, NULL) : NULL;
        free(buf);
        if (puzzle == NULL || json_object_set_new(doc, "puzzle", puzzle) != 0) {
            fprintf(stderr, "tessera: %s: out of memory\n", name);
            json_decref(doc);
            return NULL;
        }
    } else if (is_json) { /* the reader took it, so jansson does too */
        root = json_loadb(text, len, 0, NULL);
        json_t *puzzle = json_object_get(root, "puzzle");
        if (json_object_set(doc, "puzzle", puzzle ? puzzle : root) != 0) {
            fprintf(stderr, "tessera: %s: out of memory\n", name);
            json_decref(doc);
            json_decref(root);
            return NULL;
        }
    } else {
        json_t *s = json_stringn(text, len);
        if (s == NULL) {
            fprintf(stderr, "tessera: %s: not valid UTF-8 text\n", name);
            json_decref(doc);
            return NULL;
        }
        json_object_set_new(doc, "polycube", s);
    }
    char *options = tsr_options_write_json(opt);
    json_t *opts = options ? json_loads(options, 0, NULL) : NULL;
    free(options);
    if (opts == NULL)
        fprintf(stderr, "tessera: %s: out of memory\n", name);
    json_object_set_new(doc, "options", opts ? opts : json_object());
    char *body = opts ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    json_decref(root);
    return body;
}

static int watch_job(remote *r, long long id);

/* POST a job body (freed here): prints the new job's id, then follows it
 * with --watch.  Shared by submit and rerun. */
static int post_job(remote *r, char *body, bool watch)
{
    json_t *job = NULL;
    int status = rmt_call_json(r, "POST", "/api/v1/jobs", body, true, &job);
    free(body);
    if (status)
        return status;
    long long id = (long long)json_integer_value(json_object_get(job, "id"));
    json_decref(job);
    if (!r->json)
        printf("%lld\n", id);
    fflush(stdout);
    return watch ? watch_job(r, id) : 0;
}

static int cmd_submit(remote *r, const args *a)
{
    const char *name = tsr_file_name(a->operand);
    char *text = NULL;
    size_t len;
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    int status = 0, rc = tsr_file_read(a->operand, &text, &len, &err);
    if (rc == 0 && a->problem != NULL && !tsr_is_xmpuzzle(text, len))
        rc = tsr_err_set(&err, TSR_EINVAL, "%s: --problem is for BurrTools files (.xmpuzzle)", name);
    else if (rc == 0 && a->problem != NULL) {
        tsr_options_init(&opt);
        rc = tsr_puzzle_read_xmpuzzle(text, len, name, a->problem, &pz, &err);
    } else if (rc == 0)
        rc = tsr_puzzle_read(text, len, name, &pz, &opt, &err);
    if (rc) {
        fprintf(stderr, "tessera: %s\n", err.msg[0] ? err.msg : tsr_strerror(rc));
        free(text);
        return rc == TSR_ENOMEM ? EXIT_FAILED : EXIT_USAGE;
    }
    for (int i = 0; i < a->nflags && status == 0; i++)
        status = cli_apply_flag(&a->flags[i], pz, &opt);
    char *body = status ? NULL : rmt_submit_body(name, text, len, pz, &opt);
    tsr_puzzle_free(pz);
    free(text);
    if (body == NULL)
        return status ? status : EXIT_USAGE;
    return post_job(r, body, a->watch);
}

/* ---- status ----------------------------------------------------------------------------- */

static void print_job(const json_t *job)
{
    const json_t *pg = json_object_get(job, "progress"), *pz = json_object_get(job, "puzzle");
    char b1[32], b2[32], b3[32], end[128], pct[32];
    const char *state = rmt_str(job, "state");
    bool running = strcmp(state, "running") == 0;
    printf("job %lld: %s\n", (long long)rmt_num(job, "id"), rmt_str(job, "name"));
    printf("  state      %s%s\n", state, ending_text(end, sizeof end, job));
    if (rmt_is_final(state)) /* no time left to tell */
        printf("  progress   %s\n", tsr_fraction_text(rmt_num(pg, "fraction"), pct, sizeof pct));
    else
        printf("  progress   %s  eta %s\n", tsr_fraction_text(rmt_num(pg, "fraction"), pct, sizeof pct),
               eta_text(pg));
    printf("  nodes      %.0f in %s  (%s nodes/s%s)\n", rmt_num(pg, "nodes"),
           duration(b3, sizeof b3, json_object_get(pg, "seconds")),
           rate_text(b2, sizeof b2, job), running ? "" : " on average");
    printf("  solutions  %.0f\n", rmt_num(job, "solutions"));
    if (running)
        printf("  threads    %.0f  (priority %.0f)\n", rmt_num(job, "threads"), rmt_num(job, "priority"));
    else
        printf("  threads    none while %s  (priority %.0f)\n", state, rmt_num(job, "priority"));
    if (json_is_object(pz)) {
        printf("  puzzle     %.0fD, %.0f cells, %.0f pieces", rmt_num(pz, "dimensions"),
               rmt_num(pz, "cells"), rmt_num(pz, "pieces"));
        const char *key;
        const json_t *v;
        const char *sep = "; expected";
        json_object_foreach((json_t *)json_object_get(pz, "expected"), key, v) {
            printf("%s %s %.0f", sep, key, json_number_value(v));
            sep = ",";
        }
        putchar('\n');
    }
    const json_t *opts = json_object_get(job, "options");
    if (json_object_size(opts) > 0) {
        const char *key;
        const json_t *v;
        printf("  options   ");
        json_object_foreach((json_t *)opts, key, v) {
            char *s = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            printf(" %s=%s", key, s ? s : json_is_string(v) ? json_string_value(v) : "?");
            free(s);
        }
        putchar('\n');
    }
    if (json_is_string(json_object_get(job, "config")))
        printf("  config     %s\n", rmt_str(job, "config"));
    for (int i = 0; i < 2; i++) {
        const char *key = i ? "updated" : "created";
        time_t t = (time_t)rmt_num(job, key);
        struct tm tm;
        if (t > 0 && localtime_r(&t, &tm) && strftime(b1, sizeof b1, "%Y-%m-%d %H:%M:%S", &tm))
            printf("  %-10s %s\n", key, b1);
    }
    if (job_error(job))
        printf("  error      %s\n", job_error(job));
}

/* The columns of print_job_row: DONE over the percentage, not over the
 * "limit" mark beside it. */
void rmt_print_job_header(void)
{
    printf("%6s  %-9s  %7s%6s  %10s  %10s  %7s  %s\n", "ID", "STATE", "DONE", "", "SOLUTIONS",
           "RATE", "ETA", "NAME");
}

void rmt_print_job_row(const json_t *job)
{
    const json_t *pg = json_object_get(job, "progress");
    char rate[40] = "-", eta[32], pct[32];
    bool running = strcmp(rmt_str(job, "state"), "running") == 0;
    if (running) {
        si(rate, sizeof rate - 2, rmt_num(pg, "rate"));
        strcat(rate, "/s");
    }
    /* a rate and a time left only while running; "limit" marks a count cut short */
    printf("%6lld  %-9s  %7s%s  %10.0f  %10s  %7s  %s\n", (long long)rmt_num(job, "id"),
           rmt_str(job, "state"), tsr_fraction_text(rmt_num(pg, "fraction"), pct, sizeof pct),
           json_is_true(json_object_get(job, "limit_reached")) ? " limit" : "      ",
           rmt_num(job, "solutions"), rate, running ? eta_short(eta, sizeof eta, pg) : "-",
           rmt_str(job, "name"));
}

static int list_jobs(remote *r, const args *a)
{
    json_t *all = json_array();
    long long after = 0;
    int status = 0;
    for (;;) {
        char path[128];
        snprintf(path, sizeof path, "/api/v1/jobs?limit=%d&after=%lld%s%s", LIST_PAGE, after,
                 a->state ? "&state=" : "", a->state ? a->state : "");
        json_t *page = NULL;
        if ((status = rmt_call_json(r, "GET", path, NULL, false, &page)) != 0)
            break;
        json_array_extend(all, json_object_get(page, "jobs"));
        const json_t *next = json_object_get(page, "next");
        long long n = json_is_integer(next) ? (long long)json_integer_value(next) : -1;
        json_decref(page);
        if (n <= after) /* null, or a cursor that would not move */
            break;
        after = n;
    }
    if (status == 0 && r->json) {
        json_t *doc = json_pack("{s:O,s:n}", "jobs", all, "next");
        rmt_print_json_line(doc);
        json_decref(doc);
    } else if (status == 0) {
        rmt_print_job_header();
        size_t i;
        const json_t *job;
        json_array_foreach(all, i, job)
            rmt_print_job_row(job);
    }
    json_decref(all);
    return status;
}

static int cmd_status(remote *r, const args *a)
{
    if (a->operand == NULL)
        return list_jobs(r, a);
    if (a->state)
        return cli_usage_error("--state lists jobs; it takes no job id%s", "");
    char path[64];
    job_path(path, sizeof path, a->id, "");
    json_t *job = NULL;
    int status = rmt_call_json(r, "GET", path, NULL, true, &job);
    if (status)
        return status;
    if (!r->json)
        print_job(job);
    json_decref(job);
    return 0;
}

/* ---- record: a completed record job's record, one task a line (tessera verify) ---- */

static int cmd_record(remote *r, const args *a)
{
    char path[64];
    job_path(path, sizeof path, a->id, "/record");
    json_t *rec = NULL;
    int status = rmt_call_json(r, "GET", path, NULL, true, &rec);
    if (status)
        return status;
    json_t *tasks = json_incref(json_object_get(rec, "tasks"));
    json_object_del(rec, "tasks");
    char *head = json_dumps(rec, JSON_COMPACT);
    size_t hl = head ? strlen(head) : 0, i;
    json_t *t;
    if (hl > 1 && json_is_array(tasks)) {
        printf("%.*s,\n\"tasks\":[\n", (int)hl - 1, head); /* the object reopened */
        json_array_foreach(tasks, i, t) {
            char *line = json_dumps(t, JSON_COMPACT);
            printf("%s%s\n", line ? line : "null", i + 1 < json_array_size(tasks) ? "," : "");
            free(line);
        }
        printf("]}\n");
    } else {
        status = EXIT_FAILED;
        fprintf(stderr, "tessera: the daemon's record is not a record object\n");
    }
    free(head);
    json_decref(tasks);
    json_decref(rec);
    return status;
}

/* ---- watch ------------------------------------------------------------------------------- */

typedef struct watcher {
    remote *r;
    json_t *job;       /* the latest job object */
    bool shown;        /* a redrawn progress line is on the terminal */
    bool bad_event;    /* an event that was not a job object */
    char state[16];    /* of the last line printed off a terminal */
    double last_line;  /* when that line was printed (monotonic seconds) */
} watcher;

/* Takes the new job object (owning it) and shows it: one JSON line with
 * --json, a redrawn bar on a terminal, else a line at every state change
 * and every PLAIN_PROGRESS_SECONDS. */
static void show(watcher *w, json_t *job)
{
    json_decref(w->job);
    w->job = job;
    if (w->r->json) {
        rmt_print_json_line(job);
        return;
    }
    const char *state = rmt_str(job, "state");
    if (!w->r->tty && strcmp(state, w->state) == 0 &&
        base_now() - w->last_line < PLAIN_PROGRESS_SECONDS)
        return;
    const json_t *pg = json_object_get(job, "progress");
    double f = rmt_num(pg, "fraction");
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    char bar[25], rate[32], eta[160] = "", pct[32];
    int filled = (int)(f * 24 + 0.5);
    for (int i = 0; i < 24; i++)
        bar[i] = i < filled ? '#' : '-';
    bar[24] = '\0';
    if (!rmt_is_final(state))
        snprintf(eta, sizeof eta, "  eta %s", eta_text(pg));
    printf("%s[%s] %6s  %s nodes/s%s  %.0f solutions%s  %s%s", w->r->tty ? "\r\033[K" : "",
           bar, tsr_fraction_text(f, pct, sizeof pct), rate_text(rate, sizeof rate, job),
           strcmp(state, "running") == 0 ? "" : " on average", rmt_num(job, "solutions"), eta,
           state, w->r->tty ? "" : "\n");
    fflush(stdout);
    w->shown = w->r->tty;
    snprintf(w->state, sizeof w->state, "%s", state);
    w->last_line = base_now();
}

static bool done(const watcher *w)
{
    return w->job != NULL && rmt_is_final(rmt_str(w->job, "state"));
}

static int on_event(void *ctx, const cli_sse_event *ev)
{
    watcher *w = ctx;
    if (strcmp(ev->event, "job") != 0)
        return 0; /* not ours to know */
    json_t *job = json_loads(ev->data, 0, NULL);
    if (!json_is_object(job)) {
        json_decref(job);
        w->bad_event = true;
        return 1;
    }
    show(w, job);
    return done(w); /* the stream ends there anyway; no need to wait for it */
}

/* Follows the event stream: 0 when the job reached a final state or the
 * stream failed in a way polling may survive (*fallback says why), else
 * the exit status after saying why. */
static int follow_stream(watcher *w, long long id, char *fallback, size_t size)
{
    char path[64];
    job_path(path, sizeof path, id, "/events");
    cli_response resp;
    tsr_err err = {{0}};
    int rc = cli_http_stream(&w->r->http, path, on_event, w, &resp, &err);
    int status = 0;
    if (done(w))
        status = 0; /* whatever came after the final event does not matter */
    else if (rc && resp.sys_errno)
        status = report_transport(rc, &resp, &err);
    else if (rc == 0 && resp.status >= 400 && resp.status < 500)
        status = report_status(w->r, &resp);
    else if (w->bad_event)
        snprintf(fallback, size, "an event that is not a job object");
    else if (rc)
        snprintf(fallback, size, "%s", err.msg);
    else if (resp.status != 200)
        snprintf(fallback, size, "HTTP %d", resp.status);
    else if (strncmp(resp.content_type, "text/event-stream", 17) != 0)
        snprintf(fallback, size, "not an event stream (%.60s)", resp.content_type);
    else
        snprintf(fallback, size, "it ended before the job did");
    cli_response_free(&resp);
    return status;
}

static int poll_job(watcher *w, long long id)
{
    char path[64];
    job_path(path, sizeof path, id, "");
    while (!done(w)) {
        json_t *job = NULL;
        int status = rmt_call_json(w->r, "GET", path, NULL, false, &job);
        if (status)
            return status;
        show(w, job);
        if (!done(w))
            nanosleep(&(struct timespec){.tv_sec = 1}, NULL);
    }
    return 0;
}

/* Ctrl-C while watching stops the watching, not the job: say so, since a
 * user may think the job went with it.  The note is written ahead, so
 * the handler only writes it (async-signal-safe) and exits. */
static char interrupt_note[200];
static size_t interrupt_len;

static void on_watch_interrupt(int sig)
{
    (void)sig;
    ssize_t n = write(STDERR_FILENO, interrupt_note, interrupt_len);
    (void)n;
    _exit(130);
}

static int watch_job(remote *r, long long id)
{
    int n = snprintf(interrupt_note, sizeof interrupt_note,
                     "\ntessera: stopped watching; job %lld goes on on the daemon (tessera watch "
                     "%lld to follow it again, tessera cancel %lld to stop it)\n", id, id, id);
    interrupt_len = n > 0 && (size_t)n < sizeof interrupt_note ? (size_t)n : 0;
    struct sigaction sa = {.sa_handler = on_watch_interrupt};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    watcher w = {.r = r, .last_line = -1};
    char why[600] = "";
    int status = follow_stream(&w, id, why, sizeof why);
    if (status == 0 && !done(&w)) {
        if (w.shown)
            fputc('\n', stdout); /* keep the bar; the note goes below it */
        w.shown = false;
        fflush(stdout);
        fprintf(stderr, "tessera: job %lld: the event stream failed (%s); polling every second\n",
                id, why);
        status = poll_job(&w, id);
    }
    if (w.shown)
        fputs("\r\033[K", stdout);
    if (status == 0) {
        const json_t *job = w.job, *pg = json_object_get(job, "progress");
        const char *state = rmt_str(job, "state");
        char secs[32], end[128];
        if (!r->json) {
            printf("job %lld %s: %.0f solutions, %.0f nodes in %s%s", id, state,
                   rmt_num(job, "solutions"), rmt_num(pg, "nodes"),
                   duration(secs, sizeof secs, json_object_get(pg, "seconds")),
                   ending_text(end, sizeof end, job));
            if (job_error(job))
                printf(": %s", job_error(job));
            putchar('\n');
        }
        status = strcmp(state, "completed") == 0 ? 0 : EXIT_FAILED;
    }
    fflush(stdout);
    json_decref(w.job);
    return status;
}

static int cmd_watch(remote *r, const args *a)
{
    return watch_job(r, a->id);
}

/* ---- rerun: a job's puzzle and options submitted again ------------------------------------ */

static int cmd_rerun(remote *r, const args *a)
{
    char path[64];
    json_t *job = NULL, *pz = NULL;
    job_path(path, sizeof path, a->id, "");
    int status = rmt_call_json(r, "GET", path, NULL, false, &job);
    job_path(path, sizeof path, a->id, "/puzzle");
    if (status == 0)
        status = rmt_call_json(r, "GET", path, NULL, false, &pz);
    /* the options the job ran with, automatic choices pinned: the same search */
    json_t *doc = status ? NULL : json_pack("{s:O,s:O}", "puzzle", pz, "options",
                                             json_object_get(job, "options"));
    char *body = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    json_decref(pz);
    json_decref(job);
    if (status == 0 && body == NULL)
        status = EXIT_FAILED;
    if (status) {
        free(body);
        return status;
    }
    return post_job(r, body, a->watch);
}

/* ---- solutions ----------------------------------------------------------------------------- */

/* A text page: writes it out and counts its "# solution SEQ" lines. */
static int text_page(const cli_response *resp, long long *count, long long *last)
{
    fwrite(resp->body, 1, resp->len, stdout);
    *count = 0;
    for (const char *p = resp->body; p != NULL; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        long long seq;
        if (sscanf(p, "# solution %lld", &seq) == 1) {
            (*count)++;
            *last = seq;
        }
    }
    return 0;
}

/* An export line: a solution goes to stdout as it is; the error line that
 * ends an export cut short (docs/api.md) is kept for the caller. */
typedef struct export_state {
    long long lines;
    json_t *error;
} export_state;

static int export_line(void *ctx, const char *line, size_t len)
{
    export_state *e = ctx;
    if (strncmp(line, "{\"error\":", 9) == 0) {
        e->error = json_loadb(line, len, 0, NULL);
        return 0;
    }
    fwrite(line, 1, len, stdout);
    fputc('\n', stdout);
    e->lines++;
    return 0;
}

/* --all as JSON lines: the daemon's export, one request streamed to stdout. */
static int export_all(remote *r, const args *a)
{
    char path[160], query[96];
    snprintf(query, sizeof query, "/solutions?format=jsonl&all=1&after=%lld", a->after);
    job_path(path, sizeof path, a->id, query);
    cli_response resp;
    tsr_err err = {{0}};
    export_state e = {0};
    int rc = cli_http_lines(&r->http, path, export_line, &e, &resp, &err);
    fflush(stdout);
    int status = 0;
    if (rc)
        status = report_transport(rc, &resp, &err);
    else if (resp.status != 200)
        status = report_status(r, &resp);
    else if (e.error != NULL) {
        const json_t *o = json_object_get(e.error, "error");
        fprintf(stderr, "tessera: the export stopped after %lld solutions: %s (HTTP %d)\n",
                e.lines, json_string_value(json_object_get(o, "message")),
                (int)json_integer_value(json_object_get(o, "status")));
        status = EXIT_FAILED;
    }
    json_decref(e.error);
    cli_response_free(&resp);
    return status;
}

static int cmd_solutions(remote *r, const args *a)
{
    bool text = a->format && strcmp(a->format, "text") == 0;
    if (a->all && !text && !a->limit)
        return export_all(r, a);
    long long after = a->after, limit = a->limit ? a->limit : a->all ? 100 : 0;
    int status = 0;
    for (;;) {
        char path[160], query[96];
        snprintf(query, sizeof query, "/solutions?after=%lld&format=%s", after,
                 text ? "text" : "json");
        if (limit)
            snprintf(query + strlen(query), sizeof query - strlen(query), "&limit=%lld", limit);
        job_path(path, sizeof path, a->id, query);
        long long next = -1;
        if (text) {
            cli_response resp;
            long long count;
            if ((status = call(r, "GET", path, NULL, &resp)) != 0)
                break;
            text_page(&resp, &count, &next);
            cli_response_free(&resp);
            if (count < limit)
                next = -1; /* a short page is the last one available */
        } else {
            json_t *page = NULL;
            if ((status = rmt_call_json(r, "GET", path, NULL, true, &page)) != 0)
                break;
            size_t i;
            const json_t *sol;
            if (!r->json)
                json_array_foreach(json_object_get(page, "solutions"), i, sol)
                    rmt_print_json_line(sol);
            const json_t *n = json_object_get(page, "next");
            next = json_is_integer(n) ? (long long)json_integer_value(n) : -1;
            json_decref(page);
        }
        if (next <= after) /* the end, or a cursor that would not move */
            break;
        if (!a->all) {
            char lim[32] = "";
            if (a->limit)
                snprintf(lim, sizeof lim, " --limit=%lld", a->limit);
            if (!r->json)
                fprintf(stderr, "tessera: more solutions: tessera solutions --after=%lld%s%s "
                        "%lld\n", next, lim, text ? " --format=text" : "", a->id);
            break;
        }
        after = next;
    }
    fflush(stdout);
    return status;
}

/* ---- pause, resume, cancel, delete ----------------------------------------------------------- */

static int job_action(remote *r, const args *a, const char *action)
{
    char path[96], suffix[32];
    snprintf(suffix, sizeof suffix, "/%s", action);
    job_path(path, sizeof path, a->id, suffix);
    json_t *job = NULL;
    int status = rmt_call_json(r, "POST", path, "", true, &job);
    if (status)
        return status;
    if (!r->json)
        printf("job %lld: %s\n", a->id, rmt_str(job, "state"));
    json_decref(job);
    return 0;
}

static int cmd_pause(remote *r, const args *a) { return job_action(r, a, "pause"); }
static int cmd_resume(remote *r, const args *a) { return job_action(r, a, "resume"); }
static int cmd_cancel(remote *r, const args *a) { return job_action(r, a, "cancel"); }

static int cmd_delete(remote *r, const args *a)
{
    char path[64];
    job_path(path, sizeof path, a->id, "");
    cli_response resp;
    int status = call(r, "DELETE", path, NULL, &resp);
    if (status)
        return status;
    cli_response_free(&resp);
    if (!r->json)
        printf("job %lld deleted\n", a->id);
    return 0;
}

/* ---- the command line ------------------------------------------------------------------------ */

static const int submit_opts[] = {O_WATCH, O_PROBLEM, 0};
static const int rerun_opts[] = {O_WATCH, 0};
static const int batch_submit_opts[] = {O_HOLE, O_NAME, O_EVERY, 0};
static const int status_opts[] = {O_STATE, 0};
static const int solutions_opts[] = {O_AFTER, CLI_JOB_CODE(limit), O_FORMAT, O_ALL, 0};
static const int no_opts[] = {0};

static const command commands[] = {
    {"submit", cmd_submit, 1, true, true, submit_opts,
     "submit [--watch] [--problem=N|NAME] [job options] FILE"},
    {"status", cmd_status, -1, false, false, status_opts, "status [--state=S] [ID]"},
    {"watch", cmd_watch, 1, false, false, no_opts, "watch ID"},
    {"solutions", cmd_solutions, 1, false, false, solutions_opts,
     "solutions [--after=SEQ] [--limit=N] [--format=json|text] [--all] ID"},
    {"pause", cmd_pause, 1, false, false, no_opts, "pause ID"},
    {"resume", cmd_resume, 1, false, false, no_opts, "resume ID"},
    {"cancel", cmd_cancel, 1, false, false, no_opts, "cancel ID"},
    {"delete", cmd_delete, 1, false, false, no_opts, "delete ID"},
    {"record", cmd_record, 1, false, false, no_opts, "record ID"},
    {"rerun", cmd_rerun, 1, false, false, rerun_opts, "rerun [--watch] ID"},
    /* `tessera batch submit ...`: cli_remote_main joins the two words */
    {"batch submit", rmt_batch_submit, 2, true, true, batch_submit_opts,
     "batch submit [--name=N] [--hole=each-cell|ROWS [--every-position]] [job options] FILE..."},
    {"batch show", rmt_batch_show, 1, false, false, no_opts, "batch show ID"},
    {"batch list", rmt_batch_list, 0, false, false, no_opts, "batch list"},
};

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

bool cli_is_remote_command(const char *cmd)
{
    return find_command(cmd) != NULL || strcmp(cmd, "batch") == 0;
}

static bool takes(const command *cmd, int code)
{
    if (code >= O_JOB && cmd->job)
        return true;
    for (const int *o = cmd->opts; *o; o++)
        if (*o == code)
            return true;
    return false;
}

/* The value of a command's own option: 0, or EXIT_USAGE after saying why. */
static int own_option(const command *cmd, int code, const char *v, args *a)
{
    long long n;
    switch (code) {
    case O_WATCH: a->watch = true; return 0;
    case O_PROBLEM: a->problem = v; return 0;
    case O_EVERY: a->every = true; return 0;
    case O_NAME: a->name = v; return 0;
    case O_HOLE:
        if (strcmp(v, "each-cell") != 0 && (v[strspn(v, "#./")] != 0 || strchr(v, '#') == NULL))
            return cli_usage_error("--hole: expected each-cell or rows of '#' and '.' split by "
                                   "'/' (##/##), got '%s'", v);
        a->hole = v;
        return 0;
    case O_ALL: a->all = true; return 0;
    case O_STATE:
        if (tsr_job_state_parse(v) >= 0) {
            a->state = v;
            return 0;
        }
        char fmt[160];
        snprintf(fmt, sizeof fmt, "--state: expected %s, got '%%s'", tsr_job_states_text);
        return cli_usage_error(fmt, v);
    case O_FORMAT:
        if (strcmp(v, "json") != 0 && strcmp(v, "text") != 0)
            return cli_usage_error("--format: expected json or text, got '%s'", v);
        a->format = v;
        return 0;
    case O_AFTER:
        if (!cli_parse_long(v, 0, LLONG_MAX, &n))
            return cli_usage_error("--after: expected a number >= 0, got '%s'", v);
        a->after = n;
        return 0;
    case CLI_JOB_CODE(limit):
        if (cmd->run != cmd_solutions)
            break; /* submit's --limit is a job option */
        if (!cli_parse_long(v, 1, 1000, &n))
            return cli_usage_error("--limit: expected a number from 1 to 1000, got '%s'", v);
        a->limit = n;
        return 0;
    }
    a->flags[a->nflags++] = (flag){code, v}; /* a job option, checked with the file's */
    return 0;
}

int cli_remote_main(int argc, char **argv)
{
    static const struct option own[] = {
        {"server", required_argument, NULL, O_SERVER},
        {"token", required_argument, NULL, O_TOKEN},
        {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'},
        {"watch", no_argument, NULL, O_WATCH},
        {"problem", required_argument, NULL, O_PROBLEM},
        {"state", required_argument, NULL, O_STATE},
        {"after", required_argument, NULL, O_AFTER},
        {"format", required_argument, NULL, O_FORMAT},
        {"all", no_argument, NULL, O_ALL},
        {"hole", required_argument, NULL, O_HOLE},
        {"name", required_argument, NULL, O_NAME},
        {"every-position", no_argument, NULL, O_EVERY},
        {NULL, 0, NULL, 0},
    };
    struct option longopts[CLI_LONGOPTS(sizeof own / sizeof *own)];
    cli_longopts(longopts, own, true);
    const command *cmd = find_command(argv[0]);
    if (strcmp(argv[0], "batch") == 0) { /* batch SUBCOMMAND: one word for the table */
        char both[32];
        snprintf(both, sizeof both, "batch %s", argc > 1 ? argv[1] : "");
        if ((cmd = find_command(both)) == NULL)
            return cli_usage_error("batch: expected submit, show or list, got '%s'",
                                   argc > 1 ? argv[1] : "");
        argc--;
        argv++;
    }
    const char *server = getenv("TESSERA_SERVER"), *token = getenv("TESSERA_TOKEN");
    remote r = {.tty = isatty(STDOUT_FILENO)};
    args a = {.flags = calloc((size_t)argc + 1, sizeof *a.flags)};
    int ch, idx, status = 0;
    if (a.flags == NULL)
        return EXIT_FAILED;
    optind = 1;
    while (status == 0 && (ch = getopt_long(argc, argv, "h", longopts, &idx)) != -1) {
        if (ch == 'h') {
            printf("usage: tessera %s\nSee 'tessera help' for the options.\n", cmd->usage);
            free(a.flags);
            return 0;
        } else if (ch == '?') { /* getopt said what */
            fprintf(stderr, "Try 'tessera help'.\n");
            status = EXIT_USAGE;
        } else if (ch == O_SERVER) {
            server = optarg;
        } else if (ch == O_TOKEN) {
            token = optarg;
        } else if (ch == O_JSON) {
            r.json = true;
        } else if (!takes(cmd, ch)) {
            char what[96];
            snprintf(what, sizeof what, "--%s does not apply to %s", longopts[idx].name,
                     cmd->name);
            status = cli_usage_error("%s", what);
        } else {
            status = own_option(cmd, ch, optarg, &a);
        }
    }
    int nops = argc - optind;
    if (cmd->operands == 2 && nops > 1) { /* batch submit: FILE... */
        a.files = argv + optind;
        a.nfiles = nops;
        nops = 1;
    } else if (cmd->operands == 2 && nops == 1) {
        a.files = argv + optind;
        a.nfiles = 1;
    }
    if (status == 0 && nops > 0 && cmd->operands == 0)
        status = cli_usage_error("%s takes no operand", cmd->name);
    else if (status == 0 && nops == 0 && cmd->operands >= 1)
        status = cli_usage_error(cmd->file ? "%s needs a puzzle file" : "%s needs a job id",
                                 cmd->name);
    else if (status == 0 && nops > 1)
        status = cli_usage_error(cmd->file ? "%s takes one puzzle file"
                                           : "%s takes at most one job id",
                                 cmd->name);
    if (status == 0 && nops == 1) {
        a.operand = argv[optind];
        if (!cmd->file && !cli_parse_long(a.operand, 1, LLONG_MAX, &a.id))
            status = cli_usage_error("bad job id '%s': expected a number >= 1", a.operand);
    }
    if (status == 0 && r.json && a.format && strcmp(a.format, "text") == 0)
        status = cli_usage_error("--json and --format=%s do not go together", a.format);
    tsr_err err = {{0}};
    if (status == 0 && cli_url_parse(server && *server ? server : DEFAULT_SERVER, &r.http.url,
                                     &err) != 0)
        status = cli_usage_error("--server: %s", err.msg);
    if (status == 0) {
        r.http.token = token && *token ? token : NULL;
        status = cmd->run(&r, &a);
    }
    free(a.flags);
    return status;
}
