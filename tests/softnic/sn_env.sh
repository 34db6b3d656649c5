# Common setup for the softnic .t files (sourced after tests/lib.sh): the softnic library first on
# LD_LIBRARY_PATH, a private SOFTNIC_DIR (its own QPN namespace) and a free-ish TCP port for tools
# such as ibv_rc_pingpong that exchange addresses over TCP.
need_build softnic/libibverbs.so.1
export LD_LIBRARY_PATH=$RS_BUILD/softnic${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SOFTNIC_DIR=$T/fabric
unset SOFTNIC_RATE_GBPS SOFTNIC_LATENCY_US SOFTNIC_PAUSE SOFTNIC_DEVICE SOFTNIC_LINK
# a port per test file: prove runs files in parallel. Below Linux's ephemeral range (32768-60999 by default),
# where a port can be taken by any outgoing connection on the host between the pick and the server's bind.
sn_port() { echo $((20000 + (RANDOM % 12000))); }
# Unmodified binaries (ibv_rc_pingpong) are not sanitizer-built: when this build's softnic library is
# (make SAN=asan|tsan), its runtime has to be loaded first (lib.sh's RS_SAN_RT; its *SAN_OPTIONS apply).
SN_FOREIGN_ENV=()
if [ -n "$RS_SAN_RT" ]; then SN_FOREIGN_ENV=(env "LD_PRELOAD=$RS_SAN_RT"); fi
