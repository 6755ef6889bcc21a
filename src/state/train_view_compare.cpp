// train_view_compare.cpp: question 2's second "Show me". The check view asks what several
// heads buy over one head of the same width; this trains `both` (predict the previous letter
// and say whether this letter appeared before) at its recipe with H = 1 and then with H = 4,
// and keeps each run's last step: its accuracies, its heads on the probe and their labels.
// The runs go one after the other, so that while they train the window keeps one core, and
// the class sees the single head's result before the four heads'.
#include "app_state.h"
#include "train_view_state.h"
#include "text_util.h"
#include <cstdio>

namespace attnviz {

namespace {

constexpr int compared_heads[] = {1, 4};

// The run's picture at its last step: the model it ended on and the scores taken there.
void take_picture(HeadsRun& r, const std::vector<int>& probe) {
    TrainHistory h;
    r.session->copy_history(h);
    TrainPicture p;
    p.model = r.session->latest(&p.step);
    p.probe = probe;
    fill_heads(p, h.snapshots);
    r.picture = std::move(p);
}

double acc(const HeadsRun& r, const char* key) {
    auto it = r.picture.accuracy.find(key);
    return it == r.picture.accuracy.end() ? 0.0 : it->second;
}

// "previous-token head" from "previous-token head (0.98)"; "" for a head with no role.
std::string role(const HeadView& h) { return h.label.substr(0, h.label.rfind(" (")); }

} // namespace

void start_heads_comparison(AppState& s) {
    TrainViewState& t = train_view(s);
    HeadsComparison& c = t.compare;
    c = HeadsComparison{}; // joins any runs still going
    c.steps = task_defaults(Task::both).steps;
    c.scroll = true;
    for (int H : compared_heads) {
        HeadsRun r;
        r.settings = default_train_settings(Task::both);
        r.settings.model.n_head = H; // the same C: head_dim = C / H
        c.runs.push_back(std::move(r));
    }
    s.screen.view = View::check;
    refresh_heads_comparison(t);
}

void refresh_heads_comparison(TrainViewState& t, bool wait) {
    HeadsComparison& c = t.compare;
    for (HeadsRun& r : c.runs) {
        if (r.done()) continue;
        if (!r.session) {
            r.session = std::make_unique<TrainSession>(r.settings);
            r.session->run_to(c.steps);
        }
        if (wait) r.session->wait_idle();
        r.status = r.session->status();
        if (r.status.busy) return; // the next run waits for this one
        take_picture(r, default_probe(r.settings.model));
        r.session.reset(); // the picture holds what the panel needs; the history can go
    }
    if (c.runs.size() == 2 && c.sentence.empty()) {
        c.sentence = comparison_sentence(c.runs[0], c.runs[1]);
        c.scroll = true; // the result has grown the view: bring it into sight again
    }
}

std::string comparison_sentence(const HeadsRun& one, const HeadsRun& four) {
    const double p1 = acc(one, "prev"), d1 = acc(one, "dup"), p4 = acc(four, "prev"), d4 = acc(four, "dup");
    int prev = 0, dup = 0;
    for (const HeadView& h : four.picture.heads) {
        prev += role(h) == "previous-token head";
        dup += role(h) == "duplicate-token head";
    }
    const std::string head1 = one.picture.heads.empty() || role(one.picture.heads[0]).empty()
                                  ? "found no clear role"
                                  : "became a " + role(one.picture.heads[0]);
    const bool split = std::min(p1, d1) < 0.8 && std::min(p4, d4) > 0.95 && prev >= 1 && dup >= 1;
    if (!split)
        return "H = 1: previous letter " + two_decimals(p1) + ", appeared before " + two_decimals(d1) + "; H = 4: " + two_decimals(p4) + " and " +
               two_decimals(d4) + ". This run did not split the relations as the recipe's runs do.";
    const bool dup_lost = d1 <= p1;
    return std::string("One head has one softmax per letter: it can look at the previous letter or at an earlier copy, "
                       "not at both. With H = 1 the head ") +
           head1 + " and \u201c" + (dup_lost ? "appeared before" : "previous letter") + "\u201d stays at " +
           two_decimals(dup_lost ? d1 : p1) + ". Four heads of head_dim " + std::to_string(four.settings.model.head_dim()) +
           " split the two relations, " + std::to_string(prev) + " previous-token and " + std::to_string(dup) +
           " duplicate-token heads, and both accuracies reach " + two_decimals(std::min(p4, d4)) + ", at the same C = " +
           std::to_string(four.settings.model.n_embd) + " and with as many weights.";
}

} // namespace attnviz
