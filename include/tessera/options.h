/*
 * tessera/options.h - the job options: what a job asks of the engine and
 * of the daemon besides the puzzle, defined once.
 *
 * TSR_OPTIONS below is the only list of the options.  Everything else is
 * made from it: the members of tsr_options and their defaults, the JSON
 * reader with its range checks and the writer (src/puzzle/options.c), the
 * command-line flags of `tessera solve`, `estimate` and `submit` with their
 * help (src/cli/options.c), GET /api/v1/options and through it the
 * dashboard's option fields, and the option table of
 * docs/puzzle-format.md (which `tessera help options --markdown` prints
 * and tests/cli/test_cli.sh compares).  To add an option, add a line (and
 * its test); the engine then reads it as opt->NAME.
 *
 * A line is X(name, kind, min, max, default, flags, cli, help):
 *   name     the JSON key, the command-line flag --name and the member of
 *            tsr_options, all one word;
 *   kind     how its value is written (enum tsr_option_kind, below: the
 *            plain kinds INT, LONG, SWITCH and MODE, and the odd kinds with
 *            their own rules);
 *   min, max the integers it takes (for ORDER and PIECE: the most bytes);
 *   default  its value when a job leaves it out; TSR_AUTO: the engine
 *            chooses from the puzzle (docs/engine.md);
 *   flags    TSR_OPT_* below;
 *   cli      what follows --name on the command line: "=N" a value, "[=N]"
 *            an optional value (the kind says what none means), "" none
 *            (a SWITCH then also has --no-name);
 *   help     one sentence for `tessera help`, the docs and the dashboard.
 * The order of the list is the order of the written JSON, which the
 * daemon's stored jobs keep: append new options at the end of their group.
 */
#ifndef TESSERA_OPTIONS_H
#define TESSERA_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "puzzle.h"

/* Named values of the options.  TSR_AUTO: chosen from the puzzle when the
 * solver is prepared (tsr_solver_options then says what was chosen). */
#define TSR_AUTO (-1)
#define TSR_VOLUME_ONCE (-2)         /* volume: filter once, at the root */
#define TSR_STORE_ALL (-1)           /* store: keep every solution */
#define TSR_REDUNDANCY_OFF "off"     /* redundancy: no filter ("" is TSR_AUTO) */
#define TSR_MAX_ORDER 127            /* bytes of a heuristic schedule */

/* Flags.  An option without TSR_OPT_ENGINE says what the job asks:
 * counting, reporting, resources. */
#define TSR_OPT_ENGINE 1u  /* tunes the search, automatic by default */
#define TSR_OPT_DAEMON 2u  /* for the daemon's jobs only, not `tessera solve` */
#define TSR_OPT_ALWAYS 4u  /* written even at its default: part of every job's record */

#define TSR_OPTIONS(X)                                                                             \
    /* name      kind    min   max            default                                              \
       flags, cli,                                                                                 \
       help */                                                                                     \
    X(unique,     MODE,   0,    2,             TSR_UNIQUE_ROTATIONS,                               \
      TSR_OPT_ALWAYS, "=MODE",                                                                     \
      "which solutions count as distinct")                                                         \
    X(limit,      LONG,   0,    LLONG_MAX,     0,                                                  \
      TSR_OPT_ALWAYS, "=N",                                                                        \
      "stop after N solutions; 0: find them all")                                                  \
    X(threads,    INT,    0,    1024,          0,                                                  \
      TSR_OPT_ALWAYS, "=N",                                                                        \
      "worker threads; 0: one per core (on the daemon: as many as its scheduler gives)")           \
    X(priority,   INT,    -100, 100,           0,                                                  \
      TSR_OPT_DAEMON | TSR_OPT_ALWAYS, "=N",                                                       \
      "job priority: a queued job of higher priority runs first")                                  \
    X(fila,       INT,    0,    INT_MAX,       TSR_AUTO,                                           \
      TSR_OPT_ENGINE, "=N",                                                                        \
      "DLX above, FILA when N pieces remain; 0: DLX only")                                         \
    X(order,      ORDER,  0,    TSR_MAX_ORDER, 0,                                                  \
      TSR_OPT_ENGINE, "=SPEC",                                                                     \
      "heuristic schedule, e.g. s or e=11:f=3 or a@160=35:s=20: s min-fit, f first cell, e "       \
      "estimate (FILA), x/y/z lowest coordinate, r farthest from the centre, a@DEG by angle")      \
    X(nof,        SWITCH, 0,    1,             TSR_AUTO,                                           \
      TSR_OPT_ENGINE, "",                                                                          \
      "neighbour occupancy filtering in FILA")                                                     \
    X(volume,     VOLUME, 0,    INT_MAX,       TSR_AUTO,                                           \
      TSR_OPT_ENGINE, "[=N|once|off]",                                                             \
      "volume filter: off, once before the search (\"once\", or the flag without a value), "       \
      "or after each placement while N or more pieces remain")                                     \
    X(parity,     PARITY, 0,    INT_MAX,       TSR_AUTO,                                           \
      TSR_OPT_ENGINE, "[=N|on|off]",                                                               \
      "parity backtrack trigger: off, at every level (true, on, or the flag without a value), "    \
      "or while N or more pieces remain")                                                          \
    X(vtrigger,   INT,    0,    INT_MAX,       0,                                                  \
      TSR_OPT_ENGINE, "=N",                                                                        \
      "volume backtrack trigger while N or more pieces remain; 0: off")                            \
    X(pfilter,    INT,    0,    INT_MAX,       0,                                                  \
      TSR_OPT_ENGINE, "=N",                                                                        \
      "parity image filter while N or more pieces remain; 0: off")                                 \
    X(fit,        SWITCH, 0,    1,             TSR_AUTO,                                           \
      TSR_OPT_ENGINE, "",                                                                          \
      "fit filter before the search, repeated until nothing changes")                              \
    X(goal,       INT,    0,    INT_MAX,       0,                                                  \
      0, "=N",                                                                                     \
      "report partial assemblies when N pieces remain; 0: complete solutions")                     \
    X(redundancy, PIECE,  0,    TSR_MAX_NAME,  0,                                                  \
      TSR_OPT_ENGINE, "[=PIECE|off]",                                                              \
      "rotational-redundancy filter: off, automatic (true, or the flag without a value), or "      \
      "constrain the named piece, which must be in the puzzle")                                    \
    X(pairs,      SWITCH, 0,    1,             TSR_AUTO,                                           \
      TSR_OPT_ENGINE, "",                                                                          \
      "two-piece table in FILA: drop the nodes whose two pieces left cannot fill the holes")      \
    X(pieces,     PARITY, 0,    INT_MAX,       TSR_AUTO,                                           \
      TSR_OPT_ENGINE, "[=N|on|off]",                                                               \
      "E weighs the pieces too: branch on a piece that fits fewer ways than every hole, and "      \
      "stop where a piece fits nowhere: off, at every E level (true, on, or the flag without a "   \
      "value), or while N or more pieces remain")                                                  \
    X(memo,       INT,    0,    6,             TSR_AUTO,                                           \
      TSR_OPT_ENGINE, "=N",                                                                        \
      "FILA's memo: remember what lies below the nodes with N pieces left and report a node met "  \
      "again from memory (counts, nodes and order unchanged); 0: off")                             \
    X(store,      STORE,  0,    LLONG_MAX,     TSR_STORE_ALL,                                      \
      TSR_OPT_DAEMON, "=all|none|N",                                                               \
      "which solutions are kept for reading: all, none (counted only) or the first N")          \
    X(record,     INT,    0,    8,             0,                                                  \
      TSR_OPT_DAEMON, "=DEPTH",                                                                    \
      "keep the solution count, node count and digest of each subtree at DEPTH pieces placed, "    \
      "for a record that tessera verify checks anywhere; 0: off")

/* How an option's value is written, in JSON and on the command line, and
 * its C type in tsr_options. */
enum tsr_option_kind {
    TSR_KIND_INT,    /* int, an integer from min to max */
    TSR_KIND_LONG,   /* long long, an integer from min to max */
    TSR_KIND_SWITCH, /* int: true 1, false 0, TSR_AUTO; --name, --no-name */
    TSR_KIND_MODE,   /* enum tsr_unique: a counting mode's name (tsr_unique_names) */
    TSR_KIND_ORDER,  /* char[]: a heuristic schedule, "" TSR_AUTO */
    TSR_KIND_VOLUME, /* int: false 0, "once" TSR_VOLUME_ONCE, or N */
    TSR_KIND_PARITY, /* int: false 0, true 1, or N (a level: N or more pieces left) */
    TSR_KIND_PIECE,  /* char[]: false TSR_REDUNDANCY_OFF, true "" (TSR_AUTO), or a piece name */
    TSR_KIND_STORE   /* long long: "all" TSR_STORE_ALL, "none" 0, or N */
};

#define TSR_OPTION_MEMBER_INT(name, max) int name
#define TSR_OPTION_MEMBER_LONG(name, max) long long name
#define TSR_OPTION_MEMBER_SWITCH(name, max) int name
#define TSR_OPTION_MEMBER_MODE(name, max) enum tsr_unique name
#define TSR_OPTION_MEMBER_ORDER(name, max) char name[(max) + 1]
#define TSR_OPTION_MEMBER_VOLUME(name, max) int name
#define TSR_OPTION_MEMBER_PARITY(name, max) int name
#define TSR_OPTION_MEMBER_PIECE(name, max) char name[(max) + 1]
#define TSR_OPTION_MEMBER_STORE(name, max) long long name
#define TSR_OPTION_MEMBER(name, kind, min, max, def, flags, cli, help) \
    TSR_OPTION_MEMBER_##kind(name, max);

/* One member per option, named as the option: opt->fila, opt->order, ... */
typedef struct tsr_options {
    TSR_OPTIONS(TSR_OPTION_MEMBER)
} tsr_options;

/* The options' indices in the list: TSR_OPTION_fila, ...; TSR_NOPTIONS. */
#define TSR_OPTION_INDEX(name, kind, min, max, def, flags, cli, help) TSR_OPTION_##name,
enum { TSR_OPTIONS(TSR_OPTION_INDEX) TSR_NOPTIONS };

/* One line of the list. */
typedef struct tsr_option {
    const char *name;
    enum tsr_option_kind kind;
    size_t offset;       /* of its member in tsr_options */
    long long min, max;
    long long def;
    unsigned flags;
    const char *cli;
    const char *help;
} tsr_option;

/* The list, in its order. */
extern const tsr_option tsr_option_list[TSR_NOPTIONS];

/* The option named `name`, or NULL. */
const tsr_option *tsr_option_find(const char *name);

/* Every option at its default. */
void tsr_options_init(tsr_options *opt);

/* What an option accepts, in the words of the JSON reader's messages
 * ("an integer from 0 to 1024", "false, \"once\" or an integer ..."); with
 * markdown, each JSON literal in backquotes.  Returns buf. */
const char *tsr_option_accepts(const tsr_option *op, bool markdown, char *buf, size_t size);

/* How the command line spells it: "--fila=N", "--volume[=N|once|off],
 * --no-volume", "--nof, --no-nof".  Returns buf. */
const char *tsr_option_flag_text(const tsr_option *op, char *buf, size_t size);

/* Does the command line take --no-NAME for it (its value "off")? */
bool tsr_option_has_no(const tsr_option *op);

/* An option's value in *opt as compact JSON ("automatic" when it is
 * TSR_AUTO).  Returns buf. */
const char *tsr_option_value_text(const tsr_option *op, const tsr_options *opt, char *buf,
                                  size_t size);

/* One option from the command line: `text` as given after --name= (NULL:
 * no value), read as the JSON value it spells (a number, "off" for
 * false, else a string) with the JSON reader's checks.  A redundancy
 * piece is checked against pz unless it is NULL.  On error err says
 * "--name: expected ..., got 'text'". */
int tsr_option_parse_text(tsr_options *opt, const tsr_option *op, const char *text,
                          const tsr_puzzle *pz, tsr_err *err);

/* An options object alone (the "options" of a job), checked against the
 * puzzle (a redundancy piece must exist; with pz NULL, a name is taken
 * unchecked).  *opt is initialised first. */
int tsr_options_read_json(const char *text, size_t len, const char *source,
                          const tsr_puzzle *pz, tsr_options *opt, tsr_err *err);

/* The options as a compact JSON object that tsr_options_read_json reads
 * back to the same values: in the list's order, the TSR_OPT_ALWAYS ones and
 * those not at their default.  malloc'd; NULL when out of memory. */
char *tsr_options_write_json(const tsr_options *opt);

/* The list as the JSON of GET /api/v1/options (docs/api.md): every
 * option's name, kind, group, default, accepted values and help, and the
 * counting modes with what each identifies.  malloc'd; NULL when out of
 * memory. */
char *tsr_options_describe_json(void);

#endif
