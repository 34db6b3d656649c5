#!/bin/bash
# doctor --verbs: the ports' active MTU through a dlopen'ed libibverbs, tested with the software NIC
# (softnic, a test device: tools/softnic) standing in for the NIC's libibverbs.
. "$(dirname "$0")/lib-doctor.sh"
need_doctor
SN=$RS_BUILD/softnic/libibverbs.so.1
echo 1..4
printf '%s\n' 'ib/count=1' 'ib/softnic0/pci=none' 'ib/softnic0/port/1/state=4: ACTIVE' 'ib/softnic0/port/1/phys_state=5: LinkUp' \
    'ib/softnic0/port/1/rate=100 Gb/sec (4X EDR)' 'ib/softnic0/port/1/link_layer=InfiniBand' >"$WORK/sn.facts"
mkdir -p "$WORK/fabric"
if [ -f "$SN" ]; then
    LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$WORK/fabric doctor --facts "$WORK/sn.facts" --verbs >"$WORK/o"; st=$?
    grep -q '^PASS  ib.mtu  *softnic0:1  *active MTU 4096' "$WORK/o"; check $? "softnic: --verbs reads active MTU 4096 of softnic0 port 1"
    check $((st != 0)) "softnic: all pass once the active MTU is known (exit $st)"
    LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$WORK/fabric doctor --facts "$WORK/sn.facts" >"$WORK/o"
    grep -q '^INFO  ib.mtu .*unknown' "$WORK/o"; check $? "softnic: without --verbs a facts file's active MTU stays unknown"
else
    for i in 1 2 3; do ok "# skip $SN not built"; done
fi
# The system's libibverbs (or none): devices named in the facts do not exist there, nothing is added.
doctor --facts "$WORK/sn.facts" --verbs >"$WORK/o" 2>"$WORK/e"; st=$?
grep -q "^INFO  ib.mtu .*unknown" "$WORK/o" && [ $st = 0 ]; check $? "--verbs where no such device exists: active MTU unknown, no crash (exit $st)"
exit $((FAILED > 0))
