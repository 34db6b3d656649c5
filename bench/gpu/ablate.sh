#!/bin/bash
# Kept for the commands in bench/gpu/RESULTS.md (session 5): bench/gpu/overhead.sh with every part an `ablate`
# part (parts separated by `--`), e.g.
#   run(command="bench/gpu/ablate.sh --workload transformer --rounds 3 --modes untraced,default,full,min-full")
args=(ablate)
for x in "$@"; do
    args+=("$x")
    [ "$x" = "--" ] && args+=(ablate)
done
[ "${args[${#args[@]}-1]}" = ablate ] && unset 'args[${#args[@]}-1]' # a trailing `--` starts no part
exec "$(dirname "$0")/overhead.sh" "${args[@]}"
