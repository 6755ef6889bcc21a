// web_follow.h: a page served by the teacher's window (attnviz --serve) follows it. The
// teacher's window marks every file it serves with the header x-attnviz-follow; at start the
// page reads its own address's headers, and when the mark is there it opens ws://HOST/follow
// and applies each state the teacher's window sends, through the same apply_session as Open.
// From any other server the page stays on its own. "Explore on my own" keeps the page's edits
// (the teacher's latest is still kept); "Back to the teacher" applies it.
#pragma once
#include "app_state.h"

namespace attnviz {

// In main, once: the probe, and the connection when the teacher's window served the page.
// `s` is the page's state, kept for the page's life: a state that arrives while the page
// follows is applied at once (the next frame draws it).
void web_follow_start(AppState& s);
// In each frame, before it is drawn: the side panel's switch (Back to the teacher applies
// the latest state), the status it shows, a dropped connection tried again.
void web_follow_frame(AppState& s);
// Date.now() when the teacher's state was last applied (0: never), for the browser test.
double web_follow_applied_ms();
// Date.now() when the teacher's latest state arrived (0: never).
double web_follow_received_ms();

} // namespace attnviz
