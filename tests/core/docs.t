#!/bin/bash
# The documented defaults are the ones the library uses: each variable is given a bad value, the
# library's one warning says which default it falls back to ("using N"), and README.md, docs/recording.md
# and `railscope record --help` must say the same (a default changed in tracer/config.c alone fails here).
. "$(dirname "$0")/../lib.sh"
need_build librailscope.so railscope
plan 11

# default_of VAR BADVALUE: the value the library says it uses instead of BADVALUE
default_of() {
    RAILSCOPE_OUT=$T/out env "$1=$2" LD_PRELOAD="$RS_BUILD/librailscope.so" /bin/echo x 2>&1 >/dev/null |
        sed -n "s/^railscope: $1='.*'.*; using \\(.*\\)\$/\\1/p"
}
# doc_default FILE VAR: the default column of VAR's row in a markdown table
doc_default() { sed -n "s/^| \`$2\` | \`\\([^\`]*\\)\` |.*/\\1/p" "$1" | head -1; }

help=$("$RS_CLI" record --help 2>&1)
for v in FLUSH_MS:abc BUFFER_KB:1 POLICY:maybe ZSTD_LEVEL:abc CLOCK:sometimes; do
    var=RAILSCOPE_${v%%:*}
    d=$(default_of "$var" "${v#*:}")
    [ -n "$d" ] || diag "no 'using' warning for $var"
    is "$(doc_default "$RS_TOP/docs/recording.md" "$var")" "${d:-?}" "docs/recording.md: $var default is the library's ($d)"
    case $var in
    RAILSCOPE_ZSTD_LEVEL) ;;   # not in the README's short table
    *) is "$(doc_default "$RS_TOP/README.md" "$var")" "${d:-?}" "README.md: $var default is the library's ($d)" ;;
    esac
done
like "$help" "--flush-ms N .*\\(default $(default_of RAILSCOPE_FLUSH_MS abc);" "record --help: the flush default is the library's"
like "$help" "--buffer-kb N .*\\(default $(default_of RAILSCOPE_BUFFER_KB 1)\\)" "record --help: the buffer default is the library's"
