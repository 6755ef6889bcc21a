// check_questions.h: the check view's questions (the lesson's "Check yourself", and the
// ablation question), each with choices for the class to answer: a student picks one on a
// page that follows the teacher, and the teacher's window shows how many picked each
// (follow.h, src/serve). Plain text; the check view draws it, the server counts by it.
#pragma once
#include <vector>

namespace attnviz {

struct CheckQuestion {
    const char* text;                  // as the check view's heading shows it
    std::vector<const char*> choices;  // A, B, C, ... in this order
    int correct;                       // the index of the right choice
};

constexpr int check_question_count = 6;
const std::vector<CheckQuestion>& check_questions();
// Each question's number of choices (the server's ServeConfig::choices).
std::vector<int> check_question_choices();
// "A", "B", ... for choice i.
char choice_letter(int i);

} // namespace attnviz
