#!/bin/bash
# Receive queues tracked by object, QPs/CQs from mlx5 direct verbs (null provider + stand-in libmlx5), and
# contexts opened behind the exported opens (adopted at their first ibv_create_cq / ibv_alloc_pd):
# SRQs from ibv_create_srq and from the verbs_context create_srq_ex carry their own id into the receives
# posted to them; a WQ's ibv_post_wq_recv is traced (aux=2, qp_num = wq_num) with the provider's verdicts;
# mlx5dv_create_qp / mlx5dv_create_cq get the ibv_wr_* and cq_ex capture. The application sees exactly
# what it sees untraced.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/vlib.sh"
need_build railscope verbs/vt_rq verbs/vt_adopt verbs/nullprov/libibverbs.so.1 verbs/nullprov/libmlx5.so.1
plan 24
N=6
plain=$(on_null run_timeout 20 "$VT/vt_rq" -n $N 2>&1)
out=$(on_null traced "$T/rq" "$VT/vt_rq" -n $N 2>&1)
d=$(vdump "$T/rq")
like "$plain" "summary: srq_a=$N srq_b=$N sends=$N wq_recvs=$N dv_sends=$N dv_wcs=$N" "program ran untraced"
is "$out" "$plain" "transparency: same output traced (return values, errno, bad_wr)"

# SRQs
ida=$(printf '%s\n' "$d" | grep '^ibv_create_srq ' | grep ' ext=0' | grep -oE ' id=[0-9]+' | cut -d= -f2)
idb=$(printf '%s\n' "$d" | grep '^ibv_create_srq ' | grep ' ext=1' | grep -oE ' id=[0-9]+' | cut -d= -f2)
distinct_ids() { [ -n "$ida" ] && [ -n "$idb" ] && [ "$ida" -ge 2 ] && [ "$idb" -ge 2 ] && [ "$ida" != "$idb" ]; }
ok "ibv_create_srq (ext=0, id $ida) and create_srq_ex (ext=1, id $idb): distinct ids from 2" distinct_ids
is "$(nkind "$d" ibv_create_srq 'max_wr=128 ')$(nkind "$d" ibv_create_srq 'max_wr=64 ')" 11 "SRQ max_wr recorded"
is "$(nkind "$d" ibv_post_recv "wr_id=0xa0[0-9a-f] .* srq=$ida ")" $N "receives posted to the first SRQ carry its id"
is "$(nkind "$d" ibv_post_recv "wr_id=0xb0[0-9a-f] .* srq=$idb ")" $N "receives posted to the second SRQ carry its id"
is "$(nkind "$d" ibv_post_recv ' srq=1 ')" 0 "no receive attributed to an unknown SRQ"
is "$(nkind "$d" ibv_destroy_srq "id=$ida ret=0")$(nkind "$d" ibv_destroy_srq "id=$idb ret=0")" 11 "ibv_destroy_srq recorded with the ids"

# WQ
wqn=$(printf '%s\n' "$out" | sed -n 's/^wq_num //p')
is "$(nkind "$d" ibv_create_wq "wq_num=$wqn wq_type=0 max_wr=64")" 1 "ibv_create_wq recorded (wq_num $wqn)"
is "$(nkind "$d" ibv_post_recv "aux=2 wr_id=0xc0[0-9a-f] .*qp_num=$wqn .*ret=0")" $N "ibv_post_wq_recv: one event per receive (aux=2, qp_num=wq_num)"
is "$(nkind "$d" ibv_post_recv 'aux=2 wr_id=0xd0' | tr -d '\n')" 3 "WQ list of 3: all three recorded"
is "$(printf '%s\n' "$d" | grep '^ibv_post_recv .*aux=2 wr_id=0xd0' | grep -oE '(wr_id|ret)=[^ ]+' | paste -sd' ')" \
    "wr_id=0xd00 ret=0 wr_id=0xd01 ret=22 wr_id=0xd02 ret=22" "WQ list: accepted before bad_wr, EINVAL from it on"
is "$(nkind "$d" ibv_destroy_wq "wq_num=$wqn ret=0")" 1 "ibv_destroy_wq recorded"

# mlx5dv_create_qp / mlx5dv_create_cq
is "$(nkind "$d" ibv_create_qp 'ext=2$')$(nkind "$d" ibv_create_cq 'ext=1$')" 11 "mlx5dv_create_qp (builders, ext=2) and mlx5dv_create_cq (ext=1) recorded"
is "$(nkind "$d" ibv_post_send 'aux=1 wr_id=0xe0[0-9a-f] .*bytes=10[0-9] .*opcode=2 ')" $N "mlx5dv QP: ibv_wr_* posts recorded"
dvq=$(printf '%s\n' "$d" | grep '^ibv_create_qp .*ext=2$' | grep -oE ' qp_num=[0-9]+' | cut -d= -f2)
is "$(nkind "$d" ibv_wc "wr_id=0xe0[0-9a-f] .*qp_num=$dvq .*status=0 .*bytes=10[0-9] ")" $N "mlx5dv cq_ex: completions recorded with qp_num and byte_len"

# the per-thread MR-kind cache forgets a deregistered MR
is "$(printf '%s\n' "$d" | grep -E '^ibv_post_send .*wr_id=0x110[01] ' | grep -oE '(wr_id|mem)=[^ ]+' | paste -sd' ')" \
    "wr_id=0x1100 mem=1 wr_id=0x1101 mem=0" "post from an MR: host; same lkey after ibv_dereg_mr: unknown"

# railscope dump --json names the new events' fields
j=$("$RS_CLI" dump --json "$T/rq" 2>&1)
like "$j" "\"kind\":\"ibv_create_srq\".*\"id\":$ida,\"max_wr\":128,\"ext\":0" "dump --json: ibv_create_srq with id, max_wr, ext"
like "$j" "\"kind\":\"ibv_post_recv\".*\"wr_id\":\"0xb00\".*\"srq\":$idb" "dump --json: SRQ receive with the SRQ's id"
# (enum fields may carry their name beside the number: "wq_type":0,"wq_type_name":"RQ")
like "$j" "\"kind\":\"ibv_create_wq\".*\"wq_num\":$wqn,\"wq_type\":0,(\"wq_type_name\":\"RQ\",)?\"max_wr\":64" \
    "dump --json: ibv_create_wq with wq_num, wq_type, max_wr"

# A context opened behind ibv_open_device (libibverbs' private verbs_open_device, as libmlx5 calls it):
# adopted at its first ibv_create_cq (or ibv_alloc_pd), recorded as ibv_open_device aux=4, then traced.
for first in cq pd; do
    opt= what=ibv_create_cq
    [ $first = pd ] && opt=-p what=ibv_alloc_pd
    out=$(on_null traced "$T/adopt$first" "$VT/vt_adopt" -n $N $opt 2>&1)
    d=$(vdump "$T/adopt$first")
    is "$(nkind "$d" ibv_open_device 'aux=4 .*device=null1')" 1 "unseen context adopted at its first $what (aux=4, device name)"
    is "$(nkind "$d" ibv_post_send 'wr_id=0xf0[0-9a-f] .*bytes=128 .*mem=1 ')/$(nkind "$d" ibv_wc 'wr_id=0xf0')" "$N/$N" \
        "adopted context ($first first): posts (MR kind known) and completions traced"
done
