#!/usr/bin/env python3
"""Checks dump --json's enum names (issue 18 item 6) in a JSON Lines dump of `mkhostile enums`.
  1. consistency: every FIELD_name sits beside a numeric FIELD, and one (kind, field, number) always has
     the same name;
  2. coverage: every (kind, field) of formats/rtrace_enums.h's RS_ENUM_FIELDS shows a name somewhere;
  3. oracles independent of our table, where their headers are installed: the ibv_* enums of
     <infiniband/verbs.h> (IBV_WR_x -> "x") and CUPTI's memcpy/memory/synchronisation kinds
     (cupti_activity.h: CUPTI_ACTIVITY_MEMCPY_KIND_HTOD -> "HtoD", compared upper-case without "_" / " ").
Prints problems and exits 1; prints a summary line on success."""
import json
import os
import re
import sys

dump, top = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(dump, encoding="utf-8") if l.strip()]
bad = []

# 1. consistency
seen = {}
for r in rows:
    for k, v in r.items():
        if k.endswith("_name") and k[:-5] in r and isinstance(r[k[:-5]], int):
            key = (r["kind"], k[:-5], r[k[:-5]])
            if seen.setdefault(key, v) != v:
                bad.append("%s: two names %r, %r" % (key, seen[key], v))
        elif k.endswith("_name") and not isinstance(v, str):
            bad.append("%s.%s is not a name: %r" % (r["kind"], k, v))

# 2. coverage of RS_ENUM_FIELDS
hdr = open(os.path.join(top, "formats/rtrace_enums.h")).read()
block = hdr[hdr.index("#define RS_ENUM_FIELDS(X)"):]
block = block[: block.index("/* clang-format on */")]
fields = re.findall(r"X\((\w+), (\w+), (\w+)\)", block)
have = {(k, f) for (k, f, _) in seen}
for kind, field, lst in fields:
    if (kind.lower(), field) not in have:
        bad.append("no %s_name in any %s event (list %s)" % (field, kind.lower(), lst))

# 3. oracles
def c_enum(text, name):
    m = re.search(r"enum\s+%s\s*\{(.*?)\}" % name, text, re.S)
    if not m:  # typedef enum { ... } name;
        m = re.search(r"typedef\s+enum\s*\{([^{}]*?)\}\s*%s\s*;" % name, text, re.S)
    if not m:
        return None
    out, v = {}, -1
    for item in re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S).split(","):
        item = item.strip()
        if not item:
            continue
        if "=" in item:
            n, e = [x.strip() for x in item.split("=", 1)]
            try:
                v = int(eval(e.replace("<<", "<<"), {}, {}))
            except Exception:
                continue
        else:
            n, v = item, v + 1
        out[v] = n
    return out

checked = 0
def oracle(kind, field, table, prefix, norm=lambda s: s):
    global checked
    for r in rows:
        if r["kind"] != kind or field not in r:
            continue
        v = r[field]
        if v in table and table[v].startswith(prefix):
            want = norm(table[v][len(prefix):])
            got = r.get(field + "_name")
            if got is None or norm(got) != want:
                bad.append("%s.%s = %d: %r, expected %r" % (kind, field, v, got, want))
            checked += 1

verbs = "/usr/include/infiniband/verbs.h"
if os.path.exists(verbs):
    t = open(verbs).read()
    for kind, field, enum, prefix in [("ibv_post_send", "opcode", "ibv_wr_opcode", "IBV_WR_"),
                                      ("ibv_wc", "opcode", "ibv_wc_opcode", "IBV_WC_"),
                                      ("ibv_wc", "status", "ibv_wc_status", "IBV_WC_"),
                                      ("ibv_create_qp", "qp_type", "ibv_qp_type", "IBV_QPT_"),
                                      ("ibv_modify_qp", "state", "ibv_qp_state", "IBV_QPS_"),
                                      ("ibv_modify_qp", "path_mtu", "ibv_mtu", "IBV_MTU_")]:
        e = c_enum(t, enum)
        if e:
            oracle(kind, field, e, prefix)
        else:
            bad.append("cannot parse %s in verbs.h" % enum)
cupti = None
for d in ("/usr/local/cuda/include", "/usr/local/cuda/extras/CUPTI/include"):
    if os.path.exists(os.path.join(d, "cupti_activity.h")):
        cupti = open(os.path.join(d, "cupti_activity.h")).read()
        break
if cupti:
    up = lambda s: s.upper().replace("_", "").replace(" ", "")
    for kind, field, enum, prefix in [("cuda_memcpy", "copy_kind", "CUpti_ActivityMemcpyKind", "CUPTI_ACTIVITY_MEMCPY_KIND_"),
                                      ("cuda_memcpy", "src_kind", "CUpti_ActivityMemoryKind", "CUPTI_ACTIVITY_MEMORY_KIND_"),
                                      ("cuda_memset", "memory_kind", "CUpti_ActivityMemoryKind", "CUPTI_ACTIVITY_MEMORY_KIND_"),
                                      ("cuda_sync", "type", "CUpti_ActivitySynchronizationType",
                                       "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_")]:
        e = c_enum(cupti, enum)
        if e:
            oracle(kind, field, e, prefix, up)
        else:
            bad.append("cannot parse %s in cupti_activity.h" % enum)

for b in bad[:20]:
    print(b)
if bad:
    sys.exit(1)
print("%d (kind, field, value) names, %d enum fields covered, %d checked against verbs.h/cupti_activity.h"
      % (len(seen), len(fields), checked))
