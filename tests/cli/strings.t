#!/bin/bash
# Issue 17: memory is bounded by the input's size. A 3.6 MB file of 600 k distinct 4 KiB strings (2.4 GB
# of text once decompressed; mkhostile) drove `info` to 2.4 GB. Now the reader keeps at most
# 64 MiB + 16 x the file's size of string text (the file then reads "partial" with the count of strings not
# kept), and `info`, which resolves no string, keeps none. Also: info counts threads exactly with a hash
# set (it stopped at "4096+" and scanned a 4096-entry list per event: 17 s for 1 M threads).
. "$(dirname "$0")/../lib.sh"
need_build tests/cli/mkhostile tests/corpus/rs-readcheck railscope
need_time
plan 7
"$RS_BUILD/tests/cli/mkhostile" strings "$T/s.rtrace" 600000 4096 2>/dev/null
sz=$(stat -c %s "$T/s.rtrace")
peak() { awk '/^M / { print $2 }' "$T/time"; } # KB
/usr/bin/time -o "$T/time" -f 'M %M' timeout -k 2 60 "$RS_CLI" info "$T/s.rtrace" >"$T/info" 2>&1
rc=$?
kb=$(peak)
is "$rc" 0 "info: 600 k x 4 KiB strings in $sz bytes: exit 0 (info keeps no strings)"
ok "info: peak memory $kb KB < 100 MB" test "${kb:-999999999}" -lt 102400
like "$(cat "$T/info")" 'string +600000' "info: counts all 600000 strings"
# The reader itself (dump, report and export resolve strings): limit 64 MiB + 16 x size, then "partial"
/usr/bin/time -o "$T/time" -f 'M %M' timeout -k 2 60 "$RS_BUILD/tests/corpus/rs-readcheck" "$T/s.rtrace" >"$T/rc" 2>&1
kb=$(peak)
lim=$(((64 * 1024 * 1024 + 16 * sz) / 1024 + 128 * 1024)) # + frame buffers, the program (and a sanitizer's)
ok "reader: peak memory $kb KB within the string limit + 128 MB ($lim KB)" test "${kb:-999999999}" -lt "$lim"
like "$(cat "$T/rc")" '^[^ ]+ partial 600002 .*strings .* not kept' "reader: every event handed out, status partial, says why"
# threads
"$RS_BUILD/tests/cli/mkhostile" threads "$T/t.rtrace" 200000 2>/dev/null
/usr/bin/time -o "$T/time" -f 'M %M %U' timeout -k 2 60 "$RS_CLI" info "$T/t.rtrace" >"$T/info" 2>&1
like "$(cat "$T/info")" ' 200000 threads' "info: counts 200000 threads exactly"
ok "info: 200 k threads in under 2 s CPU ($(awk '{print $3}' "$T/time") s)" \
    awk '/^M / { exit !($3 < 2) }' "$T/time"
exit 0
