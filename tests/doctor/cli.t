#!/bin/bash
# doctor's command line: usage errors (one "railscope:" line, exit 2), --help, --env, --facts round trip,
# and the `railscope doctor` subcommand of the real CLI when it is built.
. "$(dirname "$0")/lib-doctor.sh"
need_doctor
echo 1..18
err1() { # err1 DESC ARGS...: exit 2, exactly one stderr line starting "railscope: ", nothing on stdout
    local d=$1 st; shift
    doctor "$@" >"$WORK/o" 2>"$WORK/e"; st=$?
    if [ $st = 2 ] && [ "$(wc -l <"$WORK/e")" = 1 ] && grep -q '^railscope: ' "$WORK/e" && [ ! -s "$WORK/o" ]; then ok "$d"
    else not_ok "$d (exit $st)"; sed 's/^/# /' "$WORK/e"; fi
}
err1 "unknown option is a usage error" --bogus
err1 "missing option argument is a usage error" --sysfs-root
err1 "stray argument is a usage error" extra
err1 "--sysfs-root to a missing directory" --sysfs-root "$WORK/nope"
err1 "--facts of a missing file" --facts "$WORK/nope"
printf 'ib/count=1\nthis line has no equals sign\n' >"$WORK/bad.facts"
err1 "--facts with a malformed line" --facts "$WORK/bad.facts"
err1 "--env of a missing file" --env "$WORK/nope"
err1 "--facts and --sysfs-root together" --facts "$WORK/bad.facts" --sysfs-root "$WORK"
err1 "--trace and --facts together" --trace "$WORK" --facts "$WORK/bad.facts"
doctor --help >"$WORK/h" 2>&1; st=$?
check $((st != 0)) "--help exits 0"
grep -q 'Exit status: 0' "$WORK/h" && grep -q -- '--sysfs-root DIR' "$WORK/h"; check $? "--help documents the exit status scheme and --sysfs-root"

timeout 60 "$TDIR/fixtures/mkfixtures.sh" "$WORK/fx" roce-gid-v1 || { echo "Bail out! fixture"; exit 1; }
printf 'NCCL_IB_GID_INDEX=3\nNCCL_IB_HCA=mlx5_0\n' >"$WORK/good.env"
doctor --sysfs-root "$WORK/fx/roce-gid-v1" --env "$WORK/good.env" >"$WORK/o"; st=$?
grep -q '^PASS  nccl.gid_index .*NCCL_IB_GID_INDEX=3 is a RoCE v2 GID on mlx5_0:1' "$WORK/o" && ! grep -q '^FAIL' "$WORK/o"
check $? "--env overrides DIR/env: GID index 3 (RoCE v2) passes"
check $((st != 1)) "--env with a good GID index: exit 1 (the 50G port and ECN warnings remain), got $st"
printf 'NCCL_IB_HCA=mlx5_9\nNCCL_SOCKET_IFNAME==eth7\n' >"$WORK/bad.env"
doctor --sysfs-root "$WORK/fx/roce-gid-v1" --env "$WORK/bad.env" -q >"$WORK/o"; st=$?
grep -q '^FAIL  nccl.ib_hca .*mlx5_9 selects no RDMA port' "$WORK/o" && grep -q '^FAIL  nccl.socket_ifname .*=eth7 matches no' "$WORK/o"
check $? "NCCL_IB_HCA and NCCL_SOCKET_IFNAME naming absent devices fail"
! grep -q '^PASS\|^INFO' "$WORK/o"; check $? "--quiet prints only WARN/FAIL lines"

# Junk values under real keys: no crash, a verdict list and a status in 0..2.
{ for k in ib/x/port/1/state ib/x/port/1/rate ib/x/port/1/link_layer ib/x/pci pci/p/path pci/p/role pci/p/current_link_speed \
      pci/p/current_link_width gpu/0/pci env/NCCL_IB_HCA env/NCCL_IB_GID_INDEX env/NCCL_NET_GDR_LEVEL host/kernel iommu/groups; do
    for v in "" "-1" "99999999999999999999" "%s%n" "^=" ",,," ":1" "1e308 GT/s" "$(printf 'x%.0s' {1..2000})"; do echo "$k=$v"; done
  done; echo "ib/x/port/1/link_layer=Ethernet"; echo "ib/x/port/1/gid/7/type=RoCE v2"; echo "pci/p/role=nic"; echo "ib/x/pci=p"; } >"$WORK/junk.facts"
doctor --facts "$WORK/junk.facts" >"$WORK/o" 2>"$WORK/e"; st=$?
[ $st -le 2 ] && grep -q '^summary: ' "$WORK/o"; check $? "junk facts: no crash, summary printed (exit $st)"

# The real CLI's subcommand (skipped while the whole CLI does not link).
if [ -x "$RS_BUILD/railscope" ]; then
    timeout 20 "$RS_BUILD/railscope" doctor --sysfs-root "$WORK/fx/roce-gid-v1" >"$WORK/cli.txt"; st=$?
    doctor --sysfs-root "$WORK/fx/roce-gid-v1" >"$WORK/own.txt"
    check $((st != 2)) "railscope doctor: exit status 2 on the GID-v1 fixture"
    same_as "$WORK/own.txt" "$WORK/cli.txt" "railscope doctor prints the same verdicts as the test binary"
else
    ok "# skip $RS_BUILD/railscope not built"
    ok "# skip $RS_BUILD/railscope not built"
fi
exit $((FAILED > 0))
