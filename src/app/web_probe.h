// web_probe.h: what the browser tests (tests/web) ask the page, and the one call the page's
// loop makes for them. Built only with ATTNVIZ_WEB_PROBES (make web's build-web/probes/):
// web_probe.cpp holds Dear ImGui's test-engine hooks and the exports the tests call
// (attnviz_web_state, _widget, _trace, _bench). The page users get (build-web/site/) links
// web_no_probe.cpp instead, so it carries neither (ctest's web_no_probes checks).
#pragma once

namespace attnviz {

struct GuiRun;

// Once a frame, before it is drawn (web_main.cpp).
void web_probe_frame(GuiRun& run);

} // namespace attnviz
