# Common setup for the softnic .t files (sourced after tests/lib.sh): the softnic library first on
# LD_LIBRARY_PATH, a private SOFTNIC_DIR (its own QPN namespace) and a free-ish TCP port for tools
# such as ibv_rc_pingpong that exchange addresses over TCP.
need_build softnic/libibverbs.so.1
export LD_LIBRARY_PATH=$RS_BUILD/softnic${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SOFTNIC_DIR=$T/fabric
unset SOFTNIC_RATE_GBPS SOFTNIC_LATENCY_US SOFTNIC_PAUSE SOFTNIC_DEVICE SOFTNIC_LINK
# a port per test file: prove runs files in parallel
sn_port() { echo $((20000 + (RANDOM % 20000))); }
# Unmodified binaries (ibv_rc_pingpong) are not sanitizer-built: when this build's softnic library is
# (make SAN=asan|tsan), its runtime has to be loaded first.
SN_FOREIGN_ENV=()
_sn_san=$(ldd "$RS_BUILD/softnic/libibverbs.so.1" 2>/dev/null | awk '/lib(a|t)san\.so/ { print $3; exit }')
if [ -n "$_sn_san" ]; then
    SN_FOREIGN_ENV=(env "LD_PRELOAD=$_sn_san" "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0")
fi
