#!/bin/bash
# The preload in processes without libibverbs: ordinary programs behave exactly as without it, and
# dlsym/dlvsym keep their semantics (RTLD_NEXT relative to the real caller, dlerror, versions) with the
# tracer's dlsym/dlvsym interposition in place (tests/verbs/vt_dlsym.c).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/vlib.sh"
need_build verbs/vt_dlsym
plan 6

pre() { run_timeout 20 env LD_PRELOAD="$RS_PRELOAD_SHELL" RAILSCOPE_OUT="$T/tr" "$@"; }
is "$(pre bash -c 'echo hi; ls / | wc -l')" "$(bash -c 'echo hi; ls / | wc -l')" "bash and ls: same output under the preload"
is "$(pre sort -r <<<$'a\nc\nb')" "$(sort -r <<<$'a\nc\nb')" "sort: same output under the preload"
if command -v python3 >/dev/null; then
    is "$(pre python3 -c 'import ctypes; print(ctypes.CDLL(None).strlen(b"abc"))' 2>&1)" 3 \
        "python3 with ctypes (dlsym from a dlopen'ed module) works under the preload"
else
    skip "python3 not installed"
fi
ok "dlsym/dlvsym semantics without the preload" run_timeout 20 "$VT/vt_dlsym"
out=$(pre "$VT/vt_dlsym" preloaded 2>&1)
rc=$?
is "$rc" 0 "dlsym/dlvsym semantics under the preload"
[ $rc -ne 0 ] && printf '%s\n' "$out" | sed 's/^/#   /' >&2
is "$(pre bash -c 'exit 7'; echo $?)" 7 "exit status passes through"
