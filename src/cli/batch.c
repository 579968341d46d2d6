/*
 * batch.c - tessera batch submit | show | list: batches of jobs on tesserad
 * (POST /api/v1/batches, GET /api/v1/batches[/{id}]), each file checked
 * here as submit checks it, or the hole variants of one puzzle that the
 * daemon makes (--hole).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/remote.h"

/* --hole as the API spells it: "each-cell", or rows "##/##" as {"rows": [...]}. */
static json_t *hole_json(const char *spec)
{
    if (strcmp(spec, "each-cell") == 0)
        return json_string(spec);
    json_t *rows = json_array();
    for (const char *p = spec; rows != NULL;) {
        size_t n = strcspn(p, "/");
        json_array_append_new(rows, json_stringn(p, n));
        if (p[n] == 0)
            break;
        p += n + 1;
    }
    return json_pack("{s:o}", "rows", rows);
}

/* One file as a job body (the file's options, the command line's on top):
 * read and checked here like submit's, except with --hole, whose whole
 * board need not be solvable (the daemon reads it). */
static int batch_member(const args *a, const char *path, json_t **out)
{
    const char *name = tsr_file_name(path);
    char *text = NULL;
    size_t len;
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    tsr_options_init(&opt);
    int status = 0;
    if (tsr_file_read(path, &text, &len, &err) != 0) {
        fprintf(stderr, "tessera: %s\n", err.msg);
        return EXIT_USAGE;
    }
    if (a->hole == NULL) {
        int rc = tsr_puzzle_read(text, len, name, &pz, &opt, &err);
        if (rc) {
            fprintf(stderr, "tessera: %s\n", err.msg[0] ? err.msg : tsr_strerror(rc));
            free(text);
            return rc == TSR_ENOMEM ? EXIT_FAILED : EXIT_USAGE;
        }
    } else if (text[strspn(text, " \t\r\n\f\v")] != '{' ||
               (*out = json_loadb(text, len, 0, NULL)) == NULL) {
        free(text);
        return cli_usage_error("--hole needs a JSON puzzle file (docs/puzzle-format.md): %s",
                               name);
    } else {
        /* the board with its hole is read by the daemon; the options here */
        json_t *o = json_object_get(*out, "options");
        char *otext = o ? json_dumps(o, JSON_COMPACT) : NULL;
        int rc = otext ? tsr_options_read_json(otext, strlen(otext), name, NULL, &opt, &err) : 0;
        free(otext);
        json_decref(*out);
        *out = NULL;
        if (rc) {
            fprintf(stderr, "tessera: %s\n", err.msg[0] ? err.msg : tsr_strerror(rc));
            free(text);
            return EXIT_USAGE;
        }
    }
    /* with --hole there is no puzzle to check a redundancy piece against:
     * the daemon does */
    for (int i = 0; i < a->nflags && status == 0; i++)
        status = cli_apply_flag(&a->flags[i], pz, &opt);
    char *body = status ? NULL : rmt_submit_body(name, text, len, pz, &opt);
    tsr_puzzle_free(pz);
    free(text);
    if (body == NULL)
        return status ? status : EXIT_USAGE;
    *out = json_loads(body, 0, NULL);
    free(body);
    return *out ? 0 : EXIT_FAILED;
}

/* The jobs of a batch's "states" counts that are in a final state. */
static double final_jobs(const json_t *states)
{
    double n = 0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)states, key, v)
        if (rmt_is_final(key))
            n += json_number_value(v);
    return n;
}

static void print_batch_row(const json_t *b)
{
    printf("%6lld  %5lld  %5lld  %10.0f  %s\n", (long long)rmt_num(b, "id"), (long long)rmt_num(b, "jobs"),
           (long long)final_jobs(json_object_get(b, "states")), rmt_num(b, "solutions"),
           json_is_string(json_object_get(b, "name")) ? rmt_str(b, "name") : "-");
}

/* A batch and its members, fewest solutions first (the daemon's order). */
static void print_batch(const json_t *b)
{
    printf("batch %lld  %s\n", (long long)rmt_num(b, "id"),
           json_is_string(json_object_get(b, "name")) ? rmt_str(b, "name") : "");
    const json_t *st = json_object_get(b, "states");
    printf("  %lld jobs:", (long long)rmt_num(b, "jobs"));
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)st, key, v)
        if (json_integer_value(v) > 0)
            printf(" %lld %s", (long long)json_integer_value(v), key);
    printf("; %.0f solutions in all\n", rmt_num(b, "solutions"));
    rmt_print_job_header();
    size_t i;
    const json_t *job;
    json_array_foreach(json_object_get(b, "members"), i, job)
        rmt_print_job_row(job);
}

int rmt_batch_submit(remote *r, const args *a)
{
    if (a->hole != NULL && a->nfiles != 1)
        return cli_usage_error("--hole makes the variants of one puzzle file, not %s",
                               "several");
    if (a->every && a->hole == NULL)
        return cli_usage_error("--every-position goes with --hole%s", "");
    json_t *doc = json_object(), *jobs = json_array();
    int status = 0;
    for (int i = 0; i < a->nfiles && status == 0; i++) {
        json_t *m = NULL;
        if ((status = batch_member(a, a->files[i], &m)) == 0)
            json_array_append_new(jobs, m);
    }
    if (a->name)
        json_object_set_new(doc, "name", json_string(a->name));
    if (status == 0 && a->hole) {
        json_t *m = json_array_get(jobs, 0);
        json_object_set(doc, "puzzle", json_object_get(m, "puzzle"));
        json_object_set(doc, "options", json_object_get(m, "options"));
        json_object_set_new(doc, "variants",
                            json_pack("{s:o,s:b}", "hole", hole_json(a->hole), "up_to_symmetry",
                                      !a->every));
    } else {
        json_object_set(doc, "jobs", jobs);
    }
    json_decref(jobs);
    char *body = status ? NULL : json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (body == NULL)
        return status ? status : EXIT_FAILED;
    json_t *b = NULL;
    status = rmt_call_json(r, "POST", "/api/v1/batches", body, true, &b);
    free(body);
    if (status)
        return status;
    if (!r->json)
        printf("%lld\n", (long long)rmt_num(b, "id"));
    json_decref(b);
    return 0;
}

int rmt_batch_show(remote *r, const args *a)
{
    char path[64];
    snprintf(path, sizeof path, "/api/v1/batches/%lld", a->id);
    json_t *b = NULL;
    int status = rmt_call_json(r, "GET", path, NULL, true, &b);
    if (status == 0 && !r->json)
        print_batch(b);
    json_decref(b);
    return status;
}

int rmt_batch_list(remote *r, const args *a)
{
    (void)a;
    json_t *all = json_array();
    long long after = 0;
    int status = 0;
    for (;;) {
        char path[96];
        snprintf(path, sizeof path, "/api/v1/batches?limit=%d&after=%lld", LIST_PAGE, after);
        json_t *page = NULL;
        if ((status = rmt_call_json(r, "GET", path, NULL, false, &page)) != 0)
            break;
        json_array_extend(all, json_object_get(page, "batches"));
        const json_t *next = json_object_get(page, "next");
        long long n = json_is_integer(next) ? (long long)json_integer_value(next) : -1;
        json_decref(page);
        if (n <= after)
            break;
        after = n;
    }
    if (status == 0 && r->json) {
        json_t *doc = json_pack("{s:O,s:n}", "batches", all, "next");
        rmt_print_json_line(doc);
        json_decref(doc);
    } else if (status == 0) {
        printf("%6s  %5s  %5s  %10s  %s\n", "ID", "JOBS", "DONE", "SOLUTIONS", "NAME");
        size_t i;
        const json_t *b;
        json_array_foreach(all, i, b)
            print_batch_row(b);
    }
    json_decref(all);
    return status;
}

