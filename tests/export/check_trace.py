#!/usr/bin/env python3
"""Checks railscope exports against the rules viewers rely on; prints a short normalised summary.

    check_trace.py perfetto FILE...   protobuf wire decode (no protobuf package needed)
    check_trace.py chrome FILE...     Chrome trace-event JSON
    check_trace.py kineto DIR         Kineto-flavoured JSON, one file per rank (what HTA needs)

Rules (reference F1, F3, F4, F5 in ../shared/reference/peers-and-formats.md):
  perfetto: every track_uuid is declared by a TrackDescriptor first; every name/category/annotation iid is
    interned earlier on its sequence; per track, slices nest (BEGIN/END balanced, an END never before its
    BEGIN; a complete slice, written as a BEGIN packet followed by its END packet, is closed by its own END
    after trace_processor's sort by timestamp, not by a later slice's: no partial overlap); counters only on
    counter tracks; every flow id has at least two ends.
  chrome/kineto: parses as JSON; B/E balanced per (pid, tid) and ordered in file order; X events of one
    (pid, tid) nest (no partial overlap; compared in exact integer nanoseconds, as Perfetto's importer rounds
    ts/dur: float sums of 3-decimal microseconds past 2^24 us, 16.8 s, differ by more than any epsilon); every flow "s" has an "f" with the same (cat, name, id) and the
    "f" is not earlier; counters ordered per (pid, name); ts/dur are numbers >= 0.
  kineto: distributedInfo.rank as HTA reads it, kernel/gpu_memcpy/cuda_runtime categories, GPU events with
    a stream, "Memcpy"/"Memset" names for copies, NCCL kernels starting with "nccl", ac2g flows keyed by the
    correlation id of a runtime call and its GPU work.
Exit status 1 with the first violations listed when a rule is broken.
"""
import collections
import decimal
import glob
import json
import os
import re
import struct
import sys

errors = []


def err(msg):
    if len(errors) < 20:
        errors.append(msg)


# ---------------------------------------------------------------- protobuf wire format
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    # varint() inlined for the one-byte keys, values and lengths nearly every field has (this loop is most of a
    # perfetto check: ~15 M varints in s2_ib's export, tests/export/fixtures.t)
    i, end, out = 0, len(b), []
    append = out.append
    while i < end:
        key = b[i]
        i += 1
        if key & 0x80:
            key, i = varint(b, i - 1)
        wt = key & 7
        if wt == 0:
            v = b[i]
            i += 1
            if v & 0x80:
                v, i = varint(b, i - 1)
        elif wt == 2:
            n = b[i]
            i += 1
            if n & 0x80:
                n, i = varint(b, i - 1)
            v = b[i:i + n]
            i += n
        elif wt == 1:
            v = struct.unpack_from("<Q", b, i)[0]
            i += 8
        elif wt == 5:
            v = struct.unpack_from("<I", b, i)[0]
            i += 4
        else:
            raise ValueError("bad wire type %d" % wt)
        append((key >> 3, wt, v))
    return out


def perfetto(path):
    data = open(path, "rb").read()
    tracks = {}          # uuid -> (name, is_counter)
    names, cats, keys = set(), set(), set()
    events = []          # (ts, order, type, track, name)
    pair_end = {}        # order of a BEGIN -> ts of its own END (complete slices)
    flows = collections.Counter()
    npk = 0
    for f, wt, pk in fields(data):
        if f != 1 or wt != 2:
            err("top level field %d is not Trace.packet" % f)
            continue
        npk += 1
        p = {}
        te = None
        for ff, fwt, v in fields(pk):
            if ff == 12:
                for g, _, e in fields(v):
                    d = dict((a, b) for a, _, b in fields(e))
                    {1: cats, 2: names, 3: keys}[g].add(d[1])
            elif ff == 11:
                te = v
            elif ff == 60:
                d = {}
                for a, _, b in fields(v):
                    d[a] = b
                tracks[d[1]] = (d.get(2, b"").decode(), 8 in d)
            else:
                p[ff] = v
        if te is None:
            continue
        ts = p.get(8)
        if ts is None:
            err("track event without timestamp")
            continue
        t = {"flows": []}
        for a, _, b in fields(te):
            if a == 9:
                t["type"] = b
            elif a == 11:
                t["track"] = b
            elif a == 10:
                t["name"] = b
                if b not in names:
                    err("name_iid %d used before it is interned" % b)
            elif a == 3:
                if b not in cats:
                    err("category iid %d used before it is interned" % b)
            elif a == 4:
                d = dict((x, y) for x, _, y in fields(b))
                if d.get(1) not in keys:
                    err("annotation name iid %s not interned" % d.get(1))
            elif a in (47, 48):
                t["flows"].append(b)
        tr = t.get("track")
        if tr not in tracks:
            err("track_uuid %s used before its TrackDescriptor" % tr)
            continue
        typ = t.get("type")
        if typ == 4 and not tracks[tr][1]:
            err("counter value on non-counter track %s" % tracks[tr][0])
        if typ in (1, 2, 3) and tracks[tr][1]:
            err("slice on counter track %s" % tracks[tr][0])
        for fl in t["flows"]:
            flows[fl] += 1
        if typ == 2 and events and events[-1][2] == 1 and events[-1][3] == tr and events[-1][0] <= ts:
            pair_end[len(events) - 1] = ts   # a complete slice: BEGIN then its END, back to back
        events.append((ts, len(events), typ, tr, t.get("name")))
    # nesting per track, in timestamp order (trace_processor sorts; ties keep file order)
    events.sort()
    open_ = collections.defaultdict(list)   # track -> stack of (BEGIN order, name)
    counts = collections.Counter()
    for ts, order, typ, tr, name in events:
        counts[typ] += 1
        if typ == 1:
            open_[tr].append((order, name))
        elif typ == 2:
            if not open_[tr]:
                err("END without BEGIN on track %s at %d" % (tracks[tr][0], ts))
                continue
            bo, bname = open_[tr].pop()
            want = pair_end.get(bo)
            if want is not None and want != ts:
                err("slice %s on track %s ends at %d, but an END at %d closes it (partial overlap)" % (
                    bname, tracks[tr][0], want, ts))
    for tr, st in open_.items():
        if st:
            err("%d slices never end on track %s" % (len(st), tracks[tr][0]))
    for fl, n in flows.items():
        if n < 2:
            err("flow %#x has a single end" % fl)
    print("packets %d tracks %d counter_tracks %d" % (npk, len(tracks), sum(1 for v in tracks.values() if v[1])))
    print("begin %d end %d instant %d counter %d flows %d" % (counts[1], counts[2], counts[3], counts[4], len(flows)))
    for name in sorted(v[0] for v in tracks.values()):
        print("track " + name)


# ---------------------------------------------------------------- JSON
_NUM = (int, float, decimal.Decimal)   # exact types: json.load makes no subclasses, and a bool is no number here


def num(v):
    return type(v) in _NUM and v >= 0


def ns(v):
    """Microseconds (int, float or the exact Decimal of the JSON text) as integer nanoseconds."""
    t = type(v)
    if t is int:
        return v * 1000
    if t is decimal.Decimal:
        return round(v * 1000)   # an int, rounded half to even as before
    return int(round(decimal.Decimal(v) * 1000))


def check_json_events(evs, where):
    be = collections.defaultdict(list)
    last_be = {}
    xs = collections.defaultdict(list)
    flows = collections.defaultdict(dict)
    last_c = {}
    counts = collections.Counter()
    for e in evs:
        ph = e.get("ph")
        counts[ph] += 1
        if ph == "M":
            if "name" not in e or "pid" not in e:
                err("%s: M event without name/pid" % where)
            continue
        if not num(e.get("ts")):
            err("%s: bad ts in %s" % (where, e))
            continue
        key = (e.get("pid"), e.get("tid"))
        ts = e["ts"]
        if ph in ("B", "E"):
            if key in last_be and ts < last_be[key]:
                err("%s: B/E out of order on %s at %s" % (where, key, ts))
            last_be[key] = ts
            if ph == "B":
                be[key].append(ts)
            elif not be[key]:
                err("%s: E without B on %s at %s" % (where, key, ts))
            else:
                be[key].pop()
        elif ph == "X":
            if not num(e.get("dur")):
                err("%s: X without dur: %s" % (where, e))
                continue
            xs[key].append((ns(ts), -ns(e["dur"]), e.get("name")))
        elif ph in ("s", "t", "f"):
            fk = (e.get("cat"), e.get("name"), e.get("id"))
            flows[fk][ph] = ts
        elif ph == "C":
            ck = (e.get("pid"), e.get("name"))
            if ck in last_c and ts < last_c[ck]:
                err("%s: counter %s goes back in time at %s" % (where, ck, ts))
            last_c[ck] = ts
            if not isinstance(e.get("args"), dict) or not e["args"]:
                err("%s: counter without args" % where)
        elif ph in ("i", "I", "n"):
            pass
        else:
            err("%s: unexpected ph %r" % (where, ph))
    for key, st in be.items():
        if st:
            err("%s: %d B without E on %s" % (where, len(st), key))
    for key, lst in xs.items():
        lst.sort()
        stack = []
        for ts, negdur, name in lst:
            end = ts - negdur
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack and end > stack[-1]:
                err("%s: X %r [%s, %s] ns overlaps its parent (ends %s) on %s" % (where, name, ts, end, stack[-1], key))
            stack.append(end)
    for fk, ends in flows.items():
        if "s" not in ends or "f" not in ends:
            err("%s: flow %s not paired (%s)" % (where, fk, "".join(sorted(ends))))
        elif ends["f"] < ends["s"]:
            err("%s: flow %s ends before it starts" % (where, fk))
    return counts, len(flows)


def chrome(paths):
    total = collections.Counter()
    nflows = 0
    for p in paths:
        doc = json.load(open(p, encoding="utf-8"), parse_float=decimal.Decimal)
        if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
            err("%s: no traceEvents list" % p)
            continue
        c, n = check_json_events(doc["traceEvents"], os.path.basename(p))
        total += c
        nflows += n
    print("events " + " ".join("%s=%d" % (k, total[k]) for k in sorted(total)) + " flows %d" % nflows)


COMM = re.compile(r"(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)")
KINETO_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "cuda_sync",
               "user_annotation", "cpu_instant_event", "ac2g", "rdma", "verbs", "nccl", "railscope"}


def kineto(d):
    files = sorted(glob.glob(os.path.join(d, "*.json")))
    if not files:
        err("%s: no JSON files" % d)
    ranks = []
    for p in files:
        text = open(p, encoding="utf-8").read()
        m = re.search(r'"rank":\s+(\d+)', text)   # how HTA's trace_file.py finds the rank
        if not m:
            err("%s: no \"rank\": N for HTA" % p)
        else:
            ranks.append(int(m.group(1)))
        doc = json.loads(text, parse_float=decimal.Decimal)
        for k in ("schemaVersion", "distributedInfo", "traceEvents", "baseTimeNanoseconds"):
            if k not in doc:
                err("%s: missing %s" % (p, k))
        evs = doc.get("traceEvents", [])
        check_json_events(evs, os.path.basename(p))
        corr_cpu, corr_gpu = set(), set()
        seen = collections.Counter()
        for e in evs:
            if e.get("ph") != "X":
                continue
            cat, name, args = e.get("cat"), e.get("name", ""), e.get("args", {})
            if cat not in KINETO_CATS:
                err("%s: category %r unknown to Kineto/HTA" % (p, cat))
            seen[cat] += 1
            if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
                if "stream" not in args or "correlation" not in args or "device" not in args:
                    err("%s: GPU event without stream/device/correlation: %s" % (p, name))
                if e.get("pid") != args.get("device") or e.get("tid") != args.get("stream"):
                    err("%s: GPU event not on pid=device, tid=stream: %s" % (p, name))
                corr_gpu.add(args.get("correlation"))
            if cat == "gpu_memcpy" and not name.startswith("Memcpy"):
                err("%s: copy named %r (HTA wants Memcpy...)" % (p, name))
            if cat == "gpu_memset" and not name.startswith("Memset"):
                err("%s: memset named %r" % (p, name))
            if cat == "cuda_runtime":
                corr_cpu.add(args.get("correlation"))
        ncomm = sum(1 for e in evs if e.get("cat") == "kernel" and COMM.match(e.get("name", "")))
        ac2g = {e["id"] for e in evs if e.get("ph") == "s" and e.get("cat") == "ac2g"}
        if not ac2g <= corr_cpu or not ac2g <= corr_gpu:
            err("%s: ac2g flow ids are not runtime/GPU correlation ids" % p)
        print("%s rank %s kernels %d (communication %d) memcpy %d runtime %d ac2g %d" % (
            os.path.basename(p), m.group(1) if m else "?", seen["kernel"], ncomm, seen["gpu_memcpy"],
            seen["cuda_runtime"], len(ac2g)))
    if len(set(ranks)) != len(ranks):
        err("duplicate ranks across files: %s" % ranks)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    mode = sys.argv[1]
    try:
        if mode == "perfetto":
            for path in sys.argv[2:]:
                perfetto(path)
        elif mode == "chrome":
            chrome(sys.argv[2:])
        elif mode == "kineto":
            kineto(sys.argv[2])
        else:
            print(__doc__)
            return 2
    except (ValueError, IndexError, KeyError, json.JSONDecodeError, UnicodeDecodeError, struct.error) as e:
        err("cannot decode: %s: %s" % (type(e).__name__, e))
    for e in errors:
        print("VIOLATION: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
