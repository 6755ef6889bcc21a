// check_view.h: the check view's pieces that its questions share (check_view.cpp): a
// question's heading, its choices (the class's counts in the teacher's window) and its
// answer revealed on request; and question 6's section (check_patch_view.cpp).
#pragma once
#include "ui_context.h"

namespace attnviz {

void heading(UiContext& ui, const char* text);
void choices(AppState& s, UiContext& ui, int q);
void answer(AppState& s, int n, const char* text);
// Question 6: which head carries the copied token (check_patch.h's demonstration).
void patch_question(AppState& s, UiContext& ui);

} // namespace attnviz
