#!/bin/bash
# `railscope report --html`: on a synthetic 4-rank run (tools/synth, with a paused link and a straggler)
# the page is self-contained (no network reference), loads in headless Chromium without console errors,
# has every panel in the rendered DOM, the step chooser works from the URL, and a screenshot shows it.
. "$(dirname "$0")/../lib.sh"
need_build railscope synth/rs-synth
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$CHROME" ] || skip_all "chromium not installed"
plan 12

"$RS_BUILD/synth/rs-synth" -o "$T/run" --nodes 2 --gpus 2 --steps 4 --pause 1:3:2 --straggler 2:4 \
    >/dev/null 2>&1 || bail "rs-synth failed"
run_timeout 60 "$RS_CLI" report --html "$T/r.html" "$T/run" >/dev/null; rc=$?
like "$rc" '^[01]$' "report --html runs (exit $rc)"
ok "the HTML file is written" test -s "$T/r.html"
html=$(cat "$T/r.html")
unlike "$html" '(src|href)=|@import|url\(|https?://' "self-contained: no src/href/url()/http reference"
like "$(grep -c '<polyline class="qp-line"' "$T/r.html")" '^[1-9]' "per-QP bandwidth lines drawn from the traces"
# Under a sanitizer build (sanitizers.t runs tests/html on its ASan+UBSan tree) what counts is the report run above;
# the page it writes is the normal build's, and the browser (uninstrumented) checks it there: 4 Chromium starts,
# most of this file's time (12 of 13 s under ASan, idle).
if [ -n "$RS_SAN" ]; then
    skip "the page in headless Chromium: checked in the normal build (this is the $RS_SAN build)" 8
    exit 0
fi

chrome() { run_timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --enable-logging=stderr --v=0 "$@"; }
chrome --dump-dom "file://$T/r.html" >"$T/dom.html" 2>"$T/console.log"
for id in findings step-breakdown allreduce-timeline qp-bandwidth gpudirect; do ids="${ids:-}$(grep -c "id=\"$id\"" "$T/dom.html")"; done
is "$ids" "11111" "the rendered DOM has the five panels"
unlike "$(grep -E 'CONSOLE|Uncaught' "$T/console.log")" '.' "no console messages or errors while loading"
# the same check catches a broken page (so it can fail)
printf '<html><body><script>nosuch();</script></body></html>' >"$T/bad.html"
chrome --dump-dom "file://$T/bad.html" >/dev/null 2>"$T/bad.log"
like "$(cat "$T/bad.log")" 'Uncaught' "control: a page with a script error is caught"
like "$(grep -c 'class="cat-compute"' "$T/dom.html")" '^[1-9]' "step breakdown bars in the DOM"
# the chooser: #step=2 shows step 2 and hides the slowest one
chrome --dump-dom "file://$T/r.html#step=2" >"$T/dom2.html" 2>/dev/null
visible=$(grep -o '<svg class="step-g"[^>]*>' "$T/dom2.html" | grep -v 'display: *none')
like "$visible" 'id="step-2"' "URL #step=2 shows step 2"
is "$(printf '%s\n' "$visible" | wc -l)" "1" "and only that step"
chrome --screenshot="$T/shot.png" --window-size=1000,1500 "file://$T/r.html" >/dev/null 2>&1
ok "a screenshot is taken" test -s "$T/shot.png"
like "$(stat -c %s "$T/shot.png" 2>/dev/null)" '^[0-9]{5,}$' "the screenshot is not blank (>= 10 kB)"
