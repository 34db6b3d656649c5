#!/bin/bash
# Session 28, call 3: call 2 was lost (the machine stopped answering after ~570 s of budget); its reduced form for a
# short budget: two scenarios (s2_noplugin on a fresh run with the arrival-lag analyzer, s2_cpu), no fd race.
# Not run this session (lending paused at 06:14).
#   run(command="bash bench/gpu/results/2026-12-05-s28/call3.sh")
SCEN=${SCEN:-"s2_noplugin s2_cpu"} FDRACE=${FDRACE:-0} exec bash "$(dirname "$0")/call2.sh"
