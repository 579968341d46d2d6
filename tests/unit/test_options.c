/*
 * test_options.c - unit tests of the job options' list (tessera/options.h)
 * and what is made from it: the JSON reader's range checks, the command
 * line's, the writer, the description GET /api/v1/options serves.
 *
 * The values tried come from that description (each option's named
 * values, integer range and text limits), so a new option is tested by
 * the loops below as soon as it is in the list: its bounds are taken, one
 * past them and a value of the wrong type are refused with a message that
 * names the JSON path or the flag as the user wrote it, and every value
 * reads back the same after writing.  Each loop runs once per option, in
 * its own process.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tessera/options.h"

/* A puzzle with the pieces D and E, for the redundancy piece. */
static tsr_puzzle *puzzle(void)
{
    static const char doc[] = "{\"board\": {\"size\": [2, 2]}, \"pieces\": ["
                              "{\"name\": \"D\", \"rows\": [\"##\"]},"
                              " {\"name\": \"E\", \"rows\": [\"##\"]}]}";
    tsr_puzzle *pz = NULL;
    tsr_err err = {{0}};
    ck_assert_msg(tsr_puzzle_read_json(doc, strlen(doc), "p", &pz, NULL, &err) == 0, "%s",
                  err.msg);
    return pz;
}

/* The description of option i, from tsr_options_describe_json (owned by
 * the document *doc, to decref). */
static const json_t *described(int i, json_t **doc)
{
    char *text = tsr_options_describe_json();
    ck_assert_ptr_nonnull(text);
    *doc = json_loads(text, 0, NULL);
    free(text);
    ck_assert_ptr_nonnull(*doc);
    const json_t *o = json_array_get(json_object_get(*doc, "options"), (size_t)i);
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(json_string_value(json_object_get(o, "name")), tsr_option_list[i].name);
    return o;
}

/* {"NAME": v} (or {"options": {"NAME": v}} with the puzzle, as a job) read
 * into *opt: the return code, err filled. */
static int read_value(const tsr_option *op, const json_t *v, const tsr_puzzle *pz, bool job,
                      tsr_options *opt, tsr_err *err)
{
    json_t *doc = json_pack("{s:O}", op->name, v);
    if (job) {
        static const char fmt[] = "{\"puzzle\": {\"board\": {\"size\": [2, 2]}, \"pieces\": ["
                                  "{\"name\": \"D\", \"rows\": [\"##\"]},"
                                  " {\"name\": \"E\", \"rows\": [\"##\"]}]}, \"options\": %s}";
        char *o = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY);
        char text[4096];
        snprintf(text, sizeof text, fmt, o);
        free(o);
        json_decref(doc);
        tsr_puzzle *read = NULL;
        int rc = tsr_puzzle_read_json(text, strlen(text), "t.json", &read, opt, err);
        tsr_puzzle_free(read);
        return rc;
    }
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    int rc = tsr_options_read_json(text, strlen(text), "o", pz, opt, err);
    free(text);
    return rc;
}

/* The values option o takes, as its description says: named values,
 * integer bounds, the longest text. */
static json_t *good_values(const json_t *o)
{
    json_t *good = json_array();
    size_t k;
    const json_t *c;
    json_array_foreach(json_object_get(o, "choices"), k, c)
        json_array_append(good, json_object_get(c, "value"));
    const json_t *in = json_object_get(o, "integer"), *st = json_object_get(o, "string");
    if (in) {
        json_array_append(good, json_object_get(in, "min"));
        json_array_append(good, json_object_get(in, "max"));
    }
    if (st) {
        size_t max = (size_t)json_integer_value(json_object_get(st, "max_bytes"));
        char *s = malloc(max + 1);
        memset(s, 'a', max);
        s[max] = '\0';
        json_array_append_new(good, json_string(s));
        free(s);
    }
    return good;
}

/* One past each bound (where JSON can say it), and a value of no kind. */
static json_t *bad_values(const json_t *o)
{
    json_t *bad = json_array();
    const json_t *in = json_object_get(o, "integer"), *st = json_object_get(o, "string");
    if (in) {
        json_int_t min = json_integer_value(json_object_get(in, "min"));
        json_int_t max = json_integer_value(json_object_get(in, "max"));
        if (min > LLONG_MIN)
            json_array_append_new(bad, json_integer(min - 1));
        if (max < LLONG_MAX)
            json_array_append_new(bad, json_integer(max + 1));
    }
    if (st) {
        size_t max = (size_t)json_integer_value(json_object_get(st, "max_bytes"));
        char *s = malloc(max + 2);
        memset(s, 'a', max + 1);
        s[max + 1] = '\0';
        json_array_append_new(bad, json_string(s));
        free(s);
    }
    json_array_append_new(bad, json_array());
    return bad;
}

/* A refusal names the value's place (where: "SOURCE: $.path") and says
 * what is wrong: for a value of the wrong kind or out of range, what the
 * description says the option accepts; for text, why it is not one. */
static void check_refusal(const char *msg, const char *where, const json_t *o, const json_t *v)
{
    char want[512];
    if (json_is_string(v)) {
        snprintf(want, sizeof want, "%s: ", where);
        ck_assert_msg(strncmp(msg, want, strlen(want)) == 0, "\"%s\" does not start \"%s\"",
                      msg, want);
        ck_assert_msg(strstr(msg, "longer than") || strstr(msg, "a piece name is at most") ||
                          strstr(msg, "no piece is named"),
                      "\"%s\" says why the text is no value", msg);
        return;
    }
    snprintf(want, sizeof want, "%s: expected %s, got ", where,
             json_string_value(json_object_get(o, "accepts")));
    ck_assert_msg(strncmp(msg, want, strlen(want)) == 0, "\"%s\" does not start \"%s\"", msg,
                  want);
}

/* ---- the list ---------------------------------------------------------------------- */

/* Every line is well formed: a unique name that tsr_option_find finds, a
 * command-line form its kind can read, a default in range or automatic. */
START_TEST(list_is_well_formed)
{
    tsr_options def;
    tsr_options_init(&def);
    for (int i = 0; i < TSR_NOPTIONS; i++) {
        const tsr_option *op = &tsr_option_list[i];
        ck_assert_ptr_eq(tsr_option_find(op->name), op);
        ck_assert_msg(op->help[0] != '\0', "%s has help", op->name);
        ck_assert_msg(op->min <= op->max, "%s: min <= max", op->name);
        bool none = op->cli[0] == '\0', optional = op->cli[0] == '[';
        ck_assert_msg(none == (op->kind == TSR_KIND_SWITCH), "%s: only a switch has no value",
                      op->name);
        ck_assert_msg(none || optional || op->cli[0] == '=', "%s: cli \"%s\"", op->name,
                      op->cli);
        /* an optional value means what the kind's bare flag means */
        tsr_options o;
        tsr_options_init(&o);
        tsr_err err = {{0}};
        int rc = tsr_option_parse_text(&o, op, NULL, NULL, &err);
        ck_assert_msg((rc == 0) == (none || optional), "%s without a value: %s", op->name,
                      err.msg);
        /* a default is a value of the option, or automatic (written as nothing) */
        char *text = tsr_options_write_json(&def);
        tsr_options back;
        ck_assert_int_eq(tsr_options_read_json(text, strlen(text), "d", NULL, &back, &err), 0);
        ck_assert(memcmp(&back, &def, sizeof def) == 0);
        free(text);
    }
    ck_assert_ptr_null(tsr_option_find("speed"));
    ck_assert_ptr_null(tsr_option_find(""));
}
END_TEST

/* The defaults: the engine's choice where the list says TSR_AUTO, and
 * written out as the options always written, nothing else. */
START_TEST(defaults)
{
    tsr_options o;
    tsr_options_init(&o);
    ck_assert_int_eq(o.unique, TSR_UNIQUE_ROTATIONS);
    ck_assert_int_eq(o.fila, TSR_AUTO);
    ck_assert_int_eq(o.volume, TSR_AUTO);
    ck_assert_int_eq(o.store, TSR_STORE_ALL);
    ck_assert_str_eq(o.order, "");
    ck_assert_str_eq(o.redundancy, "");
    char *text = tsr_options_write_json(&o);
    ck_assert_str_eq(text, "{\"unique\":\"rotations\",\"limit\":0,\"threads\":0,\"priority\":0}");
    free(text);
}
END_TEST

/* The words of the messages, plain and as the docs' table has them. */
START_TEST(accepts)
{
    char buf[256];
    ck_assert_str_eq(tsr_option_accepts(tsr_option_find("threads"), false, buf, sizeof buf),
                     "an integer from 0 to 1024");
    ck_assert_str_eq(tsr_option_accepts(tsr_option_find("limit"), false, buf, sizeof buf),
                     "an integer >= 0");
    ck_assert_str_eq(tsr_option_accepts(tsr_option_find("volume"), true, buf, sizeof buf),
                     "`false`, `\"once\"` or an integer from 0 to 2147483647");
    ck_assert_str_eq(tsr_option_accepts(tsr_option_find("unique"), false, buf, sizeof buf),
                     "one of \"raw\", \"rotations\", \"mirror\"");
    ck_assert_str_eq(tsr_option_flag_text(tsr_option_find("nof"), buf, sizeof buf),
                     "--nof, --no-nof");
    ck_assert_str_eq(tsr_option_flag_text(tsr_option_find("volume"), buf, sizeof buf),
                     "--volume[=N|once|off], --no-volume");
    ck_assert_str_eq(tsr_option_flag_text(tsr_option_find("fila"), buf, sizeof buf), "--fila=N");
    ck_assert(tsr_option_has_no(tsr_option_find("pieces")));
    ck_assert(!tsr_option_has_no(tsr_option_find("memo")));
}
END_TEST

/* The description lists the options in order and the counting modes, a
 * flat board turned over among them. */
START_TEST(description)
{
    json_t *doc;
    const json_t *o = described(TSR_OPTION_unique, &doc);
    ck_assert_int_eq(json_array_size(json_object_get(doc, "options")), TSR_NOPTIONS);
    ck_assert_str_eq(json_string_value(json_object_get(o, "default")), "rotations");
    const json_t *modes = json_object_get(doc, "counting_modes");
    ck_assert_int_eq(json_array_size(modes), 3);
    for (int u = 0; u < 3; u++)
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(modes, (size_t)u),
                                                           "name")),
                         tsr_unique_names[u]);
    ck_assert(strstr(json_string_value(json_object_get(json_array_get(modes, 1), "text")),
                     "turned over is a rotation") != NULL);
    const json_t *fila = json_array_get(json_object_get(doc, "options"), TSR_OPTION_fila);
    ck_assert(json_is_null(json_object_get(fila, "default")));
    ck_assert_str_eq(json_string_value(json_object_get(fila, "group")), "engine");
    json_decref(doc);
}
END_TEST

/* ---- JSON: every option's bounds ------------------------------------------------------ */

START_TEST(json_bounds)
{
    const tsr_option *op = &tsr_option_list[_i];
    json_t *doc;
    const json_t *o = described(_i, &doc);
    tsr_puzzle *pz = puzzle();
    json_t *good = good_values(o), *bad = bad_values(o);
    ck_assert_msg(json_array_size(good) > 0, "%s takes something", op->name);
    if (op->kind == TSR_KIND_PIECE) /* a name of the puzzle's, and one it lacks */
        json_array_append_new(bad, json_string("Q"));
    size_t k;
    const json_t *v;
    /* alone, a piece name is checked against no puzzle (the longest is not
     * D's), but for "Q", which is a name, just not one of pz's */
    json_array_foreach(good, k, v) {
        tsr_options opt;
        tsr_err err = {{0}};
        int rc = read_value(op, v, json_is_string(v) ? NULL : pz, false, &opt, &err);
        ck_assert_msg(rc == 0, "%s: a good value refused: %s", op->name, err.msg);
    }
    json_array_foreach(bad, k, v) {
        for (int job = 0; job < 2; job++) {
            tsr_options opt;
            tsr_err err = {{0}};
            bool q = json_is_string(v) && strcmp(json_string_value(v), "Q") == 0;
            int rc = read_value(op, v, q ? pz : NULL, job, &opt, &err);
            char *shown = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            ck_assert_msg(rc == TSR_EINVAL, "%s: %s taken (%s)", op->name, shown,
                          job ? "in a job" : "alone");
            free(shown);
            char where[96];
            snprintf(where, sizeof where, "%s: $.%s%s", job ? "t.json" : "o",
                     job ? "options." : "", op->name);
            check_refusal(err.msg, where, o, v);
            /* a refused value leaves the options at their defaults */
            tsr_options def;
            tsr_options_init(&def);
            ck_assert(memcmp(&opt, &def, sizeof def) == 0);
        }
    }
    json_decref(good);
    json_decref(bad);
    json_decref(doc);
    tsr_puzzle_free(pz);
}
END_TEST

/* ---- the command line: the same bounds, and the same values ---------------------------- */

/* The text that spells JSON value v on the command line: NULL (no value)
 * for true, "off" for false, a number's digits, a string as it is. */
static const char *spelling(const json_t *v, char *buf, size_t size)
{
    if (json_is_true(v))
        return NULL;
    if (json_is_false(v))
        return "off";
    if (json_is_integer(v))
        return snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v)), buf;
    return json_string_value(v);
}

START_TEST(cli_bounds)
{
    const tsr_option *op = &tsr_option_list[_i];
    json_t *doc;
    const json_t *o = described(_i, &doc);
    tsr_puzzle *pz = puzzle();
    json_t *good = good_values(o), *bad = bad_values(o);
    size_t k;
    const json_t *v;
    json_array_foreach(good, k, v) {
        const tsr_puzzle *against = json_is_string(v) ? NULL : pz; /* as in json_bounds */
        char buf[64];
        const char *text = spelling(v, buf, sizeof buf);
        tsr_options a, b;
        tsr_options_init(&a);
        tsr_err err = {{0}};
        int rc = tsr_option_parse_text(&a, op, text, against, &err);
        ck_assert_msg(rc == 0, "--%s=%s refused: %s", op->name, text ? text : "(none)", err.msg);
        /* the command line means what JSON means */
        ck_assert_int_eq(read_value(op, v, against, false, &b, &err), 0);
        ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "--%s=%s differs from its JSON", op->name,
                      text ? text : "(none)");
    }
    /* one past the bounds, as digits; and text that spells no value of any kind */
    json_array_foreach(bad, k, v) {
        if (!json_is_integer(v))
            continue;
        char buf[64], want[512];
        const char *text = spelling(v, buf, sizeof buf);
        tsr_options a;
        tsr_options_init(&a);
        tsr_err err = {{0}};
        ck_assert_int_eq(tsr_option_parse_text(&a, op, text, pz, &err), TSR_EINVAL);
        snprintf(want, sizeof want, "--%s: expected %s, got '%s'", op->name,
                 json_string_value(json_object_get(o, "accepts")), text);
        ck_assert_str_eq(err.msg, want);
    }
    tsr_options a;
    tsr_options_init(&a);
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_option_parse_text(&a, op, "x!", pz, &err), TSR_EINVAL);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "--%s: ", op->name);
    ck_assert_msg(strncmp(err.msg, prefix, strlen(prefix)) == 0, "%s", err.msg);
    json_decref(good);
    json_decref(bad);
    json_decref(doc);
    tsr_puzzle_free(pz);
}
END_TEST

/* What the flags without a value and the words stand for. */
START_TEST(cli_words)
{
    static const struct {
        const char *name, *text;
        const char *json; /* what it is the same as */
    } cases[] = {
        {"volume", NULL, "\"once\""}, {"volume", "once", "\"once\""}, {"volume", "off", "false"},
        {"volume", "0", "false"},     {"parity", NULL, "true"},       {"parity", "off", "false"},
        {"parity", "1", "true"},      {"nof", NULL, "true"},          {"nof", "off", "false"},
        {"redundancy", NULL, "true"}, {"redundancy", "off", "false"}, {"store", "none", "0"},
        {"store", "all", "\"all\""},  {"unique", "raw", "\"raw\""},   {"limit", "+7", "7"},
        /* the words JSON's booleans read as, where the JSON takes them */
        {"parity", "true", "true"},   {"parity", "on", "true"},       {"parity", "false", "false"},
        {"pieces", "true", "true"},   {"pieces", "on", "true"},       {"pieces", "false", "false"},
        {"volume", "false", "false"}, {"redundancy", "false", "false"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const tsr_option *op = tsr_option_find(cases[i].name);
        tsr_options a, b;
        tsr_options_init(&a);
        tsr_err err = {{0}};
        ck_assert_msg(tsr_option_parse_text(&a, op, cases[i].text, NULL, &err) == 0, "%s",
                      err.msg);
        json_t *v = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);
        ck_assert_int_eq(read_value(op, v, NULL, false, &b, &err), 0);
        json_decref(v);
        ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "--%s=%s is not %s", cases[i].name,
                      cases[i].text ? cases[i].text : "(none)", cases[i].json);
    }
    tsr_options o;
    tsr_options_init(&o);
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_option_parse_text(&o, tsr_option_find("volume"), NULL, NULL, &err), 0);
    ck_assert_int_eq(o.volume, TSR_VOLUME_ONCE);
    ck_assert_int_eq(tsr_option_parse_text(&o, tsr_option_find("redundancy"), "off", NULL, &err),
                     0);
    ck_assert_str_eq(o.redundancy, TSR_REDUNDANCY_OFF);
    ck_assert_int_eq(tsr_option_parse_text(&o, tsr_option_find("limit"), NULL, NULL, &err),
                     TSR_EINVAL);
    ck_assert_str_eq(err.msg, "--limit: needs a value");
}
END_TEST

/* ---- writing: read, write, read gives the same ---------------------------------------- */

START_TEST(round_trip)
{
    const tsr_option *op = &tsr_option_list[_i];
    json_t *doc;
    const json_t *o = described(_i, &doc);
    tsr_puzzle *pz = puzzle();
    json_t *good = good_values(o);
    json_array_append_new(good, json_string("D")); /* a piece of pz, for redundancy */
    size_t k;
    const json_t *v;
    json_array_foreach(good, k, v) {
        tsr_options a, b;
        tsr_err err = {{0}};
        if (read_value(op, v, NULL, false, &a, &err) != 0)
            continue; /* "D" is no value of most options */
        char *text = tsr_options_write_json(&a);
        ck_assert_ptr_nonnull(text);
        ck_assert_msg(tsr_options_read_json(text, strlen(text), "w", NULL, &b, &err) == 0,
                      "%s: %s does not read back: %s", op->name, text, err.msg);
        ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "%s: %s reads back differently", op->name,
                      text);
        char *again = tsr_options_write_json(&b);
        ck_assert_str_eq(again, text);
        free(again);
        free(text);
    }
    json_decref(good);
    json_decref(doc);
    tsr_puzzle_free(pz);
}
END_TEST

static Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("list");
    tcase_add_test(tc, list_is_well_formed);
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, accepts);
    tcase_add_test(tc, description);
    suite_add_tcase(s, tc);

    tc = tcase_create("each option");
    tcase_add_loop_test(tc, json_bounds, 0, TSR_NOPTIONS);
    tcase_add_loop_test(tc, cli_bounds, 0, TSR_NOPTIONS);
    tcase_add_loop_test(tc, round_trip, 0, TSR_NOPTIONS);
    tcase_add_test(tc, cli_words);
    suite_add_tcase(s, tc);
    return s;
}

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    return options_suite();
}
