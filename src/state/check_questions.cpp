// check_questions.cpp: see check_questions.h. The wrong choices are the misconceptions a
// class brings: each is what a student who has not run the demonstration might say.
#include "check_questions.h"

namespace attnviz {

const std::vector<CheckQuestion>& check_questions() {
    static const std::vector<CheckQuestion> q = {
        {"1. Why does changing position 2's input leave the outputs at positions 0 and 1 unchanged?",
         {"The causal mask: queries 0 and 1 give key 2 a weight of exactly 0, so nothing of position 2 reaches them.",
          "The change is too small to show after the softmax; a larger strength would move them.",
          "Each position has weights of its own, so position 2's input only meets position 2's weights.",
          "The softmax renormalises each row, and the change cancels out in the sum."},
         0},
        {"2. What do multiple heads buy over a single head of the same total width?",
         {"More capacity: each head adds parameters of its own, 4C² per head.",
          "Several attention patterns at once: each head has its own softmax over its own head_dim channels.",
          "Speed: H small softmaxes cost less than one large one, for the same result."},
         1},
        {"3. Why scale the scores by √head_dim rather than √C?",
         {"It makes no difference: the softmax does not change when its scores are scaled.",
          "√C would leave the scores too large, and every softmax row too sharp.",
          "A head's score sums head_dim products, so its spread grows like √head_dim; √C would flatten the softmax."},
         2},
        {"4. How do you show that a head matters, not only where it looks?",
         {"Its attention pattern: a sharp, regular stripe shows that the model relies on it.",
          "Ablate it: zero its output, run the model again, and measure the change in loss and accuracy.",
          "Its weights: the head with the largest W_qkv norm does the most."},
         1},
        {"5. Why can a model keep the keys and values of earlier tokens?",
         {"Under the causal mask no position looks ahead: a new token changes nothing before it, so their keys and values stay as they were.",
          "They are only kept approximately: the cache trades a little accuracy for speed.",
          "The keys and values are the model's weights, which do not change while it writes.",
          "The softmax of earlier rows is renormalised at every step, and the cache stores that."},
         0},
        {"6. Which head carries the copied token?",
         {"A previous-token head in layer 0: it looks at the token before, so it holds the token to copy.",
          "An induction head in layer 1: patching its output from a clean run brings the copied token's logit back.",
          "Every head alike: the answer is spread over the whole residual stream.",
          "The head with the sharpest attention pattern, whichever layer it is in."},
         1},
    };
    return q;
}

std::vector<int> check_question_choices() {
    std::vector<int> n;
    for (const CheckQuestion& q : check_questions()) n.push_back(int(q.choices.size()));
    return n;
}

char choice_letter(int i) { return char('A' + i); }

} // namespace attnviz
