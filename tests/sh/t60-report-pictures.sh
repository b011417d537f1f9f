#!/usr/bin/env bash
# t60-report-pictures.sh — pipelines/report.sh end to end: the pictures are
# valid PNG/SVG of the documented size, the HTML page is self-contained,
# escapes archive text, and renders in headless Chromium with every
# embedded picture decoded.
# shellcheck disable=SC1091 # lib.sh sits next to this file
. "$(dirname "$0")/lib.sh"

# "conv 2d" (a space: file names must be made safe) has a three-step lineage
# whose model step's hypothesis holds markup; "scan" has a winner whose
# parent is not in the archive.
cat >"$T/run.ndjson" <<'EOF'
{"id":"1000000000000000","task":"conv 2d","backend":"c","generation":0,"parents":[],"origin":{"generator":"seed"},"status":"timed","time":{"seconds":1,"speedup_vs_baseline":1.0,"speedup_vs_seed":1.0}}
{"id":"1000000000000001","task":"conv 2d","backend":"c","generation":1,"parents":["1000000000000000"],"origin":{"generator":"mutate","changes":[{"knob":"TILE","from":"8","to":"16"}]},"status":"timed","time":{"seconds":1,"speedup_vs_baseline":1.6,"speedup_vs_seed":1.6}}
{"id":"1000000000000002","task":"conv 2d","backend":"c","generation":2,"parents":["1000000000000001"],"origin":{"generator":"openai","hypothesis":"<script>alert(\"x\")</script> & fuse the epilogue"},"status":"timed","time":{"seconds":1,"speedup_vs_baseline":2.4,"speedup_vs_seed":2.4}}
{"id":"1000000000000003","task":"conv 2d","backend":"c","generation":2,"parents":["1000000000000001"],"origin":{"generator":"openai"},"status":"wrong"}
{"id":"2000000000000005","task":"scan","backend":"c","generation":5,"parents":["2000000000000004"],"origin":{"generator":"mutate","changes":[{"knob":"WARPS","from":"4","to":"8"}]},"status":"timed","time":{"seconds":1,"speedup_vs_baseline":1.1}}
EOF
gzip "$T/run.ndjson"

png_size() { # file -> "W x H" from the IHDR chunk
	od -An -tu1 -j16 -N8 "$1" | awk '{printf "%d x %d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}'
}
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }

rc=0
report.sh --out "$T/r" "$T/run.ndjson.gz" >"$T/out" 2>"$T/err" || rc=$?
expect_eq "report.sh: exit 0, quiet" "0:" "$rc:$(cat "$T/err")"
for f in report.txt report.html speedup.png speedup.svg "lineage-conv_2d.png" "lineage-conv_2d.svg" lineage-scan.png lineage-scan.svg; do
	ok "made $f" test -s "$T/r/$f"
done

ok "speedup.png is a PNG" is_png "$T/r/speedup.png"
ok "file(1) agrees: speedup.png" sh -c "file -b '$T/r/speedup.png' | grep -q '^PNG image data, 800 x 480'"
expect_eq "speedup.png is 800 x 480" "800 x 480" "$(png_size "$T/r/speedup.png")"
ok "speedup.svg is SVG" sh -c "file -b '$T/r/speedup.svg' | grep -q 'SVG'"
ok "speedup.svg is 800 x 480" grep -q 'width="800" height="480"' "$T/r/speedup.svg"
ok "speedup plot names both tasks" sh -c "grep -q 'conv 2d' '$T/r/speedup.svg' && grep -q 'scan' '$T/r/speedup.svg'"
for g in conv_2d scan; do
	ok "lineage-$g.png is a PNG" is_png "$T/r/lineage-$g.png"
	sz=$(png_size "$T/r/lineage-$g.png")
	w=${sz% x *} h=${sz#* x }
	ok "lineage-$g.png has a sane size ($sz)" test "$w" -ge 100 -a "$w" -le 2000 -a "$h" -ge 100 -a "$h" -le 4000
	ok "lineage-$g.svg is SVG" sh -c "file -b '$T/r/lineage-$g.svg' | grep -q SVG"
done
expect_eq "conv 2d's lineage graph has its three steps" 3 "$(grep -c '<g id="node' "$T/r/lineage-conv_2d.svg")"
ok "scan's graph shows the missing parent" grep -q 'not in the archive' "$T/r/lineage-scan.svg"

html=$T/r/report.html
expect_eq "every picture is embedded" 3 "$(grep -o 'src="data:image/svg+xml;base64,' "$html" | wc -l)"
ok "no outside references" sh -c "! grep -Eq '(src|href)=\"(https?:|file:|/)' '$html'"
ok "no picture left out" sh -c "! grep -q 'not made' '$html'"
ok "archive text is escaped" grep -q '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; fuse' "$html"
ok "no raw markup from the archive" sh -c "! grep -q '<script>alert' '$html'"
ok "text report has the same winner" grep -q '^conv 2d  2.40x' "$T/r/report.txt"

# A bad line: report.sh still makes the report, warns once, exits 1.
{ zcat "$T/run.ndjson.gz"; echo '{"truncated":'; } >"$T/bad.ndjson"
rc=0
report.sh --out "$T/r2" "$T/bad.ndjson" >/dev/null 2>"$T/err2" || rc=$?
expect_eq "report.sh with a bad line: exit 1" 1 "$rc"
expect_eq "the bad line is reported once" 1 "$(grep -c 'line 6: not JSON' "$T/err2")"
ok "and the page is still made" test -s "$T/r2/report.html"
rc=0; report.sh >/dev/null 2>&1 || rc=$?
expect_eq "report.sh without an archive: exit 2" 2 "$rc"
ok "report.sh --help" sh -c 'report.sh --help | grep -q "^usage: report.sh"'

# Headless Chromium: the page renders to a screenshot of the window's size,
# and (in a probe copy with a load handler) every picture decodes.
chromium=$(command -v chromium || true)
if [ -z "$chromium" ]; then
	echo "ok $((t_n + 1)) # skip chromium not installed (apt-get install chromium)"
	t_n=$((t_n + 1))
else
	browse() { # args...
		timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
			--disable-background-networking --disable-component-update --disable-sync \
			--user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" "$@"
	}
	rc=0
	browse --screenshot="$T/shot.png" --window-size=1200,2000 "file://$html" >"$T/chrome.log" 2>&1 || rc=$?
	expect_eq "chromium renders the page: exit 0" 0 "$rc"
	ok "screenshot is a PNG" is_png "$T/shot.png"
	expect_eq "screenshot is 1200 x 2000" "1200 x 2000" "$(png_size "$T/shot.png")"
	ok "screenshot is not blank (> 20 kB)" test "$(wc -c <"$T/shot.png")" -gt 20000
	sed 's|</body>|<script>addEventListener("load",function(){var a=document.images,n=0;for(var i=0;i<a.length;i++)if(a[i].complete\&\&a[i].naturalWidth>0)n++;document.body.setAttribute("data-images",n+"/"+a.length)})</script></body>|' \
		"$html" >"$T/r/probe.html"
	browse --virtual-time-budget=5000 --dump-dom "file://$T/r/probe.html" >"$T/dom" 2>/dev/null
	expect_eq "every embedded picture decodes in the browser" 'data-images="3/3"' "$(grep -o 'data-images="[^"]*"' "$T/dom")"
	ok "the rendered page holds the fast_p table" grep -q 'fast_1.5' "$T/dom"
fi

done_testing
