# shellcheck shell=bash
# The sanitizer builds of sanitizers.t and sanitizers_preload.t (source after tests/lib.sh).
#
# san_build SAN DIR SNAP LOG TARGET...: make TARGET... (paths under DIR, or `all`) with SAN=SAN into the tree
# DIR, one make at a time (DIR/.build.lock, shared by both files), then, under the same lock, copy the tree
# without its objects to SNAP. The checks run on SNAP, never on DIR: in a shared checkout another make of DIR
# (the other sanitizer file after a source change, a second `make test`, an engineer's `make SAN=asan`)
# relinks librailscope.so and the programs while they run. A process started during a link then loses the
# library ("ld.so: object ... cannot be preloaded (file too short)", "invalid ELF header" on stderr; the
# program runs untraced) or runs a program half old, half new: tests/verbs/harmless.t 3 (python3 under the
# preload, stderr checked) failed so in a full `make test` on 2026-12-02, the ASan library relinked 2 s into
# the preload suites. LOG gets make's output (appended).
san_build() {
    local san=$1 dir=$2 snap=$3 log=$4
    shift 4
    mkdir -p "$dir" || return 1
    (
        set -o pipefail
        flock 9 || exit 1
        # Objects whose dependency file names them by the absolute path (a tree built before the Makefile
        # spelt an absolute BUILD inside the checkout relative, 03ad3e7): make no longer sees their header
        # dependencies, so a header change would leave them stale. Remove them with it: they are rebuilt.
        case $dir in
        "$RS_TOP"/*)
            find "$dir" -name '*.d' -exec awk 'FNR == 1 { if (/^\//) print FILENAME; nextfile }' {} + |
                while read -r d; do rm -f "${d%.d}.o" "$d"; done
            ;;
        esac
        make -C "$RS_TOP" -j"${RS_SAN_JOBS:-2}" SAN="$san" BUILD="$dir" "$@" || exit 1
        # a make that takes no lock (an engineer's) may link while this copies: then copy again
        for try in 1 2 3 4 5; do
            rm -rf "$snap" && mkdir -p "$snap" &&
                tar -C "$dir" --exclude='*.o' --exclude='*.d' --exclude=.build.lock -cf - . | tar -C "$snap" -xf - &&
                diff -rq -x '*.o' -x '*.d' -x .build.lock "$dir" "$snap" >/dev/null && exit 0
            echo "sanlib.sh: $dir changed while it was copied (copy $try of 5)"
            sleep 2
        done
        exit 1
    ) 9>"$dir/.build.lock" >>"$log" 2>&1
}
