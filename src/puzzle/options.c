/*
 * options.c - the job options of tessera/options.h: the list made into a
 * table, and what walks it: the defaults, one value read from JSON or
 * from command-line text, the options written as JSON, and the list
 * described for people (what each option accepts) and for the dashboard
 * (GET /api/v1/options).
 *
 * What differs between options is their kind, and a kind is one row of
 * `kinds` below: its reader, its value as JSON, what the command line
 * spells with it and the named values the dashboard offers.  The plain
 * kinds (INT, LONG, SWITCH, MODE) share their readers; the odd ones
 * (ORDER, VOLUME, PARITY, PIECE, STORE) have their own.  Command-line text
 * is turned into the JSON value it spells and read by the same reader, so
 * a value means the same and is checked the same in a job file, in a
 * request to the daemon and after --name=.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "puzzle/option_json.h"
#include "tessera/options.h"

#define OPTION_ENTRY(name, kind, min, max, def, flags, cli, help) \
    {#name, TSR_KIND_##kind, offsetof(tsr_options, name), min, max, def, flags, cli, help},

const tsr_option tsr_option_list[TSR_NOPTIONS] = {TSR_OPTIONS(OPTION_ENTRY)};

/* A heuristic schedule's alphabet; the engine checks its grammar. */
#define ORDER_CHARS "abcdefghijklmnopqrstuvwxyz0123456789=:@.,-"
#define ORDER_SET "[a-z0-9=:@.,-]"

/* ---- members ------------------------------------------------------------
 * Every kind but ORDER and PIECE (text, op->max bytes) is a number; its
 * C type is the kind's (tessera/options.h). */

static void *member(tsr_options *o, const tsr_option *op)
{
    return (char *)o + op->offset;
}

static const void *member_of(const tsr_options *o, const tsr_option *op)
{
    return (const char *)o + op->offset;
}

static long long get_number(const tsr_options *o, const tsr_option *op)
{
    const void *p = member_of(o, op);
    switch (op->kind) {
    case TSR_KIND_MODE: return *(const enum tsr_unique *)p;
    case TSR_KIND_LONG:
    case TSR_KIND_STORE: return *(const long long *)p;
    default: return *(const int *)p;
    }
}

static void set_number(tsr_options *o, const tsr_option *op, long long v)
{
    void *p = member(o, op);
    switch (op->kind) {
    case TSR_KIND_MODE: *(enum tsr_unique *)p = (enum tsr_unique)v; break;
    case TSR_KIND_LONG:
    case TSR_KIND_STORE: *(long long *)p = v; break;
    default: *(int *)p = (int)v; break;
    }
}

static void set_text(tsr_options *o, const tsr_option *op, const char *s)
{
    snprintf(member(o, op), (size_t)op->max + 1, "%s", s);
}

const tsr_option *tsr_option_find(const char *name)
{
    for (int i = 0; i < TSR_NOPTIONS; i++)
        if (strcmp(tsr_option_list[i].name, name) == 0)
            return &tsr_option_list[i];
    return NULL;
}

void tsr_options_init(tsr_options *opt)
{
    memset(opt, 0, sizeof *opt); /* text options: "", automatic */
    for (int i = 0; i < TSR_NOPTIONS; i++) {
        const tsr_option *op = &tsr_option_list[i];
        if (op->kind != TSR_KIND_ORDER && op->kind != TSR_KIND_PIECE)
            set_number(opt, op, op->def);
    }
}

/* ---- what an option accepts --------------------------------------------- */

/* Drops the backquotes that mark JSON literals. */
static void unquote(char *s)
{
    char *to = s;
    for (; *s; s++)
        if (*s != '`')
            *to++ = *s;
    *to = '\0';
}

const char *tsr_option_accepts(const tsr_option *op, bool markdown, char *buf, size_t size)
{
    char n[96];
    if (op->max == LLONG_MAX)
        snprintf(n, sizeof n, "an integer >= %lld", op->min);
    else
        snprintf(n, sizeof n, "an integer from %lld to %lld", op->min, op->max);
    switch (op->kind) {
    case TSR_KIND_INT:
    case TSR_KIND_LONG: snprintf(buf, size, "%s", n); break;
    case TSR_KIND_SWITCH: snprintf(buf, size, "`true` or `false`"); break;
    case TSR_KIND_MODE: {
        size_t len = (size_t)snprintf(buf, size, "one of ");
        for (int u = 0; tsr_unique_names[u] != NULL && len < size; u++)
            len += (size_t)snprintf(buf + len, size - len, "%s`\"%s\"`", u ? ", " : "",
                                    tsr_unique_names[u]);
        break;
    }
    case TSR_KIND_ORDER:
        snprintf(buf, size, "a string of at most %lld bytes of `%s`", op->max, ORDER_SET);
        break;
    case TSR_KIND_VOLUME: snprintf(buf, size, "`false`, `\"once\"` or %s", n); break;
    case TSR_KIND_PARITY: snprintf(buf, size, "`true`, `false` or %s", n); break;
    case TSR_KIND_PIECE: snprintf(buf, size, "`true`, `false` or a piece name"); break;
    case TSR_KIND_STORE: snprintf(buf, size, "`\"all\"`, `\"none\"` or %s", n); break;
    }
    if (!markdown)
        unquote(buf);
    return buf;
}

/* "expected <what op accepts>, got <shown>": TSR_EINVAL. */
static int expected(const tsr_option *op, const char *shown, char *why, size_t size)
{
    char what[256];
    snprintf(why, size, "expected %s, got %s", tsr_option_accepts(op, false, what, sizeof what),
             shown);
    return TSR_EINVAL;
}

/* ---- the kinds ------------------------------------------------------------
 * A reader stores a JSON value in the member or says what is wrong; a
 * value function gives the member as JSON, null for TSR_AUTO (a number
 * below min is TSR_AUTO). */

typedef int read_fn(tsr_options *o, const tsr_option *op, const json_t *v,
                    const tsr_puzzle *pz, const char *shown, char *why, size_t size);
typedef json_t *value_fn(const tsr_options *o, const tsr_option *op);

static bool integer_in(const json_t *v, const tsr_option *op, long long *n)
{
    if (!json_is_integer(v) || json_integer_value(v) < op->min ||
        json_integer_value(v) > op->max)
        return false;
    *n = json_integer_value(v);
    return true;
}

static bool is_string(const json_t *v, const char *s)
{
    return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

/* INT, LONG: an integer from min to max. */
static int read_integer(tsr_options *o, const tsr_option *op, const json_t *v,
                        const tsr_puzzle *pz, const char *shown, char *why, size_t size)
{
    long long n;
    if (!integer_in(v, op, &n))
        return expected(op, shown, why, size);
    set_number(o, op, n);
    return 0;
}

static json_t *value_integer(const tsr_options *o, const tsr_option *op)
{
    long long n = get_number(o, op);
    return n < op->min ? json_null() : json_integer(n);
}

/* SWITCH: true or false. */
static int read_switch(tsr_options *o, const tsr_option *op, const json_t *v,
                       const tsr_puzzle *pz, const char *shown, char *why, size_t size)
{
    if (!json_is_boolean(v))
        return expected(op, shown, why, size);
    set_number(o, op, json_is_true(v));
    return 0;
}

static json_t *value_switch(const tsr_options *o, const tsr_option *op)
{
    long long n = get_number(o, op);
    return n < 0 ? json_null() : json_boolean(n);
}

/* MODE: a counting mode's name. */
static int read_mode(tsr_options *o, const tsr_option *op, const json_t *v,
                     const tsr_puzzle *pz, const char *shown, char *why, size_t size)
{
    int u = json_is_string(v) ? tsr_unique_parse(json_string_value(v)) : -1;
    if (u < 0)
        return expected(op, shown, why, size);
    set_number(o, op, u);
    return 0;
}

static json_t *value_mode(const tsr_options *o, const tsr_option *op)
{
    long long u = get_number(o, op);
    return u >= op->min && u <= op->max ? json_string(tsr_unique_names[u]) : json_null();
}

/* ORDER: a schedule of ORDER_CHARS, whose grammar the engine checks. */
static int read_order(tsr_options *o, const tsr_option *op, const json_t *v,
                      const tsr_puzzle *pz, const char *shown, char *why, size_t size)
{
    if (!json_is_string(v))
        return expected(op, shown, why, size);
    const char *s = json_string_value(v);
    size_t len = strlen(s), ok = strspn(s, ORDER_CHARS);
    if (len > (size_t)op->max) {
        snprintf(why, size, "longer than %lld bytes", op->max);
        return TSR_EINVAL;
    }
    if (ok < len) {
        snprintf(why, size, "invalid character at offset %zu; expected %s", ok, ORDER_SET);
        return TSR_EINVAL;
    }
    set_text(o, op, s);
    return 0;
}

/* ORDER and PIECE: "" is TSR_AUTO. */
static json_t *value_text(const tsr_options *o, const tsr_option *op)
{
    const char *s = member_of(o, op);
    if (s[0] == '\0')
        return json_null();
    if (op->kind == TSR_KIND_PIECE && strcmp(s, TSR_REDUNDANCY_OFF) == 0)
        return json_false();
    return json_string(s);
}

/* VOLUME: false (off), "once", or N. */
static int read_volume(tsr_options *o, const tsr_option *op, const json_t *v,
                       const tsr_puzzle *pz, const char *shown, char *why, size_t size)
{
    long long n;
    if (json_is_false(v))
        n = 0;
    else if (is_string(v, "once"))
        n = TSR_VOLUME_ONCE;
    else if (!integer_in(v, op, &n))
        return expected(op, shown, why, size);
    set_number(o, op, n);
    return 0;
}

static json_t *value_volume(const tsr_options *o, const tsr_option *op)
{
    long long n = get_number(o, op);
    if (n == TSR_VOLUME_ONCE)
        return json_string("once");
    return n < 0 ? json_null() : n == 0 ? json_false() : json_integer(n);
}

/* PARITY: false (off), true (at every level: 1), or N. */
static int read_parity(tsr_options *o, const tsr_option *op, const json_t *v,
                       const tsr_puzzle *pz, const char *shown, char *why, size_t size)
{
    long long n;
    if (json_is_boolean(v))
        n = json_is_true(v);
    else if (!integer_in(v, op, &n))
        return expected(op, shown, why, size);
    set_number(o, op, n);
    return 0;
}

static json_t *value_parity(const tsr_options *o, const tsr_option *op)
{
    long long n = get_number(o, op);
    return n < 0 ? json_null() : n == 0 ? json_false() : json_integer(n);
}

/* PIECE: false (off), true (automatic), or the name of a piece of pz. */
static int read_piece(tsr_options *o, const tsr_option *op, const json_t *v,
                      const tsr_puzzle *pz, const char *shown, char *why, size_t size)
{
    if (json_is_boolean(v)) {
        set_text(o, op, json_is_true(v) ? "" : TSR_REDUNDANCY_OFF);
        return 0;
    }
    if (!json_is_string(v))
        return expected(op, shown, why, size);
    const char *name = json_string_value(v);
    if (pz == NULL) { /* no puzzle to check it against: the reader of the job will */
        if (strlen(name) > (size_t)op->max) {
            snprintf(why, size, "a piece name is at most %lld bytes", op->max);
            return TSR_EINVAL;
        }
        set_text(o, op, name);
        return 0;
    }
    for (int i = 0; i < pz->npieces; i++)
        if (strcmp(pz->pieces[i].name, name) == 0) {
            set_text(o, op, name); /* a piece name fits: TSR_MAX_NAME */
            return 0;
        }
    snprintf(why, size, "no piece is named \"%.*s\"", (int)op->max, name);
    return TSR_EINVAL;
}

/* STORE: "all", "none" (counted only), or the first N. */
static int read_store(tsr_options *o, const tsr_option *op, const json_t *v,
                      const tsr_puzzle *pz, const char *shown, char *why, size_t size)
{
    long long n;
    if (is_string(v, "all"))
        n = TSR_STORE_ALL;
    else if (is_string(v, "none"))
        n = 0;
    else if (!integer_in(v, op, &n))
        return expected(op, shown, why, size);
    set_number(o, op, n);
    return 0;
}

static json_t *value_store(const tsr_options *o, const tsr_option *op)
{
    long long n = get_number(o, op);
    return n < 0 ? json_string("all") : n == 0 ? json_string("none") : json_integer(n);
}

/* What command-line text spells (besides a string). */
#define TEXT_NUMBER 1u /* decimal text is an integer */
#define TEXT_OFF 2u    /* "off" and "false" are false */
#define TEXT_ON 4u     /* "on" and "true" are true */

static const struct kind {
    const char *name;    /* in GET /api/v1/options */
    read_fn *read;
    value_fn *value;
    const char *bare;    /* the JSON --name alone stands for; NULL: it needs a value */
    unsigned text;       /* TEXT_* */
    bool integer;        /* takes an integer from min to max */
    const char *choices; /* its named values for the dashboard, as JSON */
} kinds[] = {
    [TSR_KIND_INT] = {"integer", read_integer, value_integer, NULL, TEXT_NUMBER, true, NULL},
    [TSR_KIND_LONG] = {"integer", read_integer, value_integer, NULL, TEXT_NUMBER, true, NULL},
    [TSR_KIND_SWITCH] = {"switch", read_switch, value_switch, "true", TEXT_OFF, false,
                         "[{\"value\": true, \"text\": \"on\"},"
                         " {\"value\": false, \"text\": \"off\"}]"},
    [TSR_KIND_MODE] = {"mode", read_mode, value_mode, NULL, 0, false, NULL /* the modes */},
    [TSR_KIND_ORDER] = {"order", read_order, value_text, NULL, 0, false, NULL},
    [TSR_KIND_VOLUME] = {"volume", read_volume, value_volume, "\"once\"", TEXT_NUMBER | TEXT_OFF,
                         true,
                         "[{\"value\": false, \"text\": \"off\"},"
                         " {\"value\": \"once\", \"text\": \"before the search\"}]"},
    [TSR_KIND_PARITY] = {"parity", read_parity, value_parity, "true",
                         TEXT_NUMBER | TEXT_OFF | TEXT_ON, true,
                         "[{\"value\": false, \"text\": \"off\"},"
                         " {\"value\": true, \"text\": \"at every level\"}]"},
    [TSR_KIND_PIECE] = {"piece", read_piece, value_text, "true", TEXT_OFF, false,
                        "[{\"value\": false, \"text\": \"off\"}]"},
    [TSR_KIND_STORE] = {"store", read_store, value_store, NULL, TEXT_NUMBER, true,
                        "[{\"value\": \"all\", \"text\": \"every solution kept\"},"
                        " {\"value\": \"none\", \"text\": \"counted only, none kept\"}]"},
};

int tsr_option_read_json(tsr_options *opt, const tsr_option *op, const json_t *v,
                         const char *shown, const tsr_puzzle *pz, char *why, size_t size)
{
    return kinds[op->kind].read(opt, op, v, pz, shown, why, size);
}

/* ---- the command line ----------------------------------------------------- */

const char *tsr_option_flag_text(const tsr_option *op, char *buf, size_t size)
{
    if (tsr_option_has_no(op))
        snprintf(buf, size, "--%s%s, --no-%s", op->name, op->cli, op->name);
    else
        snprintf(buf, size, "--%s%s", op->name, op->cli);
    return buf;
}

bool tsr_option_has_no(const tsr_option *op) { return (kinds[op->kind].text & TEXT_OFF) != 0; }

/* The JSON value command-line text spells for a kind; NULL text: the
 * value --name alone stands for (NULL when there is none).  Any bytes make
 * a string, as any bytes may be an argument. */
static json_t *text_value(const struct kind *k, const char *text)
{
    if (text == NULL)
        return k->bare ? json_loads(k->bare, JSON_DECODE_ANY, NULL) : NULL;
    if ((k->text & TEXT_OFF) && (strcmp(text, "off") == 0 || strcmp(text, "false") == 0))
        return json_false();
    if ((k->text & TEXT_ON) && (strcmp(text, "on") == 0 || strcmp(text, "true") == 0))
        return json_true();
    if (k->text & TEXT_NUMBER) {
        char *end;
        errno = 0;
        long long n = strtoll(text, &end, 10);
        if (errno == 0 && end != text && *end == '\0')
            return json_integer(n);
    }
    return json_string_nocheck(text);
}

int tsr_option_parse_text(tsr_options *opt, const tsr_option *op, const char *text,
                          const tsr_puzzle *pz, tsr_err *err)
{
    const struct kind *k = &kinds[op->kind];
    if (text == NULL && k->bare == NULL)
        return tsr_err_set(err, TSR_EINVAL, "--%s: needs a value", op->name);
    json_t *v = text_value(k, text);
    if (v == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "--%s: out of memory", op->name);
    char shown[96], why[TSR_ERR_MAX - 64];
    snprintf(shown, sizeof shown, "'%.64s%s'", text ? text : "",
             text && strlen(text) > 64 ? "..." : "");
    int rc = k->read(opt, op, v, pz, shown, why, sizeof why);
    json_decref(v);
    return rc ? tsr_err_set(err, rc, "--%s: %s", op->name, why) : 0;
}

/* ---- writing ------------------------------------------------------------------ */

const char *tsr_option_value_text(const tsr_option *op, const tsr_options *opt, char *buf,
                                  size_t size)
{
    json_t *v = kinds[op->kind].value(opt, op);
    char *text = json_is_null(v) ? NULL : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(buf, size, "%s", text ? text : "automatic");
    free(text);
    json_decref(v);
    return buf;
}

char *tsr_options_write_json(const tsr_options *opt)
{
    tsr_options def;
    tsr_options_init(&def);
    json_t *j = json_object();
    bool ok = j != NULL;
    for (int i = 0; ok && i < TSR_NOPTIONS; i++) {
        const tsr_option *op = &tsr_option_list[i];
        json_t *v = kinds[op->kind].value(opt, op), *d = kinds[op->kind].value(&def, op);
        ok = v != NULL && d != NULL;
        /* automatic values are left out, and defaults unless always written */
        if (ok && !json_is_null(v) && ((op->flags & TSR_OPT_ALWAYS) || !json_equal(v, d)))
            ok = json_object_set(j, op->name, v) == 0;
        json_decref(v);
        json_decref(d);
    }
    char *text = ok ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    return text;
}

/* ---- the list for GET /api/v1/options ----------------------------------------- */

/* The counting modes as [{"value": NAME, "text": what it identifies}]. */
static json_t *mode_choices(void)
{
    json_t *a = json_array();
    for (int u = 0; a != NULL && tsr_unique_names[u] != NULL; u++)
        if (json_array_append_new(a, json_pack("{s:s,s:s}", "value", tsr_unique_names[u], "text",
                                               tsr_unique_help[u])) != 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

static json_t *describe(const tsr_option *op, const tsr_options *def)
{
    const struct kind *k = &kinds[op->kind];
    char accepts[256], flag[64];
    json_t *o = json_pack("{s:s,s:s,s:s,s:b,s:o,s:s,s:s,s:s}", "name", op->name, "kind", k->name,
                          "group", op->flags & TSR_OPT_ENGINE ? "engine" : "job", "daemon_only",
                          (op->flags & TSR_OPT_DAEMON) != 0, "default", k->value(def, op),
                          "accepts", tsr_option_accepts(op, false, accepts, sizeof accepts),
                          "cli", tsr_option_flag_text(op, flag, sizeof flag), "help", op->help);
    json_t *choices = op->kind == TSR_KIND_MODE ? mode_choices()
                      : k->choices                ? json_loads(k->choices, 0, NULL)
                                                  : NULL;
    json_t *extra = NULL;
    if (k->integer)
        extra = json_pack("{s:{s:I,s:I}}", "integer", "min", (json_int_t)op->min, "max",
                          (json_int_t)op->max);
    else if (op->kind == TSR_KIND_ORDER)
        extra = json_pack("{s:{s:I,s:s}}", "string", "max_bytes", (json_int_t)op->max, "chars",
                          ORDER_CHARS);
    else if (op->kind == TSR_KIND_PIECE)
        extra = json_pack("{s:{s:I,s:b}}", "string", "max_bytes", (json_int_t)op->max, "piece",
                          1);
    bool ok = o != NULL && (choices == NULL || json_object_set(o, "choices", choices) == 0) &&
              (extra == NULL || json_object_update(o, extra) == 0);
    json_decref(choices);
    json_decref(extra);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *tsr_options_describe_json(void)
{
    tsr_options def;
    tsr_options_init(&def);
    json_t *list = json_array(), *modes = json_array();
    bool ok = list != NULL && modes != NULL;
    for (int i = 0; ok && i < TSR_NOPTIONS; i++)
        ok = json_array_append_new(list, describe(&tsr_option_list[i], &def)) == 0;
    for (int u = 0; ok && tsr_unique_names[u] != NULL; u++)
        ok = json_array_append_new(modes, json_pack("{s:s,s:s}", "name", tsr_unique_names[u],
                                                    "text", tsr_unique_help[u])) == 0;
    json_t *doc = ok ? json_pack("{s:O,s:O}", "options", list, "counting_modes", modes) : NULL;
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    json_decref(list);
    json_decref(modes);
    return text;
}
