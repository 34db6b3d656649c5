#!/bin/bash
# softnic: the link model of the software test NIC, measured through the extended verbs API (t_link.c):
# a 1 MiB write at 100 Gb/s completes no sooner than 84 us; a long stream runs within 10 % of
# SOFTNIC_RATE_GBPS (a rate this host can move); SOFTNIC_LATENCY_US adds two one-way latencies to a
# round trip; SOFTNIC_PAUSE=EVERY:FOR stretches completion latencies by about FOR.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build softnic/t_link
plan 8
L=$RS_BUILD/softnic/t_link
val() { awk -v k="$1" '$1 == k { print $2 }' <<<"$2"; }

out=$(run_timeout 30 "$L" lat1m)
min=$(val lat1m_min_us "$out"); tsmin=$(val lat1m_ts_min_us "$out")
ok "softnic: 1 MiB RDMA WRITE at 100 Gb/s takes >= 84 us (min ${min} us by the clock)" test "${min:-0}" -ge 84
ok "softnic: ...and its completion timestamp says the same (min ${tsmin} us)" test "${tsmin:-0}" -ge 84
is "$(val data_ok "$out")" 1 "softnic: the 1 MiB writes landed"

# what can this host move at all? then ask for a rate well below that
cap=$(SOFTNIC_RATE_GBPS=10000 run_timeout 30 "$L" stream 0.4 | awk '$1=="stream_gbps"{print $2}')
# (a third of it: a clean-clone CI run measured 19 Gb/s, then got 4-7 Gb/s at 9 with the sanitizer suites beside)
target=$(awk -v c="${cap:-0}" 'BEGIN { if (c >= 30) print 10; else if (c >= 6) printf "%d\n", c / 3; else print 0 }')
diag "host moves ${cap} Gb/s through the software NIC unthrottled; testing the model at ${target} Gb/s"
stream_at() { SOFTNIC_RATE_GBPS=$1 run_timeout 30 "$L" stream "$2" | awk '$1=="stream_gbps"{print $2}'; }
if [ "$target" -gt 0 ]; then
    # Faster than the rate is always a failure of the model.  Slower is one only if the host could
    # have moved more at that moment: a shared 2-core host stalls, so re-measure its capacity then.
    # A paced stream sleeps between frames, so late wake-ups on a busy host cost it more than the unthrottled
    # probe (a clean-clone run beside the sanitizer suites: 4.7-5.1 Gb/s at 6 while the probe then moved 8-12.7):
    # "slow" only when every attempt fell short while the host moved at least 3x the rate just after it.
    verdict=host idle=0
    for attempt in 1 2 3; do
        got=$(stream_at "$target" 1.5)
        if awk -v g="${got:-0}" -v t="$target" 'BEGIN { exit !(g > 1.1 * t) }'; then verdict=fast; break; fi
        if awk -v g="${got:-0}" -v t="$target" 'BEGIN { exit !(g >= 0.9 * t) }'; then verdict=ok; break; fi
        cap=$(stream_at 10000 0.4)
        diag "attempt $attempt: ${got} Gb/s at SOFTNIC_RATE_GBPS=$target; host now moves ${cap} Gb/s unthrottled"
        if awk -v c="${cap:-0}" -v t="$target" 'BEGIN { exit !(c >= 3 * t) }'; then idle=$((idle + 1)); fi
    done
    [ "$verdict" = host ] && [ "$idle" = 3 ] && verdict=slow
    case $verdict in
    ok) ok "softnic: stream throughput ${got} Gb/s within 10% of SOFTNIC_RATE_GBPS=$target" true ;;
    host) skip "host too busy to move ${target} Gb/s through sockets right now (got ${got} Gb/s)" ;;
    *) ok "softnic: stream throughput ${got} Gb/s within 10% of SOFTNIC_RATE_GBPS=$target" false ;;
    esac
else
    skip "host cannot move even 6 Gb/s through the software NIC right now (${cap} Gb/s)"
fi

base=$(run_timeout 30 "$L" pings 200)
slow=$(SOFTNIC_LATENCY_US=500 run_timeout 30 "$L" pings 100)
b50=$(val ping_p50_us "$base"); s50=$(val ping_p50_us "$slow")
ok "softnic: SOFTNIC_LATENCY_US=500 puts a 4 KiB write round trip at >= 1000 us (median $s50 us, default $b50 us)" \
    test "${s50:-0}" -ge 1000

paused=$(SOFTNIC_PAUSE=40:20 run_timeout 30 "$L" pings 300)
nin=$(val in_window "$paused"); after=$(val in_window_done_after_end_pct "$paused")
in50=$(val in_window_p50_us "$paused"); out50=$(val out_window_p50_us "$paused")
diag "4 KiB writes every ms: no pause median ${b50} us; SOFTNIC_PAUSE=40:20: posted inside a window median ${in50} us ($nin writes), outside ${out50} us"
ok "softnic: SOFTNIC_PAUSE=40:20: every write posted inside a pause window completes after it ends ($after% of $nin)" \
    test "${nin:-0}" -ge 50 -a "${after:-0}" -eq 100
# half the pause (10 ms) is the model; late wake-ups on a loaded box only lengthen it (it failed the old 15 ms bound once at load
# 10-28 this session); a write held past the whole window would be a broken model
ok "softnic: ...those writes are stretched by about half the pause length on average (median ${in50} us, 8-20 ms)" \
    test "${in50:-0}" -ge 8000 -a "${in50:-0}" -le 20000
# not held: under half of what the held ones take, and within 3 ms or twice the run without pauses (a loaded
# ASan run had 3.6 ms with no pause at all: the host, not the model)
lim=$((2 * ${b50:-99999})); [ "$lim" -lt 3000 ] && lim=3000
ok "softnic: ...writes posted outside the windows are not (median ${out50} us, no pause ${b50} us, held ${in50} us)" \
    test "${out50:-99999}" -lt "$lim" -a "$((2 * ${out50:-99999}))" -lt "${in50:-0}"
