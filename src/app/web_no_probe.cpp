// web_no_probe.cpp: the page users get has no test probes (web_probe.h).
#include "web_probe.h"

namespace attnviz {

void web_probe_frame(GuiRun&) {}

} // namespace attnviz
