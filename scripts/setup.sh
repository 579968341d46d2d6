#!/bin/sh
# scripts/setup.sh - everything a fresh Debian 12 machine needs to build
# Tessera: installs the missing build dependencies with apt-get, then
# configures (once) and builds.  Safe to run again; it only does what is
# missing.  Run it from anywhere; it works in the repository it belongs to.
set -eu
cd "$(dirname "$0")/.."

packages="gcc make autoconf automake libtool pkg-config libjansson-dev libsqlite3-dev check zlib1g-dev libexpat1-dev
          libmicrohttpd-dev libsystemd-dev curl python3 chromium libopenmpi-dev openmpi-bin"
missing=""
for p in $packages; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
# the browser tests run on Node.js and npm: the machine's own when it has
# them (they may not come from Debian), else Debian's
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
if [ -n "$missing" ]; then
    echo "setup: installing$missing" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi

[ -x configure ] || autoreconf -fi >/dev/null 2>&1
[ -f Makefile ] || ./configure >/dev/null
make -j"$(nproc)" >/dev/null
echo "setup: built $(pwd)/tessera" >&2
