#!/bin/bash
# Configuration from the environment: bad values give one warning each and the default; ranks from
# torchrun / Slurm / Open MPI; RAILSCOPE_DISABLE; default directory; file mode and naming; a planted
# symlink is refused; setuid programs are left untraced.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check railscope
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
plan 21
cd "$T" || bail "no tmp"

out=$(RAILSCOPE_OUT=$T/c1 RAILSCOPE_EVENTS=verbs,bogus RAILSCOPE_FLUSH_MS=abc RAILSCOPE_BUFFER_KB=1 \
    RAILSCOPE_POLICY=maybe RAILSCOPE_LOG=loud "$E" -n 100 2>"$T/err")
is "$out" "emitted=100 dropped=0" "bad values: the program runs normally"
is "$(grep -c '^railscope: ' "$T/err")" 5 "five bad values, five warnings"
like "$(cat "$T/err")" "RAILSCOPE_EVENTS: unknown family 'bogus' ignored \(known: all,core,verbs" "EVENTS warning names the bad family and the known ones"
like "$(cat "$T/err")" "RAILSCOPE_FLUSH_MS='abc' is not a number in 10\.\.60000; using 500" "FLUSH_MS warning gives range and default"
like "$(cat "$T/err")" "RAILSCOPE_BUFFER_KB='1' is not a number in 64\.\." "BUFFER_KB out of range"
like "$(cat "$T/err")" "RAILSCOPE_POLICY='maybe' unknown \(drop\|block\); using drop" "POLICY warning"
like "$(cat "$T/err")" "RAILSCOPE_LOG='loud' unknown" "LOG warning"
res=$("$C" "$T"/c1/*.rtrace)
like "$res" "marks=100 .*warnings=5 " "the warnings are recorded in the trace too"

# nothing known named: the default (all), not core alone (session 29: RAILSCOPE_EVENTS=gpu recorded no GPU, no host
# facts, though the docs said "the default")
RAILSCOPE_OUT=$T/ev RAILSCOPE_EVENTS=gpu,-x "$E" -n 1 >/dev/null 2>"$T/err"
is "$(cat "$T/err")" "railscope: RAILSCOPE_EVENTS: unknown family 'gpu', 'x' ignored (known: all,core,verbs,cuda,nccl,nvtx,nvml,host; '-name' removes one); using the default, all" \
    "EVENTS naming no known family: one warning, the default"
# (the header, not the host facts: a one-event program under ASan can end before the writer has read them)
is "$("$RS_CLI" info "$T/ev" | grep -o 'events all$')" "events all" "... recorded as all (the header says so)"

RAILSCOPE_OUT=$T/q RAILSCOPE_LOG=quiet RAILSCOPE_EVENTS=bogus "$E" -n 1 >/dev/null 2>"$T/err"
is "$(cat "$T/err")" "" "RAILSCOPE_LOG=quiet: silent"

RAILSCOPE_OUT=$T/d RAILSCOPE_DISABLE=1 "$E" -n 10 >/dev/null
ok "RAILSCOPE_DISABLE=1: no trace directory" test ! -e "$T/d"

RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 RAILSCOPE_OUT=$T/r1 "$E" -n 1 >/dev/null
like "$("$RS_CLI" info "$T/r1")" "rank: +3 of 8 \(local rank 1\)" "torchrun RANK/LOCAL_RANK/WORLD_SIZE in the header"
SLURM_PROCID=5 SLURM_LOCALID=2 SLURM_NTASKS=16 RAILSCOPE_OUT=$T/r2 "$E" -n 1 >/dev/null
like "$("$RS_CLI" info "$T/r2")" "rank: +5 of 16 \(local rank 2\)" "Slurm variables"
OMPI_COMM_WORLD_RANK=7 OMPI_COMM_WORLD_LOCAL_RANK=3 OMPI_COMM_WORLD_SIZE=12 RAILSCOPE_OUT=$T/r3 "$E" -n 1 >/dev/null
like "$("$RS_CLI" info "$T/r3")" "rank: +7 of 12 \(local rank 3\)" "Open MPI variables"

mkdir "$T/dflt" && (cd "$T/dflt" && env -u RAILSCOPE_OUT "$E" -n 1 >/dev/null)
n=$(ls "$T"/dflt/railscope-out/*.rtrace 2>/dev/null | wc -l)
is "$n" 1 "RAILSCOPE_OUT unset: ./railscope-out/"
mode=$(stat -c %a "$T"/dflt/railscope-out/*.rtrace)
is "$mode" 600 "trace files are mode 0600"

# A symlink planted where the next file will go is not followed; the same pid after exec gets ".1".
host=$(hostname | cut -d. -f1 | tr -c 'A-Za-z0-9._\n-' '_')
mkdir "$T/sl" && echo victim >"$T/victim"
bash -c 'ln -s "$2" "$1/$3-$$.rtrace"; exec env RAILSCOPE_OUT="$1" "$0" -n 5' "$E" "$T/sl" "$T/victim" "$host" \
    >/dev/null 2>"$T/err"
is "$(cat "$T/victim")" "victim" "planted symlink: its target is untouched"
like "$(cat "$T/err")" "refusing to write through the symbolic link" "planted symlink: one warning"
f=$(ls "$T"/sl/*.1.rtrace 2>/dev/null)
like "$("$C" "$f")" "marks=5 " "the trace went to <host>-<pid>.1.rtrace instead"

# setuid: an AT_SECURE process is not traced (needs root to make the binary and a suid-capable /tmp).
cp "$E" "$T/suid-emitter" && chown nobody "$T/suid-emitter" 2>/dev/null && chmod u+s "$T/suid-emitter" &&
    [ "$(id -u)" = 0 ] && mkdir -m 777 "$T/su"
if [ -u "$T/suid-emitter" ] && [ -d "$T/su" ] && ! findmnt -no OPTIONS -T "$T" | grep -q nosuid; then
    RAILSCOPE_OUT=$T/su "$T/suid-emitter" -n 10 >/dev/null 2>&1
    is "$(ls "$T/su" | wc -l)" 0 "setuid program: left untraced (no file)"
else
    skip "cannot make a setuid binary here (not root, or nosuid mount)"
fi
