/*
 * chunk.c - the codec of solution classes (no SQLite in it, so that it can
 * be tested and fuzzed on its own).  A class record is unsigned LEB128
 * varints: n, count, the first image id, then each next id minus the one
 * before (ids strictly increase, so the steps are >= 1 and mostly one
 * byte).  What a checkpoint commits as found (sto_found) is records back
 * to back; a chunk is up to STO_CHUNK_CLASSES of them, with a CRC-32 of
 * its job, first solution number and bytes (I5).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/base.h"
#include "store/store_impl.h"
#include "tessera/job.h"

/* ---- classes: records, batches, chunks ------------------------------------------
 * A class record is unsigned LEB128 varints: n, count, the first image id,
 * then each next id minus the one before (ids are strictly increasing, so
 * the steps are >= 1 and mostly one byte).  A batch is records back to
 * back; a chunk is up to STO_CHUNK_CLASSES records of one batch. */

void sto_put_varint(unsigned char *p, size_t *pos, uint64_t v)
{
    while (v >= 0x80) {
        p[(*pos)++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[(*pos)++] = (unsigned char)v;
}

/* A varint of at most 35 bits at p[*pos..len); false when cut short or too
 * long (every value stored fits in an int). */
bool sto_get_varint(const unsigned char *p, size_t len, size_t *pos, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
        if (*pos >= len)
            return false;
        unsigned char b = p[(*pos)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0)
            return true;
    }
    return false;
}

int sto_found_add(sto_found *b, const int *images, int n, int count, int keep)
{
    if (n < 0 || n > STO_MAX_TASK_IMAGES || count < 1 || keep < 0 || keep > count ||
        (n > 0 && images == NULL))
        return TSR_EINVAL;
    for (int i = 0; i < n; i++)
        if (images[i] < 0 || (i > 0 && images[i] <= images[i - 1]))
            return TSR_EINVAL;
    b->found += count;
    if (keep == 0)
        return 0;
    /* room for the longest record (10 bytes a varint), written in place */
    base_buf *r = &b->records;
    size_t longest = 10 * ((size_t)n + 2);
    if (base_grow((void **)&r->data, &r->cap, r->len + longest - 1, 1, 4096, 0) != 0) {
        b->found -= count;
        return TSR_ENOMEM;
    }
    unsigned char *p = (unsigned char *)r->data;
    sto_put_varint(p, &r->len, (uint64_t)n);
    sto_put_varint(p, &r->len, (uint64_t)keep);
    for (int i = 0; i < n; i++)
        sto_put_varint(p, &r->len, (uint64_t)(images[i] - (i > 0 ? images[i - 1] : 0)));
    b->classes++;
    b->stored += keep;
    return 0;
}

int sto_found_append(sto_found *b, const sto_found *more)
{
    if (base_buf_add(&b->records, more->records.data, more->records.len) != 0)
        return TSR_ENOMEM;
    b->classes += more->classes;
    b->stored += more->stored;
    b->found += more->found;
    return 0;
}

void sto_found_free(sto_found *b)
{
    if (b != NULL) {
        base_buf_free(&b->records);
        *b = (sto_found){0};
    }
}

/* Read the record at data[*pos..len): its size and count, and its ids into
 * ids (when not NULL, room for STO_MAX_TASK_IMAGES).  False when it is not
 * a well-formed record. */
bool sto_record_read(const unsigned char *data, size_t len, size_t *pos, int *n, int *count,
                        int *ids)
{
    uint64_t vn, vc, v, id = 0;
    if (!sto_get_varint(data, len, pos, &vn) || !sto_get_varint(data, len, pos, &vc) ||
        vn > STO_MAX_TASK_IMAGES || vc < 1 || vc > INT_MAX)
        return false;
    for (uint64_t i = 0; i < vn; i++) {
        if (!sto_get_varint(data, len, pos, &v) || (i > 0 && v == 0) || (id += v) > INT_MAX)
            return false;
        if (ids != NULL)
            ids[i] = (int)id;
    }
    *n = (int)vn;
    *count = (int)vc;
    return true;
}

/* CRC-32 (IEEE 802.3, the zlib one), continuing from crc, eight bytes a
 * step ("slicing by 8": table k maps a byte to its CRC followed by k zero
 * bytes).  A flood commits 300 MB of classes, and the byte-at-a-time loop
 * was 3.5% of the daemon's time there. */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++)
            crc_table[t][i] = crc_table[0][crc_table[t - 1][i] & 0xff] ^ (crc_table[t - 1][i] >> 8);
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t len)
{
    pthread_once(&crc_once, crc_init);
    crc = ~crc;
    for (; len >= 8; p += 8, len -= 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                             (uint32_t)p[3] << 24);
        crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
              crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^
              crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
    }
    while (len-- > 0)
        crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* A chunk's check value: covers which job and where, not only the bytes,
 * so a chunk copied into another place does not pass either. */
uint32_t sto_chunk_crc(int64_t job, int64_t first, const unsigned char *data, size_t len)
{
    unsigned char head[16];
    for (int i = 0; i < 8; i++) {
        head[i] = (unsigned char)((uint64_t)job >> (8 * i));
        head[8 + i] = (unsigned char)((uint64_t)first >> (8 * i));
    }
    return crc32_update(crc32_update(0, head, sizeof head), data, len);
}

