# Shared setup for tests/hardening/*.t (source after tests/lib.sh).
# HB: this build's hardening programs; RC: rs-readcheck; PRELOAD: what to put in LD_PRELOAD to trace a
# program with this build's library (the sanitizer runtime first when the build is SAN=asan|tsan);
# SOAK: 1 under `make soak` (long campaigns), else CI sizes.
HB=$RS_BUILD/tests/hardening
RC=$RS_BUILD/tests/corpus/rs-readcheck
SOAK=${RS_SOAK:-0}
PRELOAD=$RS_LIB
_h_san=$(ldd "$RS_LIB" 2>/dev/null | awk '/lib(a|t)san\.so/ { print $3; exit }')
if [ -n "$_h_san" ]; then
    PRELOAD=$_h_san:$RS_LIB
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:verify_asan_link_order=0}
fi
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
