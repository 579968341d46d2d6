#!/bin/sh
# build.sh - builds BurrTools' library (its src/lib, src/tools and
# src/halfedge: no FLTK, no GUI) and tests/burrtools/load.cpp against it.
#
#   BURRTOOLS_SRC=/path/to/burr-tools [BURRTOOLS_BUILD=DIR] tests/burrtools/build.sh
#
# BURRTOOLS_SRC is a BurrTools source tree (https://github.com/burr-tools/burr-tools);
# the objects and the program go to BURRTOOLS_BUILD, by default
# ../burrtools-build beside the checkout, never inside it.  Objects are
# rebuilt only when their source is newer, so a second run is quick.
# Prints the path of the built program on its last line.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
: "${BURRTOOLS_SRC:?set BURRTOOLS_SRC to a BurrTools source tree}"
src=$(cd "$BURRTOOLS_SRC" && pwd)
build=${BURRTOOLS_BUILD:-$(dirname "$top")/burrtools-build}
case "$build/" in
"$top"/*) echo "build.sh: BURRTOOLS_BUILD ($build) must be outside the checkout" >&2; exit 2 ;;
esac
[ -f "$src/src/lib/puzzle.cpp" ] || { echo "build.sh: $src is not a BurrTools source tree" >&2; exit 2; }
mkdir -p "$build/obj"
CXX=${CXX:-g++}
JOBS=${JOBS:-2}

# The library's sources as BurrTools' meson.build lists them for burrTxt:
# tools_src + halfedge_src + libburr_src.
sources=$(sed -n "/^\(tools_src\|halfedge_src\|libburr_src\) = \[/,/^\]/p" "$src/meson.build" |
          sed -n "s/^ *'\(src\/[^']*\.cpp\)'.*/\1/p")
[ -n "$sources" ] || { echo "build.sh: no sources found in $src/meson.build" >&2; exit 2; }

# Compile what is out of date, JOBS at a time, niced: the machine is shared.
stale=
objs=
for s in $sources; do
    o=$build/obj/$(echo "$s" | tr / _ | sed 's/\.cpp$/.o/')
    objs="$objs $o"
    if [ ! -f "$o" ] || [ "$src/$s" -nt "$o" ]; then stale="$stale $s"; fi
done
if [ -n "$stale" ]; then
    echo "build.sh: compiling $(echo $stale | wc -w) BurrTools sources into $build" >&2
    for s in $stale; do echo "$s"; done |
        xargs -P "$JOBS" -I{} sh -c 'o="$0/obj/$(echo "$2" | tr / _ | sed "s/\.cpp\$/.o/")"
            nice -n 10 '"$CXX"' -std=c++11 -O2 -w -I"$1/src" -c "$1/$2" -o "$o"' "$build" "$src" {}
    rm -f "$build/libburr.a"
fi
[ -f "$build/libburr.a" ] || ar rcs "$build/libburr.a" $objs
if [ ! -x "$build/load" ] || [ "$top/tests/burrtools/load.cpp" -nt "$build/load" ] ||
   [ "$build/libburr.a" -nt "$build/load" ]; then
    nice -n 10 $CXX -std=c++11 -O2 -Wall -I"$src/src" "$top/tests/burrtools/load.cpp" \
        "$build/libburr.a" -lz -pthread -o "$build/load"
fi
echo "$build/load"
