#!/bin/bash
# info writes the strings of a trace (the traced program's argv, its exe path, the host name) for a terminal:
# control bytes and bytes of ill-formed UTF-8 as \xNN, '\' as \\ (as strace does), valid UTF-8 as is. Before,
# ESC and invalid bytes in the command line or the exe path went to the terminal raw (review item 5:
# `railscope record -- sh -c $'echo "\x1b[31m"'` then `railscope info DIR` coloured the terminal).
. "$(dirname "$0")/../lib.sh"
need_build railscope librailscope.so
need_cmd python3
plan 5

exe=$T/$'t\x1bx\xff'
cp /bin/true "$exe" || bail "no copy of /bin/true"
"$RS_CLI" record -q -o "$T/r" -- "$exe" $'\x1b[31mred' $'a\xffb\\c' $'\xc2\x9bcsi' 'é' || bail "record failed"
out=$("$RS_CLI" info "$T/r")
is "$?" 0 "info: exit 0"
is "$(grep '^command:' <<<"$out")" 'command:    '"$T"'/t\x1bx\xff \x1b[31mred a\xffb\\c \xc2\x9bcsi é' \
    "command line: ESC, an invalid byte, a C1 control (CSI as UTF-8) and '\\' escaped; é kept"
like "$(grep '^exe:' <<<"$out")" '^exe: +.*/t\\x1bx\\xff$' "exe path: escaped the same way"
"$RS_CLI" info "$T/r" >"$T/info.out"
is "$(python3 -c 'import sys; b=open(sys.argv[1],"rb").read(); b.decode("utf-8"); print(sum(c < 0x20 and c != 10 or c == 0x7f for c in b))' "$T/info.out")" 0 \
    "the whole output: valid UTF-8, no control byte but newlines"
# A path given to info (a directory of the user's with an ESC in its name) is escaped in the file: line too.
"$RS_CLI" record -q -o "$T/"$'o\x1b' -- /bin/true
like "$("$RS_CLI" info "$T/"$'o\x1b' | grep '^file:')" '^file: +'"$T"'/o\\x1b/[^/]+\.rtrace$' "file: line: the path escaped"
