#!/bin/sh
# Browser tests of the dashboard (www/): a fresh tesserad on a loopback port,
# headless Chromium driven by playwright-core, one node process per test file.
#
#   sh tests/browser/run.sh [FILE.test.mjs ...]      (default: every *.test.mjs)
#
# Environment:
#   TSR_SRCDIR         the source tree (default: this script's ../..)
#   TESSERAD           the daemon (default $TSR_SRCDIR/tesserad)
#   CHROMIUM           the browser (default /usr/bin/chromium)
#   TSR_ARTIFACTS      screenshots and downloads (default tests/browser/artifacts)
#   TSR_TEST_TIMEOUT   seconds per test file (default 120, times the whole
#                      part of TSR_TIMEOUT_SCALE)
#   TSR_TIMEOUT_SCALE  stretches every wait inside the tests (default 1)
#
# Exit status: 0 all passed, 1 a failure, 77 skipped (no node or no browser:
# install the Debian packages chromium and npm).
set -u

here=$(cd "$(dirname "$0")" && pwd)
TSR_SRCDIR=${TSR_SRCDIR:-$(cd "$here/../.." && pwd)}
TESSERAD=${TESSERAD:-$TSR_SRCDIR/tesserad}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
TSR_ARTIFACTS=${TSR_ARTIFACTS:-$here/artifacts}
scale=${TSR_TIMEOUT_SCALE:-1}
scale=${scale%%.*}
[ "${scale:-0}" -ge 1 ] 2>/dev/null || scale=1
TSR_TEST_TIMEOUT=${TSR_TEST_TIMEOUT:-$((120 * scale))}
export TSR_SRCDIR TESSERAD CHROMIUM TSR_ARTIFACTS

skip() { echo "SKIP: browser tests: $*" >&2; exit 77; }

command -v node >/dev/null 2>&1 || skip "node is not installed (apt-get install nodejs npm)"
[ -x "$CHROMIUM" ] || skip "no browser at $CHROMIUM (apt-get install chromium, or set CHROMIUM)"
[ -x "$TESSERAD" ] || { echo "FAIL: no tesserad at $TESSERAD (make tesserad)" >&2; exit 1; }
[ -f "$TSR_SRCDIR/www/index.html" ] || { echo "FAIL: no dashboard at $TSR_SRCDIR/www/index.html" >&2; exit 1; }

if [ ! -d "$here/node_modules/playwright-core" ]; then
	command -v npm >/dev/null 2>&1 || skip "npm is not installed and $here/node_modules is missing (apt-get install npm)"
	echo "browser tests: npm ci in $here" >&2
	(cd "$here" && npm ci --no-audit --no-fund) >&2 || skip "npm ci failed (offline?): playwright-core is not available"
fi

mkdir -p "$TSR_ARTIFACTS" || exit 1
state=$(mktemp -d "${TMPDIR:-/tmp}/tsr-browser.XXXXXX") || exit 1
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		pid=
	fi
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

>"$state/tesserad.err"
"$TESSERAD" --listen 127.0.0.1:0 --state-dir "$state" --threads 2 \
	--www "$TSR_SRCDIR/www" --puzzles "$TSR_SRCDIR/puzzles" --docs "$TSR_SRCDIR/docs" 2>"$state/tesserad.err" &
pid=$!
port=
i=0
while [ $i -lt 100 ]; do
	port=$(sed -n 's/.*listening on .*(port \([0-9][0-9]*\)).*/\1/p' "$state/tesserad.err" | head -n 1)
	[ -n "$port" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
if [ -z "$port" ]; then
	echo "FAIL: tesserad did not start:" >&2
	cat "$state/tesserad.err" >&2
	exit 1
fi
TSR_BASE_URL=http://127.0.0.1:$port
export TSR_BASE_URL
echo "browser tests: tesserad pid $pid at $TSR_BASE_URL, artifacts in $TSR_ARTIFACTS"

if [ $# -eq 0 ]; then
	set -- "$here"/*.test.mjs
fi
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 10 $TSR_TEST_TIMEOUT"

failed=
for f in "$@"; do
	case $f in /*) ;; *) [ -f "$f" ] || f=$here/$f ;; esac
	name=$(basename "$f")
	echo "=== $name"
	start=$(date +%s)
	# shellcheck disable=SC2086
	(cd "$here" && $tmo node --test --test-reporter=spec "$f")
	rc=$?
	end=$(date +%s)
	if [ $rc -eq 0 ]; then
		echo "=== PASS $name ($((end - start)) s)"
	else
		[ $rc -eq 124 ] && echo "=== TIMEOUT after $TSR_TEST_TIMEOUT s"
		echo "=== FAIL $name (exit $rc, $((end - start)) s)"
		failed="$failed $name"
	fi
	kill -0 "$pid" 2>/dev/null || { echo "FAIL: tesserad died:" >&2; cat "$state/tesserad.err" >&2; pid=; exit 1; }
done

if [ -n "$failed" ]; then
	echo "browser tests FAILED:$failed"
	echo "--- tesserad stderr"; cat "$state/tesserad.err"
	exit 1
fi
echo "browser tests: all passed"
exit 0
