/*
 * fuzz_json.c - libFuzzer harness for the Puzzle JSON reader
 * (tsr_puzzle_read_json, src/puzzle/json_read.c) and everything downstream
 * of a successful parse: the writers, the JSON and polycube round trips and
 * the engine (see fuzz_common.h).  Job options parsed from the document are
 * handed to tsr_solver_new, so the option paths of the engine are fuzzed too,
 * the options reader (tsr_options_read_json, what tesserad reads back from
 * its store) gets the same bytes as a bare options object, and the options
 * of every document that parses must survive the writer and the reader.
 *
 * Build and run with tests/fuzz/run.sh.
 */
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A small puzzle the options reader checks piece names against. */
static tsr_puzzle *options_puzzle;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_init();
    static const char doc[] = "{\"board\": {\"size\": [2, 1]}, \"pieces\": "
                              "[{\"name\": \"D\", \"rows\": [\"##\"]}]}";
    tsr_err err;
    if (tsr_puzzle_read_json(doc, sizeof doc - 1, "init", &options_puzzle, NULL, &err) != 0)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    /* The reader takes (text, len) without a terminating NUL: libFuzzer's
     * buffer is exactly `size` bytes, so ASan catches any read past it. */
    /* the bytes as a bare options object (what tesserad reads from its store) */
    tsr_options alone;
    tsr_options_read_json((const char *)data, size, "fuzz.json", options_puzzle, &alone, &err);
    int rc = tsr_puzzle_read_json((const char *)data, size, "fuzz.json", &pz, &opt, &err);
    fuzz_check_read("tsr_puzzle_read_json", rc, pz, &err);
    if (rc == 0) {
        /* the engine gets the options the document asked for, except that
         * the root fit filter (not interruptible, seconds on mid-sized
         * boards: README.md, "Slow inputs") is kept to small puzzles */
        struct fuzz_engine_cfg cfg = {.opt = opt};
        if (cfg.opt.fit > 0 && tsr_puzzle_free_volume(pz) > FUZZ_FIT_MAX_FREE)
            cfg.opt.fit = 0;
        fuzz_downstream(pz, &cfg);
        /* the options the document gave survive the writer and the reader */
        tsr_options back;
        char *text = tsr_options_write_json(&opt);
        if (text == NULL ||
            tsr_options_read_json(text, strlen(text), "written", pz, &back, &err) != 0 ||
            memcmp(&opt, &back, sizeof opt) != 0)
            __builtin_trap();
        free(text);
        tsr_puzzle_free(pz);
    }
    return 0;
}
