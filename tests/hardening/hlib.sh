# Shared setup for tests/hardening/*.t (source after tests/lib.sh).
# HB: this build's hardening programs; RC: rs-readcheck; PRELOAD: what to put in LD_PRELOAD to trace a
# program with this build's library (lib.sh's RS_PRELOAD: the sanitizer runtime first in a SAN= build);
# SOAK: 1 under `make soak` (long campaigns), else CI sizes.
HB=$RS_BUILD/tests/hardening
RC=$RS_BUILD/tests/corpus/rs-readcheck
SOAK=${RS_SOAK:-0}
PRELOAD=$RS_PRELOAD
# softnic: the software test NIC in LD_LIBRARY_PATH, a private fabric per test file.
use_softnic() {
    need_build softnic/libibverbs.so.1
    export LD_LIBRARY_PATH=$RS_BUILD/softnic${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export SOFTNIC_DIR=$T/fabric
    unset SOFTNIC_RATE_GBPS SOFTNIC_LATENCY_US SOFTNIC_PAUSE SOFTNIC_DEVICE SOFTNIC_LINK
}
# traced DIR CMD...: run CMD with the tracer writing into DIR (flush every 100 ms).
traced() {
    local dir=$1
    shift
    env LD_PRELOAD="$PRELOAD" RAILSCOPE_OUT="$dir" RAILSCOPE_FLUSH_MS=${FLUSH_MS:-100} "$@"
}
# trace_of DIR PID: the trace file(s) a process wrote (first generation only).
trace_of() { ls "$1"/*-"$2".rtrace 2>/dev/null | head -1; }
# kv LINE KEY: value of KEY=value in a line.
kv() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
# known_bug STATUS DESC BUG: a check that a reported, not yet fixed bug makes fail at times (TAP TODO: shown,
# not counted as a failure; prove lists it under "TODO passed" once the bug is gone).
known_bug() {
    _tap_n=$((_tap_n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $_tap_n - $2 # TODO $3"; else echo "not ok $_tap_n - $2 # TODO $3"; fi
}
