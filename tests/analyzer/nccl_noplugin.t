#!/bin/bash
# A run without NCCL's profiler plugin events (an NCCL before 2.23, another NCCL_PROFILER_PLUGIN, or a by-hand
# LD_PRELOAD launch before session 26): the real 2-rank fixture s2_slownet, whose network the scenario slowed, copied
# by rs-retrace without every plugin event kind. Its collectives then come from the NCCL API calls (enqueue times)
# and nothing splits their time into network and NVLink: the report must say so, how many collectives a kernel
# timed, and why the plugin was missing where the rank's facts say (its NCCL version, its start environment).
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope tests/analyzer/rs-retrace
FX=$RS_TOP/tests/gpu/fixtures/s2_slownet/trace
[ -d "$FX" ] || skip_all "no NCCL fixture in $FX"
plan 13
RT=$RS_BUILD/tests/analyzer/rs-retrace
DROP=()
for k in nccl_prof_init nccl_group nccl_coll nccl_p2p nccl_proxy_op nccl_proxy_step nccl_proxy_state nccl_kernel_ch \
    nccl_prof_api; do DROP+=(--drop "$k"); done
# copy DIR [FACT...]: the fixture without plugin events, each file with the given host facts
copy() {
    local d=$T/$1 n=0
    shift
    mkdir -p "$d"
    for f in "$FX"/*.rtrace; do
        n=$((n + $("$RT" "$f" "$d/$(basename "$f")" "${DROP[@]}" "$@"))) || bail "rs-retrace failed on $f"
    done
    echo "$n"
}
warn() { run_timeout 60 "$RS_CLI" report --json "$T/$1" | jq -r '.warnings[]' | grep 'NCCL profiler records'; }
n=$(copy plain)
ok "the fixture's plugin events were dropped ($n)" test "$n" -gt 10000
unlike "$(run_timeout 60 "$RS_CLI" report --json "$FX" | jq -r '.warnings[]')" "without NCCL profiler records" \
    "the recorded run (plugin events): no such warning"
like "$(warn plain)" \
    "^2 ranks without NCCL profiler records: collectives from the NCCL API calls; 0 of their [0-9]+ collective records timed on the GPU by their NCCL kernel \(sampling windows\), the others' time is not split into network and NVLink$" \
    "without them: the report says what it could not split, and that no kernel timed a collective"
copy old --fact nccl/version=2.22.3 >/dev/null
like "$(warn old)" "^2 ranks without NCCL profiler records \(NCCL 2\.22\.3: the profiler plugin needs NCCL 2\.23 or later\): " \
    "an NCCL before 2.23 (recorded nccl/version) is named as the reason"
copy v226 --fact nccl/version=2.26.2 >/dev/null
like "$(warn v226)" "^2 ranks without NCCL profiler records: " "NCCL 2.26 has a table the library exports (v3): no reason made up"
copy other --fact env/NCCL_PROFILER_PLUGIN=/opt/insp/libnccl-profiler-inspector.so --fact nccl/version=2.28.9 >/dev/null
like "$(warn other)" \
    "^2 ranks without NCCL profiler records \(NCCL_PROFILER_PLUGIN names another plugin, /opt/insp/libnccl-profiler-inspector\.so\): " \
    "another profiler plugin in the start environment is named as the reason"
copy off --fact env/NCCL_PROFILER_PLUGIN=none --fact nccl/version=2.28.9 >/dev/null
like "$(warn off)" "^2 ranks without NCCL profiler records \(NCCL_PROFILER_PLUGIN=none turned NCCL's profiler off\): " \
    "NCCL_PROFILER_PLUGIN=none (NCCL's off switch) is said as such, not as another plugin"
copy ours --fact env/NCCL_PROFILER_PLUGIN=/usr/local/lib/railscope/librailscope.so --fact nccl/version=2.28.9 >/dev/null
like "$(warn ours)" "^2 ranks without NCCL profiler records: " "railscope's own plugin and NCCL 2.28.9: no reason made up"
copy renamed --fact env/NCCL_PROFILER_PLUGIN=/opt/rs/libtracer.so --fact env/CUDA_INJECTION64_PATH=/opt/rs/libtracer.so \
    --fact nccl/version=2.28.9 >/dev/null
like "$(warn renamed)" "^2 ranks without NCCL profiler records: " \
    "the library renamed (RAILSCOPE_LIB), as record sets it for both: not taken for another plugin"
# one rank on an old NCCL, the other without the fact
mkdir -p "$T/mixed"
set -- "$T"/plain/*.rtrace
cp "$2" "$T/mixed/" && "$RT" "$FX/$(basename "$1")" "$T/mixed/$(basename "$1")" "${DROP[@]}" --fact nccl/version=2.18.5 \
    >/dev/null || bail "rs-retrace failed"
like "$(warn mixed)" "^2 ranks without NCCL profiler records \(NCCL 2\.18\.5: the profiler plugin needs NCCL 2\.23 or later on some\): " \
    "a reason that holds for some ranks says so"
# and the top finding says it, instead of a run that reads as host-bound with nothing said (the ranks' 0.68 ms a step of
# waiting for each other, estimated from the arrival lag since session 28, is no longer in "other")
is "$(run_timeout 60 "$RS_CLI" report --json "$T/old" | jq -r '.findings[0] | "\(.category)|\(.text)"')" \
    "other|Collectives not measured: 119.57 ms per step (99 % of step time) is \"other\", holding the GPU time of 246 of 246 collectives nothing timed (2 ranks without NCCL profiler records; NCCL 2.22.3: the profiler plugin needs NCCL 2.23 or later); with NCCL 2.23 or later it splits into network, NVLink and host work" \
    "the top finding: the collectives nothing timed, their time in other, why and what would split it"
unlike "$(run_timeout 60 "$RS_CLI" report --json "$FX" | jq -r '.findings[].text')" "Collectives not measured" \
    "the recorded run (plugin events): no such finding"
# what the warning is about: nothing measured the planted slow network without the plugin
is "$(run_timeout 60 "$RS_CLI" report --json "$T/plain" | jq -r '.attribution_per_step | .network_transfer + .network_latency < 1e-6')" \
    "true" "(without the plugin no network time is measured: the reason the warning is there)"
