/*
 * fuzz_polycube.c - libFuzzer harness for the polycube definition reader
 * (tsr_puzzle_read_polycube, src/puzzle/polycube_read.c), reached through
 * the format detection of tsr_puzzle_read (src/puzzle/read.c), and
 * everything downstream of a successful parse (see fuzz_common.h).
 *
 * Every input goes through tsr_puzzle_read, which sends it to the polycube
 * reader unless its first non-blank, non-comment character is '{'.  For
 * those it also calls tsr_puzzle_read_polycube directly and checks that the
 * two agree, so the detection is checked against the reader it dispatches to.
 *
 * A polycube document carries no options, but the command line can give
 * any of them with any file, so the engine runs under options chosen from a
 * hash of the input among the values tessera's flags accept (--unique,
 * --goal, --fila, --order, --nof, --volume, --vtrigger, --parity, --pfilter,
 * --fit, --redundancy, --sample): each input always gets the same ones.
 *
 * Build and run with tests/fuzz/run.sh.
 */
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_init();
    return 0;
}

/* Mirrors the documented rules of read.c, independently of its code: a
 * BurrTools file is gzip data or XML (its own harness, fuzz_xmpuzzle.c). */
static bool looks_xmpuzzle(const uint8_t *s, size_t n)
{
    if (n >= 2 && s[0] == 0x1f && s[1] == 0x8b)
        return true;
    size_t i = 0;
    while (i < n && strchr(" \t\r\n", s[i]) && s[i] != '\0')
        i++;
    return n - i >= 5 && memcmp(s + i, "<?xml", 5) == 0;
}

static bool looks_json(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '#') {
            while (i < n && s[i] != '\n')
                i++;
        } else if (!strchr(" \t\r\n\f\v", s[i]) || s[i] == '\0') {
            return s[i] == '{';
        }
    }
    return false;
}

static uint64_t fnv1a(const uint8_t *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* Takes `bits` bits off *h. */
static unsigned take(uint64_t *h, int bits)
{
    unsigned v = (unsigned)(*h & ((1u << bits) - 1));
    *h >>= bits;
    return v;
}

static void choose_options(const uint8_t *data, size_t size, const tsr_puzzle *pz,
                           struct fuzz_engine_cfg *cfg)
{
    static const char *const orders[] = {
        "", "s", "f", "e", "x", "y", "z", "r", "a", "a@90", "a@160=35:s=20", "e=11:f=3",
        "s:f=3", "s:e=4:f=2", "f=2:s", "x=1:y", "z=3:e=1:s",
    };
    uint64_t h = fnv1a(data, size);
    cfg->seed = h;
    h = h * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull; /* decorrelate from the seed */
    tsr_options *o = &cfg->opt;
    tsr_options_init(o);
    int P = (int)fuzz_mobile_copies(pz);
    if (take(&h, 1) == 0)
        return; /* half the inputs keep every default */
    o->unique = (enum tsr_unique)(take(&h, 2) % 3);
    o->goal = take(&h, 2) == 0 ? (int)(take(&h, 3) % (unsigned)(P + 2)) : 0;
    unsigned f = take(&h, 3);
    o->fila = f == 0 ? -1 : f == 1 ? 0 : (int)(take(&h, 4) % (unsigned)(P + 3));
    snprintf(o->order, sizeof o->order, "%s",
             orders[take(&h, 5) % (sizeof orders / sizeof orders[0])]);
    o->nof = (int)take(&h, 2) % 3 - 1;
    unsigned v = take(&h, 2);
    o->volume = v == 0 ? -1 : v == 1 ? -2 : v == 2 ? 0 : 1 + (int)take(&h, 3);
    o->vtrigger = take(&h, 1) ? (int)take(&h, 3) : 0;
    unsigned p = take(&h, 2);
    o->parity = p == 0 ? -1 : p == 1 ? 0 : (int)take(&h, 3) + 1;
    o->pfilter = take(&h, 1) ? (int)take(&h, 3) : 0;
    o->fit = (int)take(&h, 2) % 3 - 1;
    /* The root fit filter runs to a fixed point at preparation, where the
     * progress callback cannot stop it; it costs ~2 s under ASan for a 60-cell
     * pentomino board (see README.md), so only small puzzles get it. */
    if (o->fit > 0 && tsr_puzzle_free_volume(pz) > FUZZ_FIT_MAX_FREE)
        o->fit = 0;
    unsigned r = take(&h, 2);
    if (r == 1)
        strcpy(o->redundancy, "off");
    else if (r == 2 && pz->npieces > 0)
        snprintf(o->redundancy, sizeof o->redundancy, "%s",
                 pz->pieces[take(&h, 8) % (unsigned)pz->npieces].name);
    if (take(&h, 2) == 0) {
        cfg->sample_trials = 1 + (long)take(&h, 3);
        cfg->sample_r = 1 + (int)take(&h, 4);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    int rc = tsr_puzzle_read((const char *)data, size, "fuzz.txt", &pz, &opt, &err);
    fuzz_check_read("tsr_puzzle_read", rc, pz, &err);

    if (!looks_json(data, size) && !looks_xmpuzzle(data, size)) {
        /* Dispatched to the polycube reader: a direct call must agree,
         * message included, and the options must be the defaults. */
        tsr_puzzle *direct = NULL;
        tsr_err err2 = {{0}};
        int rc2 = tsr_puzzle_read_polycube((const char *)data, size, "fuzz.txt", &direct, &err2);
        fuzz_check_read("tsr_puzzle_read_polycube", rc2, direct, &err2);
        if (rc2 != rc || (rc != 0 && strcmp(err.msg, err2.msg) != 0))
            fuzz_die("tsr_puzzle_read (%d: %s) and tsr_puzzle_read_polycube (%d: %s) disagree",
                     rc, rc ? err.msg : "", rc2, rc2 ? err2.msg : "");
        if (rc == 0 && !fuzz_same_puzzle(pz, direct))
            fuzz_die("tsr_puzzle_read and tsr_puzzle_read_polycube built different puzzles");
        tsr_puzzle_free(direct);
        tsr_options def;
        tsr_options_init(&def);
        if (memcmp(&def, &opt, sizeof def) != 0)
            fuzz_die("tsr_puzzle_read left non-default options for a polycube document");
    }
    if (rc == 0) {
        struct fuzz_engine_cfg cfg = {.opt = opt};
        choose_options(data, size, pz, &cfg);
        fuzz_downstream(pz, &cfg);
        tsr_puzzle_free(pz);
    }
    return 0;
}
