// check_view.h: the check view's pieces that its questions share (check_view.cpp): a
// question's heading, its choices (the class's counts in the teacher's window) and its
// answer revealed on request; and the sections of questions 4 to 6 drawn in their own files.
#pragma once
#include "ui_context.h"
#include <string>

namespace attnviz {

void heading(UiContext& ui, const char* text);
void choices(AppState& s, UiContext& ui, int q);
void answer(AppState& s, int n, const char* text);
// A text at the cursor, recorded (when visible) for the layout file with its value.
void recorded_text(UiContext& ui, const std::string& text, const std::string& kind, const std::string& name, int position,
                   float value, ImU32 colour);
// Scrolls the questions so that the cursor's line is at the top: a demonstration into sight.
void scroll_here_into_sight();
// A question's "Show me" button with its tooltip (may be null) and the dim hint beside it;
// whether it was clicked.
bool show_me_button(const char* label, const char* tooltip, const char* hint);
// Questions 4 and 5 with their demonstrations (check_demos_view.cpp).
void ablation_question(AppState& s, UiContext& ui);
void generate_question(AppState& s, UiContext& ui);
// Question 6: which head carries the copied token (check_patch.h's demonstration).
void patch_question(AppState& s, UiContext& ui);

} // namespace attnviz
