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

/* Mirrors the documented rule of read.c, independently of its code. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    int rc = tsr_puzzle_read((const char *)data, size, "fuzz.txt", &pz, &opt, &err);
    fuzz_check_read("tsr_puzzle_read", rc, pz, &err);

    if (!looks_json(data, size)) {
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
        fuzz_downstream(pz, &opt);
        tsr_puzzle_free(pz);
    }
    return 0;
}
