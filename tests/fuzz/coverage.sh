#!/bin/sh
# tests/fuzz/coverage.sh - source coverage of a fuzzing corpus.
#
#   tests/fuzz/coverage.sh [BUILD_DIR [TARGETS]]
#
# Rebuilds the harnesses with clang source-based coverage (no sanitizers)
# into BUILD_DIR/cov (default /tmp/tessera-fuzz), replays each target's
# corpus BUILD_DIR/TARGET/corpus (left there by run.sh) plus the seeds, and
# prints llvm-cov's per-file report for the library sources.  FUZZ_CFLAGS is
# passed to the compiler as in run.sh (use the same value as the run).  The merged
# profile is BUILD_DIR/cov/TARGET.profdata; for an annotated listing:
#   llvm-cov show BUILD_DIR/cov/fuzz_json -instr-profile=BUILD_DIR/cov/json.profdata FILE
set -u

script_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd) || exit 2
repo=$(CDPATH='' cd -- "$script_dir/../.." && pwd) || exit 2
build=${1:-/tmp/tessera-fuzz}
targets=${2:-json polycube}
CC=${CC:-clang}
PROFDATA=${PROFDATA:-llvm-profdata}
COV=${COV:-llvm-cov}

mkdir -p "$build/cov" || exit 2
build=$(CDPATH='' cd -- "$build" && pwd) || exit 2
jansson_cflags=$(pkg-config --cflags jansson 2>/dev/null) || jansson_cflags=
jansson_libs=$(pkg-config --libs jansson 2>/dev/null) || jansson_libs=-ljansson
# BurrTools files: zlib and expat
jansson_libs="$jansson_libs $(pkg-config --libs zlib expat 2>/dev/null || echo -lz -lexpat)"

status=0
for t in $targets; do
    bin="$build/cov/fuzz_$t"
    # shellcheck disable=SC2086
    $CC -std=gnu11 -g -O1 -march=x86-64-v2 -fsanitize=fuzzer \
        -fprofile-instr-generate -fcoverage-mapping \
        -I"$repo/include" -I"$repo/src" $jansson_cflags ${FUZZ_CFLAGS:-} -o "$bin" "$script_dir/fuzz_$t.c" \
        "$repo"/src/base/*.c "$repo"/src/puzzle/*.c "$repo/src/geom/geom.c" "$repo"/src/engine/*.c \
        $jansson_libs -lm || exit 2
    dirs="$script_dir/corpus/$t"
    [ -d "$build/$t/corpus" ] && dirs="$build/$t/corpus $dirs"
    rm -f "$build/cov/$t".*.profraw
    # shellcheck disable=SC2086
    LLVM_PROFILE_FILE="$build/cov/$t.%p.profraw" "$bin" -runs=0 -max_len=8192 $dirs \
        >"$build/cov/$t.log" 2>&1 || {
        status=1
        echo "fuzz_$t: the replay stopped on a failing input (see $build/cov/$t.log);" \
            "the report covers the inputs before it" >&2
    }
    "$PROFDATA" merge -sparse "$build/cov/$t".*.profraw -o "$build/cov/$t.profdata" || exit 2
    echo "== fuzz_$t: $(find "$build/$t/corpus" -type f 2>/dev/null | wc -l) corpus inputs"
    "$COV" report "$bin" -instr-profile="$build/cov/$t.profdata" \
        "$repo/src/puzzle" "$repo/src/geom" "$repo/src/engine" |
        sed "s|$repo/||"
done
exit $status
