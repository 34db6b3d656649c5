#!/usr/bin/env python3
"""Check `railscope report --json` of one multi-rank scenario (tests/gpu/scenarios.sh) against its truth.

usage: check_scen.py [--straggler-only] SCEN_DIR [REPORT_JSON]
SCEN_DIR holds truth.json (written by the scenario scripts themselves) and trace/ (the .rtrace files).
Without REPORT_JSON, runs `$RS_CLI report --json SCEN_DIR/trace` (RS_CLI from the environment, else
build/railscope). --straggler-only: the straggler checks alone (tests/gpu/fixtures.t's checks of this
checker, on altered reports). Prints one line per check, "PASS|FAIL <id>: got ... expected ...", then a SUMMARY line
(JSON); exit 1 on any FAIL. Check ids are stable ("<scenario>:<check>"), tests/gpu/fixtures.t marks the
ones listed in tests/gpu/fixtures/TODO as TAP TODO.

Checks (issue 15 "Done when"):
  steps            report nsteps == the steps the script ran (its NVTX ranges, whatever their name form)
  straggler_named  the analyzer's own verdict, its peer-wait finding's structured verdict (findings[].straggler:
                   rank | tie | none, rank, tied_ranks), names the planted straggler (by pid -> rank); a tie
                   (no rank named, the ranks within the tie margin listed, analyzer/analyze_verdict.c) or no
                   rank named fails, and is said as such; with no planted straggler: the finding names no rank
                   (none, spread or a tie) and no persistent straggler. A verdict missing (no findings[].straggler)
                   or contradicting itself (a tie of fewer than two ranks or of ranks not in the run, a named
                   rank other than the finding's) fails either way
  straggler_wait   CPU stragglers: the other ranks' peer_wait per step within 10 % of how late the straggler
                   arrived at the AllReduces (truth.json arrival_lag_ms: DDP comm-hook times per rank, steps
                   after the first two, compared with the report's per-step peer_wait of the same steps;
                   older truth files: the sleep the script measured) (GPU stragglers: printed as INFO only: the ranks share one GPU, so the extra
                   matmuls slow the others' kernels as well)
  transport_trace  the trace holds NCCL_TRANSPORT events naming the transport NCCL logged (recording side)
  inter_node       the ranks are separate NCCL "nodes" (NCCL_HOSTID) talking over NET: exposed intra-node
                   time <= 5 % of step time
  gpudirect        verdict NOT USED (Socket, or IB from host memory)
  h2d_kind         pageable ranks copy their batches from pageable memory, pinned ranks from pinned memory
                   (pageable bytes there: the model's parameters, once)
  h2d_bytes        each rank's H2D bytes >= steps x bytes per step
  verbs_traced     NET/IB scenarios: every rank's NCCL IB transport traffic is in the trace (verbs WRs posted,
                   all from host memory: softnic has no GPU memory registration)
  gpu_program      the text report does not call these PyTorch/NCCL ranks a host-memory program (it did when no
                   kernel fell in a sampling window and NCCL staged through host memory: s2_ib)
  verbs_errors     no verbs error reported where none was planted (NCCL's capability probes, e.g. the
                   zero-length dma-buf registration it expects to fail, are not errors)"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "nccl"))
import tq  # noqa: E402

RESULTS = []


def check(cid, ok, got, want=""):
    RESULTS.append(dict(id=cid, ok=bool(ok), got=got, want=want))
    print(f"{'PASS' if ok else 'FAIL'} {cid}: got {got}" + (f"  expected {want}" if want != "" else ""), flush=True)


def straggler_verdict(rep):
    """The analyzer's straggler verdict: its peer-wait finding's structured verdict (findings[].straggler, docs/
    report.md "JSON"). ("rank", [N]) when it names rank N; ("tie", [ranks]) when the costliest late ranks tie
    (within its tie_margin); ("none", []) when it names no rank (no finding, or the wait spread over ranks);
    ("bad", why) when the verdict is missing or contradicts itself or the run: that fails every straggler
    check. The words are not read: every report checked here is made by this checkout's railscope (fixtures.t,
    scenarios.sh, by hand with $RS_CLI), so a report without the fields is stale, not one to guess from.
    The straggler table's first entry is not the verdict: it has a rank in a tie too (the sort's first)."""
    f = next((x for x in rep.get("findings") or [] if x.get("category") == "peer_wait"), None)
    if f is None:
        return "none", []
    sv = f.get("straggler")
    if not isinstance(sv, dict):
        return "bad", "no structured verdict in the peer-wait finding (findings[].straggler; rerun the report)"
    kind, rank, tied, frank = sv.get("verdict"), sv.get("rank"), sv.get("tied_ranks"), f.get("rank")
    if not isinstance(tied, list) or not all(type(x) is int for x in tied):
        return "bad", f"tied_ranks {tied!r} is not a list of ranks"
    run = {r.get("rank") for r in rep.get("ranks") or []}
    if kind == "rank":
        if type(rank) is not int or rank < 0 or rank not in run or frank != rank or tied:
            return "bad", f"verdict rank {rank!r} contradicts the finding's rank {frank!r}, tied_ranks {tied}"
        return "rank", [rank]
    if kind == "tie":
        if len(set(tied)) < 2 or len(set(tied)) != len(tied) or not set(tied) <= run:
            return "bad", f"a tie without two distinct ranks of the run ({tied}; run {sorted(run)})"
        if rank != -1 or frank != -1:
            return "bad", f"a tie that names rank {rank!r} (finding {frank!r})"
        return "tie", sorted(tied)
    if kind == "none":
        if tied or rank != -1 or frank != -1:
            return "bad", f"verdict none with rank {rank!r} (finding {frank!r}), tied_ranks {tied}"
        return "none", []
    return "bad", f"unknown verdict {kind!r}"


def verdict_str(v):
    kind, ranks = v
    if kind == "rank":
        return f"rank {ranks[0]}"
    if kind == "bad":
        return f"an unusable verdict: {ranks}"
    return f"a tie of ranks {ranks} (no rank named)" if kind == "tie" else "no rank named"


def cli():
    return os.environ.get("RS_CLI") or os.path.join(os.environ.get("RS_BUILD", "build"), "railscope")


def check_stragglers(name, t, rep, by_rank):
    strag = rep.get("stragglers") or []
    table = [(x["rank"], x.get("persistent"), x.get("late_count"), x.get("of")) for x in strag][:3]
    verdict = straggler_verdict(rep)
    s = t.get("straggler")
    steps = t["steps"]
    if s:
        # the report's rank numbers are NCCL ranks where it knows them; map through pids when they differ
        want = s["rank"]
        check(f"{name}:straggler_named", verdict == ("rank", [want]),
              f"{verdict_str(verdict)} (table: {table})",
              f"rank {want} named ({s['kind']}, {s.get('measured_ms')} ms/step planted)")
        planted = s.get("measured_ms")
        waits = {}
        for rk, r in sorted(by_rank.items()):
            if rk == want:
                continue
            # the same steps as the truth (arrival_lag_ms: steps after the first two): the first DDP iterations
            # also wait for NCCL's connection setup and DDP's bucket rebuild (s4_cpu rank 3: 97.9 ms in step
            # 0), real peer wait but not the straggler's lag
            per = [x.get("attribution", {}).get("peer_wait", 0) for x in (r.get("steps") or [])][2:]
            if per and s.get("arrival_lag_ms"):
                waits[rk] = round(1e3 * sum(per) / len(per), 2)
            else:
                n = r.get("nsteps") or steps
                waits[rk] = round(1e3 * r.get("attribution", {}).get("peer_wait", 0) / max(n, 1), 2)
        lag = s.get("arrival_lag_ms")  # measured arrival lag per other rank (newer truth files)
        if lag:
            want_w = {int(k): v for k, v in lag.items()}
            ok = bool(waits) and all(rk in want_w and abs(w - want_w[rk]) <= 0.10 * want_w[rk]
                                     for rk, w in waits.items())
        else:
            want_w = planted
            ok = bool(waits) and planted and all(abs(w - planted) <= 0.10 * planted for w in waits.values())
        if s["kind"] == "cpu":
            check(f"{name}:straggler_wait", ok, f"peer_wait ms/step {waits}",
                  f"{want_w} +- 10 % (" + ("the straggler's measured arrival lag; " if lag else "") +
                  f"planted sleep {planted} ms)")
        else:  # all ranks share the one GPU: the extra matmuls slow the others' kernels too, not only their wait
            print(f"INFO {name}:straggler_wait: peer_wait ms/step {waits}, extra GPU time {planted} ms/step "
                  "(not checked: the ranks share one GPU)", flush=True)
    else:
        pers = [x["rank"] for x in strag if x.get("persistent", True)]
        check(f"{name}:straggler_named", verdict[0] in ("none", "tie") and not pers,
              f"{verdict_str(verdict)}, persistent {pers}", "no rank named, no persistent straggler (none planted)")


def summary(name):
    bad = [r["id"] for r in RESULTS if not r["ok"]]
    print("SUMMARY " + json.dumps(dict(scenario=name, checks=len(RESULTS), failed=bad)), flush=True)
    return 1 if bad else 0


def main():
    args = sys.argv[1:]
    straggler_only = bool(args) and args[0] == "--straggler-only"
    if straggler_only:
        args = args[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    d = args[0]
    with open(os.path.join(d, "truth.json")) as f:
        t = json.load(f)
    name = t["scenario"]
    trace = os.path.join(d, "trace")
    if len(args) > 1:
        with open(args[1]) as f:
            rep = json.load(f)
    else:
        p = subprocess.run([cli(), "report", "--json", trace], capture_output=True, text=True)
        try:
            rep = json.loads(p.stdout)
        except ValueError:
            check(f"{name}:report", False, f"exit {p.returncode}, {p.stderr.strip()[:200]}", "a JSON report")
            rep = {}
    pid2rank = {int(k): v for k, v in t["pids"].items()}
    rranks = rep.get("ranks", [])
    by_rank = {}
    for r in rranks:
        if r.get("pid") in pid2rank:
            by_rank[pid2rank[r["pid"]]] = r
    steps = t["steps"]

    check(f"{name}:steps", rep.get("nsteps") == steps,
          f"{rep.get('nsteps')} ({rep.get('step_source')})", f"{steps} ({t['nvtx_form']!r} NVTX ranges)")

    check_stragglers(name, t, rep, by_rank)
    if straggler_only:
        return summary(name)

    # what NCCL logged; a scenario run without NCCL_DEBUG (the tracer's own capture) has only the expectation
    logged = t["transport"].get("nccl_logged") or [t["transport"]["expected"]]
    try:
        evs = tq.load(trace, cli())
        tr = sorted({e.get("via", "") for e in evs if e["kind"] == "nccl_transport" and e.get("channel", -1) >= 0})
        kinds = sorted({"/".join(v.split("/")[:2]) if v.startswith("NET/") else v.split("/")[0] for v in tr})
        check(f"{name}:transport_trace", bool(kinds) and kinds == logged, f"{kinds} ({len(tr)} distinct)",
              f"{logged} (NCCL's own log)")
    except subprocess.CalledProcessError as e:
        check(f"{name}:transport_trace", False, f"dump failed: {e}", f"{logged}")

    att = rep.get("attribution_per_step", {})
    step_s = rep.get("step_mean_s") or 0
    intra = att.get("intra_node_exposed", 0)
    check(f"{name}:inter_node", step_s > 0 and intra <= 0.05 * step_s,
          f"intra-node exposed {intra * 1e3:.2f} ms of {step_s * 1e3:.2f} ms/step", "<= 5 % (all hops NET)")

    gd = rep.get("gpudirect", {}).get("verdict")
    check(f"{name}:gpudirect", gd == t.get("gpudirect", "NOT USED"), gd, t.get("gpudirect", "NOT USED"))

    per = t["h2d_bytes_per_step"]
    kind_ok, bytes_ok, got_k, got_b = True, True, {}, {}
    for rk in range(t["world"]):
        r = by_rank.get(rk)
        pg = r.get("h2d_pageable_bytes", 0) if r else None
        pn = r.get("h2d_pinned_bytes", 0) if r else None
        got_k[rk] = (pg, pn)
        if r is None:
            kind_ok = bytes_ok = False
            continue
        # the model's parameters go to the GPU once from pageable memory (grad_bytes of them) on every rank
        if rk in t["pageable_ranks"]:
            kind_ok &= pg >= steps * per
        else:
            kind_ok &= pg <= t["grad_bytes"] * 1.05 + (1 << 20) and pn >= steps * per
        bytes_ok &= pg + pn >= steps * per
        got_b[rk] = pg + pn
    check(f"{name}:h2d_kind", kind_ok, f"(pageable, pinned) bytes per rank {got_k}",
          f"pageable ranks {t['pageable_ranks']}: >= {steps} x {per} B pageable; the others that pinned and "
          f"<= {t['grad_bytes']} B pageable (the model, once)")
    check(f"{name}:h2d_bytes", bytes_ok, f"{got_b}", f">= {steps * per} per rank")

    if "NET/IB" in logged:
        posts = {rk: (by_rank[rk].get("gpudirect", {}).get("posts", 0),
                      by_rank[rk].get("gpudirect", {}).get("posted_bytes", {}).get("device", 0))
                 for rk in range(t["world"]) if rk in by_rank}
        check(f"{name}:verbs_traced", len(posts) == t["world"] and all(n > 0 and dev == 0 for n, dev in posts.values()),
              f"(WRs, bytes from GPU memory) per rank {posts}", "every rank > 0 WRs, 0 B from GPU memory")
    ve = {r["rank"]: r.get("verbs_errors", {}) for r in rep.get("ranks", [])}
    nerr = {rk: sum(v.get(k, 0) for k in ("create_fail", "post_fail", "wc_error", "wc_flush")) for rk, v in ve.items()}
    check(f"{name}:verbs_errors", rep.get("verbs_errors", 0) == 0 and not any(nerr.values()),
          f"{rep.get('verbs_errors', 0)} ({[v.get('first') for v in ve.values() if v.get('first')][:1]})",
          "0 (none planted)")

    txt = subprocess.run([cli(), "report", os.path.join(d, "trace")], capture_output=True, text=True).stdout
    gd_line = next((x for x in txt.splitlines() if x.startswith("GPUDirect RDMA:")), "")
    check(f"{name}:gpu_program", bool(gd_line) and "host-memory program" not in gd_line, gd_line or "(no line)",
          "a GPU program (no 'host-memory program')")

    return summary(name)


if __name__ == "__main__":
    sys.exit(main())
