#!/bin/bash
# doctor's checks on hand-written facts files (tests/doctor/facts/*.facts: ACS hint, narrow switch
# uplink, IB port in INIT, NCCL variables that disable features, RoCE without v2 GIDs): verdicts vs the
# golden .txt next to each, and the exit status stated in the golden's summary line.
. "$(dirname "$0")/lib-doctor.sh"
need_doctor
files=("$TDIR"/facts/*.facts)
echo "1..$((2 * ${#files[@]}))"
for f in "${files[@]}"; do
    n=$(basename "$f" .facts)
    doctor --facts "$f" >"$WORK/$n.txt"; st=$?
    same_as "${f%.facts}.txt" "$WORK/$n.txt" "$n: verdicts match facts/$n.txt"
    want=$(sed -n 's/^summary: .*exit status \([0-9]\).*/\1/p' "${f%.facts}.txt")
    check $((st != want)) "$n: exit status $st (golden says $want)"
done
exit $((FAILED > 0))
