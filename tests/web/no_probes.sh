#!/bin/sh
# no_probes.sh: the page users get (build-web/site/) carries none of the browser tests'
# probes (src/app/web_probe.h): neither attnviz.js nor attnviz.wasm names one of their
# exports or Dear ImGui's test-engine hooks, and the .wasm holds no text only the probes
# have (follow_applied_ms, a key of attnviz_web_state's JSON; a Release .wasm keeps string
# constants but not function names, and emscripten shortens its exports' names to one or
# two letters, which attnviz.js maps back). attnviz.js must name the page's own exports
# (web/page.js calls them), so the search is known to read what it should.
# Registered with ctest as web_no_probes, label web (tests/CMakeLists.txt).
#   tests/web/no_probes.sh SITE
# Exit status 0: passed; 1: failed (one line says what); 77: skipped when SITE was not built
# (a failure with ATTNVIZ_WEB_REQUIRED=1, as the browser tests).
set -u
SITE=${1:?usage: no_probes.sh SITE}
JS=$SITE/attnviz.js
WASM=$SITE/attnviz.wasm
if [ ! -f "$JS" ] || [ ! -f "$WASM" ]; then
  if [ "${ATTNVIZ_WEB_REQUIRED:-}" = 1 ]; then
    echo "FAIL: the web site was not built (no $JS or $WASM; ATTNVIZ_WEB_REQUIRED=1)"
    exit 1
  fi
  echo "SKIP: the web site was not built (no $JS or $WASM); run make web first"
  exit 77
fi
status=0
for name in attnviz_web_file_added attnviz_follow_code; do
  grep -aqF "$name" "$JS" || { echo "FAIL: $JS does not name the page's export $name"; status=1; }
done
for f in "$JS" "$WASM"; do
  for name in attnviz_web_state attnviz_web_trace attnviz_web_bench attnviz_web_widget ImGuiTestEngine follow_applied_ms; do
    grep -aqF "$name" "$f" && { echo "FAIL: $f names the test probe $name (built with ATTNVIZ_WEB_PROBES=ON?)"; status=1; }
  done
done
[ $status = 0 ] && echo "no test probes in $JS or $WASM"
exit $status
