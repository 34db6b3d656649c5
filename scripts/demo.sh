#!/bin/sh
# The railscope demo: works on a machine with no RDMA NIC and no GPU, by running real verbs programs on the
# software NIC (a test device: tools/softnic/). It records
#   1. examples/ring_allreduce with 4 ranks over the software NIC, with an injected PFC-like pause,
#   2. rdma-core's own ibv_rc_pingpong (server + client), unmodified,
# then prints the report and writes a Perfetto trace and an HTML report.
set -eu
B=${RS_BUILD:-$(pwd)/build}
TOP=${RS_TOP:-$(pwd)}
OUT=${DEMO_OUT:-$TOP/demo-out}
RS="$B/railscope"
export LD_LIBRARY_PATH="$B/softnic${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SOFTNIC_DIR="$(mktemp -d /tmp/softnic-demo.XXXXXX)"
trap 'rm -rf "$SOFTNIC_DIR"' EXIT

rm -rf "$OUT"
mkdir -p "$OUT"
echo "== railscope demo (software NIC 'softnic0': a test device, not hardware) =="
echo
echo "-- 1. ring AllReduce, 4 ranks, 2 Gb/s link, a 5 ms pause every 50 ms --"
SOFTNIC_RATE_GBPS=2 SOFTNIC_PAUSE=50:5 \
    "$RS" record -o "$OUT/ring" -- "$B/examples/ring_allreduce" -n 4 -s 1048576 -i 30
echo
echo "-- 2. ibv_rc_pingpong (rdma-core's own example, unmodified) --"
if command -v ibv_rc_pingpong >/dev/null 2>&1; then
    port=$((20000 + $$ % 20000))
    "$RS" record -o "$OUT/pingpong" -- ibv_rc_pingpong -d softnic0 -g 0 -p $port -n 200 > "$OUT/pingpong-server.log" 2>&1 &
    spid=$!
    sleep 0.5
    "$RS" record -o "$OUT/pingpong" -- ibv_rc_pingpong -d softnic0 -g 0 -p $port -n 200 localhost
    wait $spid
else
    echo "ibv_rc_pingpong not installed (Debian package ibverbs-utils): skipped"
fi
echo
echo "-- 3. the report --"
"$RS" report --html "$OUT/ring-report.html" "$OUT/ring" || true
"$RS" export -q --findings --format perfetto -o "$OUT/ring.pftrace" "$OUT/ring"
"$RS" export -q --format chrome -o "$OUT/ring.json" "$OUT/ring"
"$RS" export -q --format kineto -o "$OUT/ring-kineto" "$OUT/ring"
echo
echo "Files:"
echo "  traces          $OUT/ring/ and $OUT/pingpong/   (railscope dump / info)"
echo "  Perfetto trace  $OUT/ring.pftrace   -> open https://ui.perfetto.dev and drag the file in"
echo "  Chrome JSON     $OUT/ring.json      -> chrome://tracing or ui.perfetto.dev"
echo "  Kineto JSON     $OUT/ring-kineto/   -> one file per rank, loadable by Holistic Trace Analysis"
echo "  HTML report     $OUT/ring-report.html  -> open in any browser (self-contained, works offline)"
