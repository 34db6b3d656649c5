#!/bin/bash
# Regenerates tests/doctor/golden/* from the current doctor (review the diff before committing!).
# Usage: RS_BUILD=/abs/build tests/doctor/regen-goldens.sh
set -eu
. "$(dirname "$0")/lib-doctor.sh"
mkdir -p "$TDIR/golden"
"$TDIR/fixtures/mkfixtures.sh" "$WORK/fx"
for name in dgx-h100 rtx4090-roce roce-gid-v1 empty; do
    "$DOCTOR" --sysfs-root "$WORK/fx/$name" >"$TDIR/golden/$name.txt" || true
    "$DOCTOR" --json --sysfs-root "$WORK/fx/$name" >"$TDIR/golden/$name.json" || true
done
for f in $(ls "$TDIR"/facts/*.facts 2>/dev/null); do
    "$DOCTOR" --facts "$f" >"${f%.facts}.txt" || true
done
echo "regenerated goldens in $TDIR/golden and $TDIR/facts"
