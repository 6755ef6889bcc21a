// follow_generate.h: the Generate view of a teacher's GPT model on the pages that follow
// attnviz --serve (follow_gpt.h). The lesson's module and a toy model are written again on
// the page from the session's tokens and options (session.h's "generate"); a GPT model lives
// on the teacher's computer, so the window sends what the view draws of its generation, in
// the message's follow_gpt header under "generate":
//
//   tokens, prompt_len, block, layer, kernel, the labels of every token named, the prompt's
//   and the written text, the options and the draws taken, the top-10 next-token bars, the
//   number of steps and the last one's times and checks, the KV cache's sizes (no keys or
//   values), Play, and the picture's rows: those from rows_from = T - generate_follow_rows
//   on (from rows_from to the diagonal; the newest row whole), every head, as the float32
//   bits in base64.
//
// A page shows it read-only; an edit is refused with gpt_lives_on_teacher.
#pragma once
#include "app_state.h"
#include <nlohmann/json.hpp>

namespace attnviz {

// The picture's rows sent (the view draws at most this many).
constexpr int generate_follow_rows = 32;

// The teacher's window: the generation as the view draws it (null when the Generate view is
// not shown, so the other views' messages stay small).
nlohmann::json gpt_generate_header(const AppState& s);

// A page: shows the header's "generate" (called by show_received_gpt once the layer is
// shown). A missing or malformed one leaves the view saying why, never numbers the teacher
// did not send.
void show_received_generate(AppState& s, const nlohmann::json& header);

} // namespace attnviz
