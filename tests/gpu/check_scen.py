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
                   rank named fails, and is said as such (a GPU straggler the script's own hook times judge
                   not persistently late by the same rule, truth.json measured_late: no rank named with it the
                   costliest late rank passes too: the ranks share one GPU); with no planted straggler: the finding names no rank
                   (none, spread or a tie) and no persistent straggler, except a rank the script's own DDP hook
                   times show persistently late by the same rule (truth.json measured_late: two processes
                   sharing one GPU need not arrive together; older truth files: none). A verdict missing (no findings[].straggler)
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
                   zero-length dma-buf registration it expects to fail, are not errors)
  byhand_entries   a scenario launched with LD_PRELOAD alone (launcher "preload"): NCCL's profiler plugin, the NVTX
                   and the CUDA injection were entered (their events are in the trace), as under railscope record
  noplugin_keys    s2_noplugin (NCCL_PROFILER_PLUGIN=none): the report says its collectives come from the API calls,
                   and no collective record lacks a communicator key

Several planted late ranks (truth.json "stragglers" and "straggler_model", tests/gpu/scen_truth.py multi_truth;
"straggler" is null there), instead of straggler_named/straggler_wait above (check_multi below):
  straggler_named  the verdict (findings[].straggler) is what the documented rule (analyzer/analyze_verdict.c:
                   a rank named when it costs at least half of the category and no other late rank within 5 % of
                   it, a tie of those within 5 % when together at least half) gives for the late ranks' costs the
                   truth predicts (the Shapley split of the measured waits, straggler_model.cost_ms), the tie margin
                   taken as 2, 5 and 8 % and the half as 47, 50 and 53 % (the model's costs are good to ~1.5 %
                   each, so their ratio to ~3 %): near a boundary either side passes, away from it only one;
                   whatever the margins, only planted ranks. Also passes: the rule applied to the report's own
                   costs of the planted ranks when each passes straggler_cost (the model leaves the set-up steps
                   out, the analyzer counts them)
  stragglers_late  the straggler table (stragglers[]) lists every planted rank as late in most of its collectives,
                   its mean lateness (mean_late_s: after the bulk, the lower median of the arrivals) within 10 %
                   + 1 % of the step of its measured lag after the bulk (lag_vs_bulk_ms); persistent where its
                   predicted cost is clearly (by 25 %) above or below 2 % of the step (AN_STRAGGLER_MIN_COST)
  straggler_cost   each planted rank's cost (stragglers[].cost_per_step_s) is its predicted Shapley cost over the
                   modelled steps +- 10 %, plus at most the waits of the steps the truth leaves out (the first
                   two: set-up waits the analyzer charges to whoever is late then), spread over the run's steps
  ontime_clear     no on-time rank is named, persistent, or late in more than half of its collectives
  straggler_wait   every rank's peer_wait per step (steps the truth models) within 10 % (at least 1 % of the step,
                   the analyzer's lateness threshold) of its predicted wait (straggler_model.wait_ms): the on-time
                   ranks wait for the last planted rank, the earlier planted ranks for the later ones"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "nccl"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tq  # noqa: E402
from scen_truth import TIE, predict_verdict  # noqa: E402

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
        # A GPU straggler shares the one GPU with the others: its extra matmuls hold their kernels back too, so how
        # late it reaches the AllReduces varies by run (session 18: 5.1 ms a step; session 24: 3.1 ms, the median
        # step's cost under 2 % of the step). When the script's own hook times judge it not persistently late by
        # the documented rule (truth.json measured_late), "no rank named" with it as the costliest late rank is
        # right too; naming another rank, a tie, or another costliest rank still fails.
        ml = (t.get("measured_late") or {}).get(str(want))
        costliest = max(strag, key=lambda x: x.get("cost_per_step_s") or 0)["rank"] if strag else None
        soft = s["kind"] == "gpu" and isinstance(ml, dict) and ml.get("persistent") is False
        ok = verdict == ("rank", [want]) or (soft and verdict == ("none", []) and costliest == want)
        check(f"{name}:straggler_named", ok,
              f"{verdict_str(verdict)} (table: {table})",
              f"rank {want} named ({s['kind']}, {s.get('measured_ms')} ms/step planted)" +
              (f", or no rank named with rank {want} the costliest: measured not persistently late (late at "
               f"{ml.get('late')} of {ml.get('of')} by {ml.get('mean_late_ms')} ms, costs {ml.get('cost_ms')} "
               f"ms/step, median step {ml.get('median_cost_ms')} ms)" if soft else ""))
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
        # Nothing planted, but the ranks share one GPU and need not arrive together: a rank the script's own hook
        # times show persistently late (truth.json measured_late, the analyzer's documented rule) may be named,
        # and only such a rank (older truth files: none may)
        pers = [x["rank"] for x in strag if x.get("persistent", True)]
        ml = t.get("measured_late") or {}
        meas = sorted(int(k) for k, v in ml.items() if v.get("persistent"))
        named_ok = verdict[0] in ("none", "tie") or (verdict[0] == "rank" and verdict[1][0] in meas)
        check(f"{name}:straggler_named", named_ok and set(pers) <= set(meas),
              f"{verdict_str(verdict)}, persistent {pers}",
              "none planted: no rank named and no persistent straggler" +
              (f", but for a rank measured persistently late ({meas}; measured: " +
               ", ".join(f"rank {k} late at {v['late']} of {v['of']} by {v['mean_late_ms']} ms, costs {v['cost_ms']}"
                         " ms/step" for k, v in sorted(ml.items())) + ")" if ml else ""))


def check_multi(name, t, rep, by_rank, r2t):
    """Several planted late ranks (see the docstring): the verdict, the straggler table, each late rank's cost and
    every rank's wait against the truth's model of the measured arrivals (tests/gpu/scen_truth.py multi_truth)."""
    P = sorted(e["rank"] for e in t["stragglers"])
    pl = {e["rank"]: e for e in t["stragglers"]}
    m = t.get("straggler_model") or {}
    cost = {int(k): v for k, v in (m.get("cost_ms") or {}).items()}
    step_ms = sum((t.get("step_ms_mean") or {0: 0}).values()) / max(len(t.get("step_ms_mean") or {0: 0}), 1)
    tr = lambda x: r2t.get(x, x)   # noqa: E731  report rank -> the truth's (scenario) rank

    strag = rep.get("stragglers") or []
    got = {tr(x["rank"]): x for x in strag}
    table = [(tr(x["rank"]), x.get("persistent"), x.get("late_count"), x.get("of"),
              round(1e3 * (x.get("cost_per_step_s") or 0), 2)) for x in strag][:4]
    kind, vr = straggler_verdict(rep)
    if kind in ("rank", "tie"):
        vr = sorted(tr(x) for x in vr)
    verdict = (kind, vr)
    # straggler_cost: over the modelled steps the Shapley share +- 10 %; the steps left out add at most their waits
    n = rep.get("nsteps") or t["steps"]
    used, first = m.get("steps_used") or 0, m.get("first_step_used") or 0
    mr = rep.get("mean_ranks") or t["world"] or 1
    early = 0.0
    for r in by_rank.values():
        early += sum(x.get("attribution", {}).get("peer_wait", 0) for x in (r.get("steps") or [])[:first])
    early = 1e3 * early / mr / max(n, 1)
    bad, said = [], []
    for r in P:
        x, c = got.get(r), cost.get(r)
        g = 1e3 * (x.get("cost_per_step_s") or 0) if x else None
        if c is None or g is None:
            bad.append(r)
            said.append(f"rank {r}: {'not listed' if g is None else 'no predicted cost'}")
            continue
        base = c * used / max(n, 1)
        lo, hi_ = 0.9 * base, 1.1 * base + early
        if not lo <= g <= hi_:
            bad.append(r)
        said.append(f"rank {r} {g:.2f} ms/step (want {lo:.2f}-{hi_:.2f}: {c} ms x {used}/{n} steps +- 10 %, "
                    f"+ <= {early:.2f} of steps 0-{first - 1})")
    cost_ok = not bad and bool(P)
    cost_said = "; ".join(said)

    # straggler_named: what the documented rule makes of the predicted costs, the margins widened by the model's error
    acc = []
    for tie in (TIE - 0.03, TIE, TIE + 0.03):
        for half in (0.47, 0.5, 0.53):
            v = predict_verdict(cost, tie, half) if cost else None
            if v is None:
                continue
            v = ("rank", [v["rank"]]) if v["verdict"] == "rank" else (v["verdict"], v["tied_ranks"])
            if v not in acc:
                acc.append(v)
    # Near a boundary the set-up steps (the model leaves them out, the analyzer counts them) can tip the verdict:
    # s4_two_eq on the H200 (session 23) had model costs 9 % apart over steps 2-29 and the analyzer's 2.7 % apart
    # over all 30 (rank 2 late in steps 0-1), a tie. So the rule applied to the report's own costs passes too, when
    # every planted rank's cost passes straggler_cost (no on-time rank counts: ontime_clear checks them).
    own = {tr(x["rank"]): 1e3 * (x.get("cost_per_step_s") or 0) for x in strag if tr(x["rank"]) in pl}
    own_v = predict_verdict(own) if cost_ok and own else None
    if own_v is not None:
        own_v = ("rank", [own_v["rank"]]) if own_v["verdict"] == "rank" else (own_v["verdict"], own_v["tied_ranks"])
    hi = max(cost.values()) if cost else 0
    ratios = {r: round(c / hi, 3) for r, c in cost.items()} if hi else {}
    planted = ", ".join("rank %d: %s ms" % (r, pl[r].get("planted_ms")) for r in P)
    check(f"{name}:straggler_named", bool(acc) and (verdict in acc or verdict == own_v) and verdict[0] != "bad",
          f"{verdict_str(verdict)} (table: rank, persistent, late, of, cost ms/step: {table})",
          (" or ".join(verdict_str(v) for v in acc) if acc else "a truth with straggler_model.cost_ms") +
          f" (planted {planted}; predicted cost ms/step "
          f"{cost}, of the costliest {ratios}; tie within {100 * TIE:.0f} % +- 3 %)" +
          (f"; or {verdict_str(own_v)}: the rule on the report's own costs, each within straggler_cost's margin"
           if own_v is not None and own_v not in acc else ""))
    check(f"{name}:straggler_cost", cost_ok, cost_said,
          "each late rank's Shapley share of the measured waits (mean over the run's ranks)")

    # stragglers_late: the table lists each planted rank, late in most collectives, by its lag after the bulk
    bad, said = [], []
    for r in P:
        x, want = got.get(r), pl[r].get("lag_vs_bulk_ms")
        if x is None:
            bad.append(r)
            said.append(f"rank {r} not listed")
            continue
        ml = 1e3 * (x.get("mean_late_s") or 0)
        ok = (x.get("late_count", 0) * 2 > x.get("of", 0) and want is not None and
              abs(ml - want) <= 0.10 * want + 0.01 * step_ms)
        pers = ""
        c = cost.get(r)
        if c is not None and step_ms > 0:
            q = c / (0.02 * step_ms)
            if q >= 1.25 or q <= 0.8:
                ok &= bool(x.get("persistent")) == (q >= 1.25)
                pers = f", persistent {x.get('persistent')} (predicted {q >= 1.25})"
            else:
                pers = (f", persistent {x.get('persistent')} (not checked: predicted cost {c} ms is {q:.2f} x 2 % "
                        "of the step)")
        if not ok:
            bad.append(r)
        said.append(f"rank {r} late at {x.get('late_count')} of {x.get('of')}, {ml:.2f} ms after the bulk "
                    f"(measured {want} ms){pers}")
    check(f"{name}:stragglers_late", not bad, "; ".join(said),
          "every planted rank late in most collectives, its mean lateness within 10 % + 1 % of the step "
          f"({0.01 * step_ms:.2f} ms) of its measured lag after the bulk")

    # ontime_clear: no on-time rank named, persistent or late in most of its collectives
    onl = [(r, x.get("persistent"), x.get("late_count"), x.get("of")) for r, x in sorted(got.items()) if r not in pl]
    named = [r for r in verdict[1] if r not in pl] if verdict[0] in ("rank", "tie") else []
    badon = [o for o in onl if o[1] or (o[2] or 0) * 2 > (o[3] or 0)]
    check(f"{name}:ontime_clear", not named and not badon,
          f"named {named}; on-time ranks in the table (rank, persistent, late, of): {onl}",
          "no on-time rank named, persistent, or late in more than half of its collectives")

    # straggler_wait: every rank's wait per step, the steps the truth models
    wm = {int(k): v for k, v in (m.get("wait_ms") or {}).items()}
    waits, ok = {}, bool(wm)
    for rk, r in sorted(by_rank.items()):
        per = [x.get("attribution", {}).get("peer_wait", 0) for x in (r.get("steps") or [])][first:]
        waits[rk] = round(1e3 * sum(per) / len(per), 2) if per else None
        w = wm.get(rk)
        ok &= w is not None and waits[rk] is not None and abs(waits[rk] - w) <= max(0.10 * w, 0.01 * step_ms)
    ok &= set(waits) == set(wm)
    check(f"{name}:straggler_wait", ok, f"peer_wait ms/step {waits}",
          f"{wm} +- 10 % (at least {0.01 * step_ms:.2f} ms: 1 % of the step; predicted from the measured arrivals)")


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

    if t.get("stragglers"):
        r2t = {r["rank"]: pid2rank[r["pid"]] for r in rranks if r.get("pid") in pid2rank}
        check_multi(name, t, rep, by_rank, r2t)
    else:
        check_stragglers(name, t, rep, by_rank)
    if straggler_only:
        return summary(name)

    # what NCCL logged; a scenario run without NCCL_DEBUG (the tracer's own capture) has only the expectation
    logged = t["transport"].get("nccl_logged") or [t["transport"]["expected"]]
    evs = []
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

    if name == "s2_noplugin":  # NCCL_PROFILER_PLUGIN=none: API-call collectives, keyed per communicator (session 26)
        warns = rep.get("warnings", [])
        check(f"{name}:noplugin_keys", any("without NCCL profiler records" in w for w in warns)
              and not any("without a communicator hash" in w for w in warns),
              f"{[w for w in warns if 'NCCL profiler' in w or 'communicator hash' in w][:2]}",
              "the no-plugin warning, and every collective record with a communicator key")
    elif t.get("launcher") == "preload":  # LD_PRELOAD alone: the library set its other entries itself (session 26)
        kinds = {e["kind"] for e in evs}
        want = {"nccl_prof_init", "nccl_coll", "nvtx_push", "cuda_kernel_window"}
        warn = [w for w in rep.get("warnings", []) if "without NCCL profiler records" in w]
        check(f"{name}:byhand_entries", want <= kinds and not warn, f"missing {sorted(want - kinds)}; {warn[:1]}",
              "profiler plugin, NVTX and CUPTI events as under railscope record")

    txt = subprocess.run([cli(), "report", os.path.join(d, "trace")], capture_output=True, text=True).stdout
    gd_line = next((x for x in txt.splitlines() if x.startswith("GPUDirect RDMA:")), "")
    check(f"{name}:gpu_program", bool(gd_line) and "host-memory program" not in gd_line, gd_line or "(no line)",
          "a GPU program (no 'host-memory program')")

    return summary(name)


if __name__ == "__main__":
    sys.exit(main())
