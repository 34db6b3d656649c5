#!/usr/bin/env python3
"""The bandwidth counters of a Chrome-JSON export (railscope export --format json): for each counter track
"... tx GB/s" of each process, its maximum and the bytes it integrates to (one value per 1 ms bin, in
GB/s = bytes/ns). Prints "max_gbytes_per_s total_bytes" over all QP tracks: the largest value of any track,
and the sum of the QP tracks' bytes."""
import json
import sys

d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
bin_ns = float(sys.argv[2]) if len(sys.argv) > 2 else 1e6
mx, qp_bytes = 0.0, 0.0
for e in ev:
    if e.get("ph") != "C" or "tx GB/s" not in e.get("name", ""):
        continue
    for v in e.get("args", {}).values():
        mx = max(mx, float(v))
        if e["name"].startswith("QP "):
            qp_bytes += float(v) * bin_ns
print(f"{mx:.6f} {qp_bytes:.0f}")
