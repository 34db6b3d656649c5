# Shared helpers for the verbs tests (source after tests/lib.sh).
VT=$RS_BUILD/verbs
NULLPROV=$VT/nullprov
need_build librailscope.so verbs/vt_dump

# traced DIR CMD...: run CMD with the tracer preloaded, writing traces under DIR.
traced() {
    local dir=$1
    shift
    # the tracer goes into CMD only, not into timeout(1) itself
    run_timeout 20 env LD_PRELOAD=$RS_PRELOAD RAILSCOPE_OUT=$dir RAILSCOPE_LOG=${RAILSCOPE_LOG:-warn} "$@"
}
# on_null CMD...: run CMD on the null provider.
on_null() { LD_LIBRARY_PATH=$NULLPROV${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"; }
# vdump DIR: the verbs events of the traces under DIR, one per line (see vt_dump.c).
vdump() { "$VT/vt_dump" verbs "$1"; }
# nkind DUMP KIND [FILTER-REGEX]: number of KIND lines (matching the regex, if given).
nkind() { printf '%s\n' "$1" | grep -E "^$2 " | grep -Ec -- "${3:-.}"; }
# field DUMP KIND NAME: the values of one field, one per line.
field() { printf '%s\n' "$1" | grep -E "^$2 " | grep -oE " $3=[^ ]+" | cut -d= -f2; }
# summary OUT KEY: KEY=value from a test program's "summary:" line.
summary() { printf '%s\n' "$1" | grep '^summary:' | grep -oE "\b$2=[0-9-]+" | cut -d= -f2; }
