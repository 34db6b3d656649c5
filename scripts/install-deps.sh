#!/bin/sh
# Installs the Debian/Ubuntu packages railscope needs to build, test and run its demo.
# Usage: scripts/install-deps.sh        (as root, or with sudo available)
set -eu
PKGS="build-essential pkg-config libzstd-dev zstd libibverbs-dev ibverbs-utils libunwind-dev
      protobuf-compiler python3 perl clang chromium"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "railscope: need root or sudo to install: $PKGS" >&2; exit 2; }
    SUDO=sudo
fi
missing=""
for p in $PKGS; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "railscope: all build dependencies present"
    exit 0
fi
echo "railscope: installing:$missing"
$SUDO apt-get update -qq
# chromium is only for the HTML report test; carry on without it where the distribution lacks it.
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $(echo "$missing" | sed 's/ chromium//') >/dev/null
case "$missing" in *chromium*)
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 ||
        echo "railscope: chromium not installable here; the HTML browser test will be skipped" >&2 ;;
esac
echo "railscope: dependencies installed"
