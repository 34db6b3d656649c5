#!/bin/bash
# Issue 18 item 6: dump --json gives enum names beside the numbers ("opcode":0,"opcode_name":"RDMA_WRITE"),
# from formats/rtrace_enums.h. mkhostile writes every kind with all number fields = v for v in 0..40,
# 128..140, 255; enum_names.py checks consistency, that every enum field of the table shows up named, and
# the names against <infiniband/verbs.h> and CUPTI's cupti_activity.h where installed. Before: no names.
. "$(dirname "$0")/../lib.sh"
need_build tests/cli/mkhostile railscope
need_cmd python3
plan 5
"$RS_BUILD/tests/cli/mkhostile" enums "$T/e.rtrace"
"$RS_CLI" dump --json "$T/e.rtrace" >"$T/e.jsonl"
is $? 0 "dump --json of every kind with enum values: exit 0"
ok "names consistent, every enum field named, names match verbs.h/CUPTI" \
    python3 "$RS_TOP/tests/cli/enum_names.py" "$T/e.jsonl" "$RS_TOP"
like "$(grep '"kind":"ibv_post_send"' "$T/e.jsonl" | head -1)" '"opcode":0,.*"opcode_name":"RDMA_WRITE"' \
    "ibv_post_send: \"opcode\":0 ... \"opcode_name\":\"RDMA_WRITE\""
like "$(grep '"kind":"ibv_wc"' "$T/e.jsonl" | sed -n 13p)" '"status":12,.*"status_name":"RETRY_EXC_ERR"' \
    "ibv_wc: status 12 is RETRY_EXC_ERR"
unlike "$(grep '"kind":"ibv_post_send"' "$T/e.jsonl" | sed -n 17p)" 'opcode_name' \
    "an opcode without a name (16) gets no _name key"
exit 0
