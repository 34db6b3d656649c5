#!/bin/bash
# ibv_get_cq_event under the tracer, on the software test NIC (tools/softnic): tests/softnic/t_cqevent.c waits four
# times for a CQ's completion event (blocked until a send 50 ms later; the event there already; a non-blocking
# descriptor with nothing there: -1/EAGAIN; the same with an event there). The program sees the same with and without
# the tracer (return values, errno, the CQ and CQ context handed back), and each wait is one IBV_GET_CQ_EVENT
# (formats/events_verbs.h): the CQ, the channel, how long the call took, and RS_CQEV_* flags (1 non-blocking
# descriptor, 2 an event was there already). Until session 21 the call was not traced: no such event.
# The tracer's looks at the descriptor are raw system calls: an interposer of poll/fcntl (a shim preloaded in front)
# sees the program's calls alone, the same with and without the tracer (until review helper-67 it saw the tracer's).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build softnic/t_cqevent railscope librailscope.so
need_cmd jq
plan 10

plain=$(run_timeout 30 "$RS_BUILD/softnic/t_cqevent" 2>&1)
is "$?" 0 "untraced: the program ran"
out=$(run_timeout 30 env LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/tr" "$RS_BUILD/softnic/t_cqevent" 2>&1)
is "$?" 0 "traced: the program ran"
strip() { grep -Ev '^(ptr|ms) ' <<<"$1"; }
is "$(strip "$out")" "$(strip "$plain")" \
    "the program sees the same with and without the tracer (return values, errno, CQ and context handed back)"
like "$(strip "$out")" "blocked: ret=0 errno=1234 cq=the CQ ctx=its context" "(what it sees: the CQ, errno kept)"

cq=$(sed -n 's/^ptr cq=\([^ ]*\) .*/\1/p' <<<"$out")
ch=$(sed -n 's/^ptr .*channel=\(.*\)/\1/p' <<<"$out")
"$RS_CLI" dump --json "$T/tr" | jq -c 'select(.kind == "ibv_get_cq_event")' >"$T/ev.jsonl"
ev() { sed -n "$1p" "$T/ev.jsonl" | jq -r "$2" | grep . || echo 0; }
is "$(wc -l <"$T/ev.jsonl")" 4 "four waits, four IBV_GET_CQ_EVENT"
d="each: the CQ returned (0 on failure), the channel, ret, errno (EAGAIN), flags (blocked, pending, none,"
is "$(jq -r '"\(.cq) \(.channel) \(.ret) \(.aux) \(.flags)"' "$T/ev.jsonl" | tr '\n' '|')" \
    "$cq $ch 0 0 0x0|$cq $ch 0 0 0x2|0x0 $ch -1 11 0x0|$cq $ch 0 0 0x3|" "$d non-blocking+pending)"
blocked_ms=$(sed -n 's/^ms blocked //p' <<<"$out")
ok "blocked: the call's time ($(($(ev 1 .dur) / 1000)) us) is the wait the program measured ($blocked_ms ms)" \
    awk -v d="$(ev 1 .dur)" -v m="$blocked_ms" 'BEGIN { exit !(d >= 45e6 && d <= m * 1e6 + 1e5) }'
ok "pending: returned at once ($(ev 2 .dur) ns)" test "$(ev 2 .dur)" -lt 5000000
# the completion the blocked wait was for: polled after it woke, on that CQ
wake=$(($(ev 1 .ts_ns) + $(ev 1 .dur)))
first=$("$RS_CLI" dump --json "$T/tr" | jq -r --arg cq "$cq" 'select(.kind == "ibv_wc" and .cq == $cq) | .ts_ns' |
    head -1)
ok "the CQ's first completion was polled after the blocked wait woke ($((${first:-0} - wake)) ns later)" \
    test "${first:-0}" -ge "$wake"

# poll/fcntl interposed in front of the tracer: it counts the polls and the fcntl F_GETFL/F_SETFL that reach libc's
# entry points (the tracer's own start-up duplicates its descriptors with F_DUPFD_CLOEXEC: not counted)
cat >"$T/shim.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
static int npoll, nfcntl;
int poll(struct pollfd *p, nfds_t n, int t)
{
    npoll++;
    return ((int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll"))(p, n, t);
}
static int fwd(const char *name, int fd, int cmd, long a)
{
    nfcntl += cmd == F_GETFL || cmd == F_SETFL;
    return ((int (*)(int, int, ...))dlsym(RTLD_NEXT, name))(fd, cmd, a);
}
#define F(name)                                                                                                        \
    int name(int fd, int cmd, ...)                                                                                     \
    {                                                                                                                  \
        va_list ap;                                                                                                    \
        va_start(ap, cmd);                                                                                             \
        long a = va_arg(ap, long);                                                                                     \
        va_end(ap);                                                                                                    \
        return fwd(#name, fd, cmd, a);                                                                                 \
    }
F(fcntl)
F(fcntl64)
__attribute__((destructor)) static void done(void)
{
    char b[64];
    int n = snprintf(b, sizeof b, "shim poll=%d fcntl=%d\n", npoll, nfcntl);
    if (write(2, b, (size_t)n) < 0) _exit(1);
}
C
if cc -shared -fPIC -O1 -o "$T/shim.so" "$T/shim.c" -ldl 2>"$T/shim.err"; then
    sp=$(run_timeout 30 env LD_PRELOAD="$T/shim.so" "$RS_BUILD/softnic/t_cqevent" 2>&1 | grep '^shim ')
    st=$(run_timeout 30 env LD_PRELOAD="$T/shim.so:$RS_PRELOAD" RAILSCOPE_OUT="$T/tr2" "$RS_BUILD/softnic/t_cqevent" \
        2>&1 | grep '^shim ')
    is "$st" "$sp" "a poll/fcntl interposer sees the program's calls alone, not the tracer's looks ($sp)"
else
    bail "cannot build the poll/fcntl shim: $(head -3 "$T/shim.err")"
fi
