#!/bin/bash
# Several threads on one context (null provider): every post and completion of every thread is recorded,
# on the thread that made it, while the main thread churns MR registrations (lock-free MR look-ups racing
# the table's writer); the posts' memory kind stays right throughout.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/vlib.sh"
need_build verbs/vt_mt verbs/nullprov/libibverbs.so.1
plan 5
out=$(on_null traced "$T/tr" "$VT/vt_mt" -t 4 -n 3000 2>&1)
d=$(vdump "$T/tr")
is "$(summary "$out" wcs)" 12000 "vt_mt completed every round"
is "$(nkind "$d" ibv_post_send)" 12000 "every post of 4 threads recorded"
is "$(nkind "$d" ibv_wc)" 12000 "every completion of 4 threads recorded"
is "$(printf '%s\n' "$d" | grep '^ibv_post_send ' | grep -oE ' tid=[0-9]+' | sort -u | wc -l)" 4 "posts attributed to their 4 threads"
is "$(nkind "$d" ibv_post_send 'mem=1 ')" 12000 "memory kind found for every post during MR churn"
