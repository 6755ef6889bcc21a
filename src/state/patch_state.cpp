// patch_state.cpp: the Patching panel's Run, its checks and its worker; see patch_state.h.
// No ImGui here. The web page has no threads: it runs at once.
#include "patch_state.h"
#include "app_state.h"
#include "text_util.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <stdexcept>

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define ATTNVIZ_PATCH_IN_FRAME 1
#endif

namespace attnviz {

struct PatchJob {
    std::shared_ptr<const Model> model;
    std::vector<int> clean, corrupt;
    int answer = 0, wrong = 0;
    KernelKind kernel = KernelKind::reference;
    std::atomic<int> done{0};
    int total = 1;
    std::future<void> finished;
    // Written by the worker before `finished` is ready.
    PatchResult result;
    std::string error;
};

namespace {

std::string trimmed(const std::string& t) {
    const size_t a = t.find_first_not_of(" \t\n\r"), b = t.find_last_not_of(" \t\n\r");
    return a == std::string::npos ? "" : t.substr(a, b - a + 1);
}

// The worker: both plain runs and every patch of both tables. A refusal of the core (equal
// logit differences) is its sentence.
void run_job(PatchJob* j) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
        PatchRuns runs;
        prepare_patch_runs(*j->model, j->clean, j->corrupt, j->answer, j->wrong, j->kernel, runs);
        j->result.clean_ld = runs.clean_ld;
        j->result.corrupt_ld = runs.corrupt_ld;
        j->result.tables = patch_tables(runs, true, true, &j->done);
    } catch (const std::invalid_argument& e) {
        j->error = e.what();
    }
    j->result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The corrupted prompt's tokens: GPT text through the tokenizer (or ids), a toy model's letters.
bool corrupt_tokens(const AppState& s, std::vector<int>& out, std::string& error) {
    return parse_model_text(shown_model(s), s.patch.corrupt_field, out, error);
}

void refuse(AppState& s, const std::string& why) {
    s.patch.error = "Kept the tables: " + why + ".";
    s.error = s.patch.error;
}

std::string answer_text(const AppState& s, int id) { return model_token_label(s, id); }

} // namespace

bool patch_available(const AppState& s) {
    return has_next_token_head(s) && !received_gpt(s); // a teacher's layer: its tables as received
}

bool parse_patch_answer(const AppState& s, const std::string& text, const char* which, int& id, std::string& error) {
    const TrainedInput& in = *shown_model(s);
    const ModelConfig& c = in.model->config;
    int64_t v = 0;
    std::string why;
    const std::string t = trimmed(text);
    if (!t.empty() && std::all_of(t.begin(), t.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
        if (!parse_int(t, "a token id", 0, int64_t(c.vocab) - 1, v, why)) {
            error = std::string("the ") + which + " " + quote(text, 30) + " is not a token id of the vocabulary; give an id from 0 to " +
                    std::to_string(c.vocab - 1);
            return false;
        }
        id = int(v);
        return true;
    }
    std::vector<int> ids;
    if (!parse_answer_tokens(shown_model(s), text, ids, why)) {
        error = std::string("the ") + which + " " + quote(text, 30) + " " + why;
        return false;
    }
    if (ids.size() != 1 || ids[0] >= c.vocab) {
        error = std::string("the ") + which + " " + quote(text, 30) + " is " + std::to_string(ids.size()) +
                " tokens, not one; give one token" + one_token_hint(shown_model(s)) + " or its id";
        return false;
    }
    id = ids[0];
    return true;
}

void fill_patch_fields(AppState& s) {
    if (!patch_available(s)) return;
    if (s.patch.fields_for == shown_model(s)->model.get()) {
        if (s.patch.run_asked) {
            s.patch.run_asked = false;
            request_patch_run(s);
        }
        return;
    }
    const bool first = s.patch.fields_for == nullptr;
    const TrainedInput& in = *shown_model(s);
    s.patch.fields_for = in.model.get();
    s.patch.error.clear();
    s.patch.status.clear();
    auto set = [&](std::string& f, const std::string& v) {
        if (!first || f.empty()) f = v;
    };
    set(s.patch.corrupt_field, sequence_field_text(s));
    // The answers: the model's two likeliest next tokens at the end, when known.
    const auto& pred = s.model_view.predictions;
    const std::vector<TokenProb>* last = pred.empty() ? nullptr : &pred.back();
    const int a = last && last->size() >= 2 ? (*last)[0].token : 0, b = last && last->size() >= 2 ? (*last)[1].token : 1;
    set(s.patch.answer_field, token_field_text(shown_model(s), a));
    set(s.patch.wrong_field, token_field_text(shown_model(s), b));
    fill_patch_fields(s); // a Run asked for
}

bool request_patch_run(AppState& s) {
    if (!patch_available(s)) {
        refuse(s, "patching needs a GPT model or an induction model in the views; open one first");
        return false;
    }
    if (s.patch.job) {
        refuse(s, "a run is still going; wait for its tables");
        return false;
    }
    const std::vector<int>& clean = shown_model(s)->tokens;
    std::vector<int> corrupt;
    std::string error;
    int answer = 0, wrong = 0;
    if (!corrupt_tokens(s, corrupt, error) || !parse_patch_answer(s, s.patch.answer_field, "answer", answer, error) ||
        !parse_patch_answer(s, s.patch.wrong_field, "wrong token", wrong, error)) {
        refuse(s, error);
        return false;
    }
    if (corrupt.size() != clean.size()) {
        refuse(s, "the corrupted prompt is " + std::to_string(corrupt.size()) + " tokens and the clean one (the sequence shown) " +
                      std::to_string(clean.size()) + "; give a prompt of the same number of tokens");
        return false;
    }
    if (int(clean.size()) > patch_max_tokens) {
        refuse(s, "the prompt is " + std::to_string(clean.size()) + " tokens; the panel patches at most " +
                      std::to_string(patch_max_tokens) + ", so show a shorter text");
        return false;
    }
    if (answer == wrong) {
        refuse(s, "the answer and the wrong token are both token " + std::to_string(answer) + "; give two different tokens");
        return false;
    }
    auto j = std::make_shared<PatchJob>();
    j->model = shown_model(s)->model;
    j->clean = clean;
    j->corrupt = std::move(corrupt);
    j->answer = answer;
    j->wrong = wrong;
    j->kernel = s.kernel;
    const ModelConfig& c = j->model->config;
    j->total = std::max(1, c.n_layer * (int(clean.size()) + c.n_head));
    j->result.model = j->model;
    j->result.clean = j->clean;
    j->result.corrupt = j->corrupt;
    j->result.answer = answer;
    j->result.wrong = wrong;
    j->result.answer_text = answer_text(s, answer);
    j->result.wrong_text = answer_text(s, wrong);
    s.patch.error.clear();
    s.patch.status = "Patching " + std::to_string(j->total) + " activations…";
#ifdef ATTNVIZ_PATCH_IN_FRAME
    run_job(j.get());
    std::promise<void> p;
    p.set_value();
    j->finished = p.get_future();
#else
    j->finished = std::async(std::launch::async, run_job, j.get());
#endif
    s.patch.job = std::move(j);
    return true;
}

bool patch_running(const AppState& s) { return s.patch.job != nullptr; }

float patch_progress(const AppState& s) {
    if (!s.patch.job) return 0;
    return std::clamp(float(s.patch.job->done.load()) / float(s.patch.job->total), 0.f, 1.f);
}

void poll_patch(AppState& s, bool wait) {
    if (!s.patch.job) return;
    PatchJob& j = *s.patch.job;
    if (!wait && j.finished.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    j.finished.get();
    const std::shared_ptr<PatchJob> done = std::move(s.patch.job);
    if (!done->error.empty()) {
        refuse(s, done->error.substr(0, done->error.size() - (done->error.back() == '.' ? 1 : 0)));
        return;
    }
    s.patch.result = std::move(done->result);
    char line[160];
    std::snprintf(line, sizeof line, "Patched %d activations in %.1f s: logit difference clean %.3f, corrupted %.3f.",
                  done->total, s.patch.result.seconds, double(s.patch.result.clean_ld), double(s.patch.result.corrupt_ld));
    s.patch.status = line;
}

} // namespace attnviz
