#!/bin/bash
# `railscope dump --json` shows the verbs events' fields by name (from the format's descriptors): posts
# with qp_num, wr_id, opcode, bytes, mem; completions with qp_num, wr_id, status, opcode, bytes
# (null provider).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/vlib.sh"
need_build railscope verbs/vt_basic verbs/nullprov/libibverbs.so.1
plan 4

on_null traced "$T/tr" "$VT/vt_basic" -n 3 >/dev/null 2>&1
j=$("$RS_CLI" dump --json "$T/tr" 2>&1)
like "$j" '"kind":"ibv_post_send".*"wr_id":"0x0".*"bytes":64.*"qp_num":[0-9]+,"opcode":2.*"mem":1' \
    "dump --json: post_send with wr_id, bytes, qp_num, opcode, mem"
like "$j" '"kind":"ibv_wc".*"wr_id":"0x1e61".*"qp_num":[0-9]+,"status":4,"opcode":0,"bytes":8' \
    "dump --json: completion with wr_id, qp_num, status, opcode, bytes"
like "$j" '"kind":"ibv_poll_empty".*"count":100' "dump --json: per-CQ empty-poll counter"
like "$j" '"kind":"ibv_reg_mr".*"mem":2' "dump --json: MR memory kind"
