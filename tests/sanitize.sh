#!/bin/sh
# tests/sanitize.sh - run the test suite built with sanitizers.
# Usage: tests/sanitize.sh LIST SRCDIR   (LIST as for -fsanitize, e.g.
# address,undefined or thread).
# The source tree is usually configured in place, which rules out a VPATH
# build, so the tracked files are copied to a scratch tree and built there.
# The oracle test leaves out the cubes' long runs (TSR_QUICK=1): sanitizers
# make them several times slower, and check's timeouts are stretched to match
# (CK_TIMEOUT_MULTIPLIER for the unit tests, TSR_TIMEOUT_SCALE for the
# integration and browser tests' waits).
set -eu
list=$1
src=$(cd "$2" && pwd)
build=${TMPDIR:-/tmp}/tessera-sanitize-$(echo "$list" | tr ',' '-')
rm -rf "$build"
mkdir -p "$build"
(cd "$src" && git ls-files -z | xargs -0 tar cf -) | (cd "$build" && tar xf -)
cd "$build"
autoreconf -fi >/dev/null 2>&1
# both builds also check the invariants and every "(under mu)" (configure
# --enable-debug): the thread build is where a lock's holder matters most
./configure --enable-sanitize="$list" --enable-debug CFLAGS="-O1 -g" >/dev/null
make -j2 >/dev/null
# ThreadSanitizer finds nothing in the single-threaded oracle runs and
# makes them many times slower: test_oracle skips itself under it.
[ "$list" = thread ] && export TSR_SKIP_ORACLE=1
CK_TIMEOUT_MULTIPLIER=10 TSR_QUICK=1 TSR_TIMEOUT_SCALE=10 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    make -j2 check
