/*
 * fuzz_chunk.c - libFuzzer harness for the store's chunk codec
 * (src/store/chunk.c): what a chunk read back from a damaged file, or
 * written over by another program, may hold.
 *
 * The input is a chunk's bytes.  Every record the reader accepts must be a
 * real class (ids strictly increasing, a count >= 1, no read past the end);
 * the accepted records, written again by sto_found_add and read back, must
 * come back the same; and the check value over any bytes is computed
 * without reading past them.  The reader may stop at any byte: that is a
 * malformed chunk, which the store reports as damage.
 *
 * Build and run with tests/fuzz/run.sh (target "chunk").
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ids[STO_MAX_TASK_IMAGES], again[STO_MAX_TASK_IMAGES];
    (void)sto_chunk_crc((int64_t)size, 1, data, size);
    sto_found f = {0};
    size_t pos = 0;
    int n, count;
    int64_t classes = 0, solutions = 0;
    while (pos < size && sto_record_read(data, size, &pos, &n, &count, ids)) {
        if (pos > size || count < 1 || n < 0 || n > STO_MAX_TASK_IMAGES)
            abort();
        for (int i = 1; i < n; i++)
            if (ids[i] <= ids[i - 1])
                abort();
        if (sto_found_add(&f, ids, n, count, count) != 0)
            abort(); /* a record the reader accepts is a class the writer takes */
        classes++;
        solutions += count;
    }
    if (f.classes != classes || f.stored != solutions)
        abort();
    /* the writer's bytes read back as the same classes */
    size_t at = 0, back = 0;
    pos = 0;
    while (pos < size && back < (size_t)classes) {
        int n1, c1, n2, c2;
        if (!sto_record_read(data, size, &pos, &n1, &c1, ids) ||
            !sto_record_read((const unsigned char *)f.records.data, f.records.len, &at, &n2,
                             &c2, again) ||
            n1 != n2 || c1 != c2 || memcmp(ids, again, (size_t)n1 * sizeof *ids) != 0)
            abort();
        back++;
    }
    if (at != f.records.len)
        abort();
    sto_found_free(&f);
    return 0;
}
