#!/bin/bash
# Where the verbs capture's time goes: rebuilds preload/verbs_ops.c with the tracer clock and/or the
# emission compiled out (bench/verbs/ablate.h), links each variant with the rest of an existing build's
# objects, and runs bench/verbs/run.sh against each, side by side, REPS times.
#   RS_BUILD=$PWD/build [VARIANTS="full noclock noemit neither"] bench/verbs/ablate.sh [REPS]
# The variants are measuring instruments only: nothing they record is meaningful.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=${RS_BUILD:-$TOP/build}
REPS=${1:-1}
VARIANTS=${VARIANTS:-full noclock noemit neither}
[ -e "$B/librailscope.so" ] || { echo "railscope: $B/librailscope.so not built" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/rs-vablate.XXXXXX")
trap 'rm -rf "$W"' EXIT
CF="-std=gnu11 -O2 -g -fPIC -D_GNU_SOURCE -fno-omit-frame-pointer -I$TOP -I$TOP/formats -I$TOP/tracer -fvisibility=hidden"
objs=$(find "$B/lib" -name '*.o' ! -path '*/preload/verbs_ops.o' | sort)
build() { # name, defines
    mkdir -p "$W/$1/verbs/nullprov"
    (cd "$TOP" && cc $CF $2 -include bench/verbs/ablate.h -c preload/verbs_ops.c -o "$W/$1/verbs_ops.o")
    (cd "$TOP" && cc -shared -o "$W/$1/librailscope.so" $objs "$W/$1/verbs_ops.o" \
        -Wl,--version-script=preload/librailscope.map -Wl,-z,nodelete -lzstd -ldl -lpthread)
    ln -s "$B/verbs/vb_bench" "$B/verbs/vt_dump" "$W/$1/verbs/"
    ln -s "$B/verbs/nullprov/libibverbs.so.1" "$W/$1/verbs/nullprov/"
}
flags() { case $1 in full) ;; noclock) echo -DVB_ABLATE_CLOCK ;; noemit) echo -DVB_ABLATE_EMIT ;;
    neither) echo -DVB_ABLATE_CLOCK -DVB_ABLATE_EMIT ;; *) echo "railscope: unknown variant $1" >&2; exit 2 ;; esac; }
for v in $VARIANTS; do build "$v" "$(flags "$v")"; done
for r in $(seq "$REPS"); do
    for v in $VARIANTS; do
        echo "-- $v (rep $r)"
        RS_BUILD=$W/$v "$TOP/bench/verbs/run.sh" -b 15 | grep -E '^(post_send|empty|batched)'
    done
done
