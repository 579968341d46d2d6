#!/bin/sh
# tests/sanitize.sh - rebuild out of tree with sanitizers and run the tests.
# Usage: tests/sanitize.sh LIST SRCDIR   (LIST as for -fsanitize, e.g.
# address,undefined).  The oracle test skips the cubes' long runs here
# (TSR_QUICK=1): sanitizers make them several times slower.
set -eu
list=$1
src=$(cd "$2" && pwd)
build=${TMPDIR:-/tmp}/tessera-sanitize-$(echo "$list" | tr ',' '-')
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ]; then
    "$src/configure" --enable-sanitize="$list" CFLAGS="-O1 -g" >/dev/null
fi
make -j2 >/dev/null
TSR_QUICK=1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    make -j2 check
