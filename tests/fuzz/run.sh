#!/bin/sh
# tests/fuzz/run.sh - build the libFuzzer harnesses and run them.
#
#   tests/fuzz/run.sh [BUILD_DIR [SECONDS [TARGETS]]]
#
# BUILD_DIR  where the binaries, scratch corpora, logs and crash artifacts go
#            (default /tmp/tessera-fuzz); the repository is never written to.
# SECONDS    how long each harness runs (default 300); 0 only builds and
#            replays the seed corpora once.
# TARGETS    which harnesses, space-separated (default "json polycube chunk").
#
# The harnesses run concurrently (one process each).  Environment:
#   CC            compiler (default clang; needs -fsanitize=fuzzer)
#   FUZZ_CFLAGS   extra compiler flags
#   FUZZ_ARGS     extra libFuzzer flags for every run
#   FUZZ_TIMEOUT  seconds after which one input counts as a hang (default 25)
#
# Exit status: 0 when no harness crashed, leaked, hit a sanitizer report,
# timed out or ran out of memory; 1 otherwise (the artifacts are listed);
# 2 when the build fails.
set -u

script_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd) || exit 2
repo=$(CDPATH='' cd -- "$script_dir/../.." && pwd) || exit 2
build=${1:-/tmp/tessera-fuzz}
seconds=${2:-300}
targets=${3:-json polycube chunk xmpuzzle}
CC=${CC:-clang}
timeout_s=${FUZZ_TIMEOUT:-25}

mkdir -p "$build" || exit 2
build=$(CDPATH='' cd -- "$build" && pwd) || exit 2

# ---- build ------------------------------------------------------------------
jansson_cflags=$(pkg-config --cflags jansson 2>/dev/null) || jansson_cflags=
jansson_libs=$(pkg-config --libs jansson 2>/dev/null) || jansson_libs=-ljansson
# BurrTools files: zlib and expat
jansson_libs="$jansson_libs $(pkg-config --libs zlib expat 2>/dev/null || echo -lz -lexpat)"

cflags="-std=gnu11 -g -O1 -march=x86-64-v2 -fno-omit-frame-pointer \
-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
-Wall -Wextra -Wno-unused-parameter -Wno-unused-function \
-I$repo -I$repo/include -I$repo/src $jansson_cflags ${FUZZ_CFLAGS:-}"

lib_sources="$repo/src/base/base.c $repo/src/base/error.c $repo/src/puzzle/model.c \
$repo/src/puzzle/json_read.c $repo/src/puzzle/polycube_read.c $repo/src/puzzle/read.c \
$repo/src/puzzle/write.c $repo/src/geom/geom.c"
for f in "$repo"/src/engine/*.c; do lib_sources="$lib_sources $f"; done
# Any other src/puzzle/*.c added later is picked up too.
for f in "$repo"/src/puzzle/*.c; do
    case " $lib_sources " in *" $f "*) ;; *) lib_sources="$lib_sources $f" ;; esac
done

for t in $targets; do
    echo "== building fuzz_$t"
    extra=""
    # the store's chunk codec needs no SQLite library, only its header
    [ "$t" = chunk ] && extra="$repo/src/store/chunk.c $(pkg-config --cflags sqlite3 2>/dev/null)"
    # shellcheck disable=SC2086
    if ! $CC $cflags -o "$build/fuzz_$t" "$script_dir/fuzz_$t.c" $extra $lib_sources \
            $jansson_libs -lm; then
        echo "build of fuzz_$t failed" >&2
        exit 2
    fi
done

# ---- run --------------------------------------------------------------------
pids=
for t in $targets; do
    work="$build/$t"
    rm -rf "$work/corpus" "$work/artifacts"
    mkdir -p "$work/corpus" "$work/artifacts" || exit 2
    # libFuzzer writes new inputs into the first corpus dir: a scratch copy.
    cp "$script_dir/corpus/$t/"* "$work/corpus/" 2>/dev/null
    if [ "$seconds" -gt 0 ]; then
        mode="-max_total_time=$seconds"
    else
        mode="-runs=0"
    fi
    echo "== running fuzz_$t for ${seconds}s (log: $work/fuzz.log)"
    dict=""
    [ -f "$script_dir/$t.dict" ] && dict="-dict=$script_dir/$t.dict"
    # shellcheck disable=SC2086
    (cd "$work" && exec "$build/fuzz_$t" "$work/corpus" \
        $dict -max_len=8192 "$mode" \
        -timeout="$timeout_s" -rss_limit_mb=2560 -report_slow_units=1 \
        -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
        ${FUZZ_ARGS:-} >"$work/fuzz.log" 2>&1) &
    pids="$pids $!"
done

status=0
# shellcheck disable=SC2086 # one word per pid
set -- $pids
for t in $targets; do
    pid=$1
    shift
    wait "$pid"
    rc=$?
    work="$build/$t"
    log="$work/fuzz.log"
    # artifact names are libFuzzer's crash-/leak-/timeout-/slow-unit-HASH
    # shellcheck disable=SC2010
    artifacts=$(ls "$work/artifacts" 2>/dev/null | grep -v '^slow-unit-')
    # shellcheck disable=SC2010
    slow=$(ls "$work/artifacts" 2>/dev/null | grep '^slow-unit-')
    echo "== fuzz_$t: exit $rc"
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb|new_units_added)' \
        "$log" | sed 's/^/   /'
    grep -E '^#[0-9]+.*(DONE|INITED)' "$log" | tail -n 2 | sed 's/^/   /'
    grep -E 'Slowest unit' "$log" | tail -n 3 | sed 's/^/   /'
    for a in $slow; do
        echo "   slow input (>= 1 s, not a failure): $work/artifacts/$a"
    done
    if [ "$rc" -ne 0 ] || [ -n "$artifacts" ] ||
        grep -qE '^==[0-9]+==ERROR|^SUMMARY: (Address|Undefined|Leak)Sanitizer|FUZZ INVARIANT|runtime error:' "$log"; then
        status=1
        echo "   FAILURE in fuzz_$t:"
        grep -E '^==[0-9]+==ERROR|^SUMMARY:|FUZZ INVARIANT|runtime error:|^artifact_prefix|Test unit written' \
            "$log" | head -n 20 | sed 's/^/   /'
        for a in $artifacts; do
            echo "   artifact: $work/artifacts/$a"
        done
        echo "   reproduce: $build/fuzz_$t $work/artifacts/<file>"
        echo "   minimise:  $build/fuzz_$t -minimize_crash=1 -runs=100000 $work/artifacts/<file>"
    fi
done
exit $status
