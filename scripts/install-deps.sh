#!/bin/sh
# Installs the Debian/Ubuntu packages railscope needs to build, test and run its demo.
# Usage: scripts/install-deps.sh        (as root, or with sudo available)
set -eu
# Needed to build and run the test suite.
PKGS="build-essential pkg-config libzstd-dev zstd libibverbs-dev ibverbs-utils libunwind-dev
      protobuf-compiler python3 perl clang clang-format-14 time util-linux jq"
# Used by some tests, which skip with the reason when a package is missing: chromium (the HTML report in a
# browser), strace (the no-sockets check), libclang-rt-14-dev (libFuzzer's runtime, `make fuzz`).
OPTIONAL="chromium strace libclang-rt-14-dev"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "railscope: need root or sudo to install: $PKGS" >&2; exit 2; }
    SUDO=sudo
fi
missing() {
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || printf ' %s' "$p"; done
}
need=$(missing $PKGS)
want=$(missing $OPTIONAL)
if [ -z "$need$want" ]; then
    echo "railscope: all dependencies present"
    exit 0
fi
echo "railscope: installing:$need$want"
$SUDO apt-get update -qq
export DEBIAN_FRONTEND=noninteractive
[ -z "$need" ] || $SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null
for p in $want; do
    $SUDO apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
        echo "railscope: optional package $p not installable here; the tests that use it will skip" >&2
done
echo "railscope: dependencies installed"
