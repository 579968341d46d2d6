/*
 * claim.c - one process's claim on a store file, and the watch on the
 * file's name (store.h; docs/store.md, "The claim").
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
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

/* ---- the claim on a store file -------------------------------------------------
 * The claim is an exclusive flock(2) on the store file itself, through a
 * descriptor the claim keeps open.  A lock belongs to the file, not to the
 * name it was opened by: a symbolic link, a hard link or a bind mount of a
 * claimed file meets the same lock.  flock locks are independent of the
 * POSIX record locks SQLite takes on the same file, so SQLite's own
 * locking and every reader beside the daemon are left alone.
 *
 * Beside the file, PATH.owner says who holds it (the pid) and which file
 * and write-ahead log it held (device and inode numbers); it is written
 * once the daemon's connections are open (sto_claim_note_wal) and removed
 * when the claim is released cleanly.  A PATH.owner left by a holder that
 * died names the log that holder wrote, and lets the next claim tell a log
 * of this file from one that outlived a file moved away under it. */

/* The pid holding a flock on file (dev, ino), from /proc/locks; 0 when
 * it cannot be told. */
static long flock_holder(dev_t dev, ino_t ino)
{
    FILE *f = fopen("/proc/locks", "r");
    char line[256], kind[16], mode[16];
    long pid = 0, found = 0;
    unsigned maj, mnr;
    unsigned long long node;
    while (f != NULL && found == 0 && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "%*d: %15s %*s %15s %ld %x:%x:%llu", kind, mode, &pid, &maj, &mnr,
                   &node) == 6 &&
            strcmp(kind, "FLOCK") == 0 && strcmp(mode, "WRITE") == 0 && maj == major(dev) &&
            mnr == minor(dev) && node == (unsigned long long)ino)
            found = pid;
    if (f != NULL)
        fclose(f);
    return found;
}

/* PATH.owner's record of the file and log a holder held: 0 when it names
 * both, TSR_EINVAL when there is none or it does not parse. */
static int owner_read(const char *owner, unsigned long long file[2], unsigned long long wal[2])
{
    FILE *f = fopen(owner, "r");
    char line[128];
    int have = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        have |= sscanf(line, "store %llu:%llu", &file[0], &file[1]) == 2;
        have |= (sscanf(line, "wal %llu:%llu", &wal[0], &wal[1]) == 2) << 1;
    }
    if (f != NULL)
        fclose(f);
    return have == 3 ? 0 : TSR_EINVAL;
}

/* Write PATH.owner anew: pid, the claimed file and, when wal is not NULL,
 * its log.  Best effort: it informs, it does not lock. */
static void owner_write(const sto_claim *c, const struct stat *wal)
{
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp", c->owner);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return;
    fprintf(f, "pid %ld\nstore %llu:%llu\n", (long)getpid(), (unsigned long long)c->dev,
            (unsigned long long)c->ino);
    if (wal != NULL)
        fprintf(f, "wal %llu:%llu\n", (unsigned long long)wal->st_dev,
                (unsigned long long)wal->st_ino);
    if (fclose(f) != 0 || rename(tmp, c->owner) != 0)
        unlink(tmp);
}

/* A log beside the file that another file wrote: the last holder's
 * PATH.owner names this log but another store file, so the file was
 * replaced while the log stayed (mv onto the name, then a crash).  SQLite
 * would replay that log onto this file and corrupt it; it is moved aside
 * (and its index removed, which SQLite rebuilds), and c->note says so. */
static void set_aside_foreign_wal(sto_claim *c)
{
    unsigned long long file[2], wal[2];
    char log[PATH_MAX + 8];
    struct stat sb;
    snprintf(log, sizeof log, "%s-wal", c->path);
    if (owner_read(c->owner, file, wal) != 0 || stat(log, &sb) != 0 || sb.st_size == 0)
        return;
    bool same_log = (unsigned long long)sb.st_dev == wal[0] &&
                    (unsigned long long)sb.st_ino == wal[1];
    bool same_file = (unsigned long long)c->dev == file[0] &&
                     (unsigned long long)c->ino == file[1];
    if (!same_log || same_file)
        return; /* this file's own log, or a log that came with it */
    char aside[PATH_MAX + 48], shm[PATH_MAX + 8];
    snprintf(aside, sizeof aside, "%s.foreign-%lld", log, (long long)time(NULL));
    snprintf(shm, sizeof shm, "%s-shm", c->path);
    if (rename(log, aside) == 0) {
        unlink(shm);
        snprintf(c->note, sizeof c->note, "%s belonged to the file that had the name %s before "
                 "(it was replaced while a tesserad held it): not replayed onto this file, "
                 "moved to %s", log, c->path, aside);
    } else {
        snprintf(c->note, sizeof c->note, "%s belonged to another file and could not be moved "
                 "aside (%s)", log, strerror(errno));
    }
}

int sto_claim_take(const char *path, sto_claim **out, tsr_err *err)
{
    *out = NULL;
    char ctx[PATH_MAX + 16];
    snprintf(ctx, sizeof ctx, "open %s", path);
    int r = sto_usable_file(path, ctx, err);
    if (r != 0)
        return r;
    sto_claim *c = calloc(1, sizeof *c);
    if (c == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "store: claim %s: out of memory", path);
    if (snprintf(c->path, sizeof c->path, "%s", path) >= (int)sizeof c->path ||
        snprintf(c->owner, sizeof c->owner, "%s.owner", path) >= (int)sizeof c->owner) {
        free(c);
        return tsr_err_set(err, TSR_ETOOBIG, "store: claim %s: path too long", path);
    }
    c->fd = open(path, O_RDWR | O_CLOEXEC);
    if (c->fd < 0 && errno == ENOENT) {
        /* a new store: SQLite creates it (two daemons doing so at once
         * meet in SQLite's own locks), then it is claimed like any other */
        sto_db *s = NULL;
        r = sto_open(path, 0, &s, err);
        sto_close(s);
        if (r != 0) {
            free(c);
            return r;
        }
        c->fd = open(path, O_RDWR | O_CLOEXEC);
    }
    struct stat fs, ps;
    if (c->fd < 0 || fstat(c->fd, &fs) != 0) {
        r = tsr_err_set(err, TSR_EIO, "store: claim %s: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(fs.st_mode)) {
        r = tsr_err_set(err, TSR_EIO, "store: claim %s: not a regular file", path);
        goto fail;
    }
    if (flock(c->fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        if (e != EWOULDBLOCK) {
            r = tsr_err_set(err, TSR_EIO, "store: claim %s: cannot lock it: %s", path,
                            strerror(e));
            goto fail;
        }
        long pid = flock_holder(fs.st_dev, fs.st_ino);
        char who[32] = "unknown";
        if (pid > 0)
            snprintf(who, sizeof who, "%ld", pid);
        r = tsr_err_set(err, TSR_EBUSY, "store: %s is in use by another tesserad (pid %s), "
                        "perhaps under another name (a link to the same file): stop it "
                        "first, or give this one another --db", path, who);
        goto fail;
    }
    /* the name must still lead to the file locked */
    if (stat(path, &ps) != 0 || ps.st_dev != fs.st_dev || ps.st_ino != fs.st_ino) {
        r = tsr_err_set(err, TSR_EBUSY, "store: claim %s: the file was replaced while it was "
                        "being claimed; try again", path);
        goto fail;
    }
    c->dev = fs.st_dev;
    c->ino = fs.st_ino;
    set_aside_foreign_wal(c);
    owner_write(c, NULL);
    *out = c;
    return 0;
fail:
    if (c->fd >= 0)
        close(c->fd);
    free(c);
    return r;
}

int sto_claim_check(const sto_claim *c, tsr_err *err)
{
    struct stat fs, ps;
    const char *what = NULL;
    if (fstat(c->fd, &fs) == 0 && fs.st_nlink == 0)
        what = "deleted";
    else if (stat(c->path, &ps) != 0)
        what = errno == ENOENT ? "deleted or moved away" : "out of reach";
    else if (ps.st_dev != c->dev || ps.st_ino != c->ino)
        what = "replaced by another file";
    if (what == NULL)
        return 0;
    return tsr_err_set(err, TSR_ESTALE, "store: %s is no longer the file this tesserad holds: "
                       "it was %s; nothing more is written to it", c->path, what);
}

const char *sto_claim_path(const sto_claim *c)
{
    return c->path;
}

const char *sto_claim_note(const sto_claim *c)
{
    return c->note;
}

void sto_claim_note_wal(const sto_claim *c)
{
    char log[PATH_MAX + 8];
    struct stat sb;
    snprintf(log, sizeof log, "%s-wal", c->path);
    if (sto_claim_check(c, NULL) == 0 && stat(log, &sb) == 0)
        owner_write(c, &sb);
}

void sto_claim_release(sto_claim *c)
{
    if (c == NULL)
        return;
    /* the record goes with a clean end; a name that leads elsewhere now
     * is left to its new file */
    if (sto_claim_check(c, NULL) == 0)
        unlink(c->owner);
    close(c->fd); /* drops the lock */
    free(c);
}

