#!/bin/sh
# run.sh - `make check-burrtools`: BurrTools' own loader and assembler
# judge the BurrTools files Tessera writes (check.py says what is compared).
#
#   BURRTOOLS_SRC=/path/to/burr-tools [BURRTOOLS_BUILD=DIR] [TESSERA=./tessera] \
#       tests/burrtools/run.sh
#
# BurrTools' library and tests/burrtools/load.cpp are built by build.sh in
# BURRTOOLS_BUILD (default ../burrtools-build, beside the checkout); its
# source is https://github.com/burr-tools/burr-tools.  Needs a C++
# compiler, zlib and python3; never part of the default `make check`.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${BURRTOOLS_SRC:?set BURRTOOLS_SRC to a BurrTools source tree}"
T=${TESSERA:-$top/tessera}
[ -x "$T" ] || { echo "run.sh: no tessera binary at $T (build it, or set TESSERA)" >&2; exit 2; }
load=$("$here/build.sh" | tail -n 1)
exec python3 "$here/check.py" "$T" "$load" "${TSR_SRCDIR:-$top}" "$BURRTOOLS_SRC"
