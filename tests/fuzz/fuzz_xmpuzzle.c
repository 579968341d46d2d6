/*
 * fuzz_xmpuzzle.c - libFuzzer harness for the BurrTools reader
 * (tsr_puzzle_read_xmpuzzle, src/puzzle/xmpuzzle.c) and everything
 * downstream of a successful read (see fuzz_common.h).
 *
 * Inputs are taken both as they come (plain XML, or gzip data when they
 * start with its magic) and gzip-compressed by the harness, so the XML
 * reader sees mutations of the text and the inflater sees real streams as
 * well as mutated ones.  The first byte picks the problem asked for: the
 * first, a number, or a name.  A read through tsr_puzzle_read of input
 * that looks like a BurrTools file must agree with the direct call.
 *
 * Build and run with tests/fuzz/run.sh (target "xmpuzzle").
 */
#include <zlib.h>

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

static void one(const uint8_t *data, size_t size, const char *problem)
{
    tsr_puzzle *pz = NULL;
    tsr_err err = {{0}};
    int rc = tsr_puzzle_read_xmpuzzle(data, size, "fuzz.xmpuzzle", problem, &pz, &err);
    fuzz_check_read("tsr_puzzle_read_xmpuzzle", rc, pz, &err);
    if (problem == NULL && tsr_is_xmpuzzle(data, size)) {
        tsr_puzzle *via = NULL;
        tsr_err err2 = {{0}};
        int rc2 = tsr_puzzle_read((const char *)data, size, "fuzz.xmpuzzle", &via, NULL, &err2);
        fuzz_check_read("tsr_puzzle_read", rc2, via, &err2);
        if (rc2 != rc || (rc != 0 && strcmp(err.msg, err2.msg) != 0) ||
            (rc == 0 && !fuzz_same_puzzle(pz, via)))
            fuzz_die("tsr_puzzle_read and tsr_puzzle_read_xmpuzzle disagree (%d: %s / %d: %s)", rc,
                     rc ? err.msg : "", rc2, rc2 ? err2.msg : "");
        tsr_puzzle_free(via);
    }
    if (rc == 0) {
        struct fuzz_engine_cfg cfg;
        memset(&cfg, 0, sizeof cfg);
        tsr_options_init(&cfg.opt);
        cfg.seed = size;
        fuzz_downstream(pz, &cfg);
        tsr_puzzle_free(pz);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const problems[] = {NULL, "1", "2", "0", "Problem", "x"};
    const char *problem = size > 0 ? problems[data[0] % 6] : NULL;
    one(data, size, problem);
    /* the same bytes compressed, as BurrTools saves them */
    uLong cap = compressBound((uLong)size) + 32;
    unsigned char *z = malloc(cap);
    z_stream s;
    memset(&s, 0, sizeof s);
    if (z != NULL && deflateInit2(&s, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
        s.next_in = (unsigned char *)data;
        s.avail_in = (uInt)size;
        s.next_out = z;
        s.avail_out = (uInt)cap;
        if (deflate(&s, Z_FINISH) == Z_STREAM_END)
            one(z, cap - s.avail_out, problem);
        deflateEnd(&s);
    }
    free(z);
    return 0;
}
