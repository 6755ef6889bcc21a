// serve_link.h: the teacher's window and its server (src/serve), natively. --serve starts
// it before the window opens (so that a busy port or a missing page is one sentence and exit
// status 2, with or without a display); after each frame the loop publishes the state the
// views show, as the session JSON (session.h), whenever it changed, and the side panel's
// switch starts or stops it. One server per process.
#pragma once
#include "app_state.h"
#include "gui_plan.h"
#include <string>

namespace attnviz {

// Starts serving when `o.serve` asks; true when it is not asked. On failure `error` is one
// sentence naming the value and what to do instead. Prints the addresses on stdout.
bool start_serving(const GuiOptions& o, std::string& error);
// After each frame: the side panel's switch, the addresses and count it shows, and the
// state, published when its session JSON changed; the class's answers counted.
void serve_after_frame(AppState& s);
void stop_serving();

class FollowServer;
// The answers, departures and clears `server` took off the socket since the last call, counted
// in `tally` in their order (serve_after_frame does this into s.follow.answers).
void count_answers(FollowServer& server, ClassAnswers& tally);

} // namespace attnviz
