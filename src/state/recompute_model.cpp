// recompute_model.cpp: recompute()'s path for a trained model (model.h) shown in the views
// instead of the lesson's module.
//
//   tok (N)                        BOS first, then the sequence's letters
//   h0 = wte[tok] + wpe[0..N-1]    (N, C)   the walk's step 0
//   block l: x = h_l, y = attn_l(h_l), h_{l+1} = h_l + y
//
// Every view reads one Trace: block `layer`'s. The causality view's slider (the core's
// perturb_model, view_runs.h) blends row p of h0 toward wte[letter] + wpe[p] and runs the
// whole stack again, so every later block sees the change through the residual stream; a
// slider move costs one forward of every block:
// on the reference kernel 0.23 ms (both, N = 9) to 0.61 ms (induction, two blocks, N = 25)
// per move, measured on a 2-core Xeon under load 9, well inside one frame.
#include "app_state.h"
#include "gpt_io.h"
#include "gpt_model.h"
#include "model_io.h"
#include "state_internal.h"
#include "text_input.h"
#include "text_util.h"
#include <algorithm>
#include <limits>

namespace attnviz {

using namespace state_detail;

namespace {

// What the views need of a model run on N tokens: T = N positions, its C and H, and the
// causal mask and ÷ √head_dim it was trained with.
Config trained_config(const ModelConfig& m, int N) { return block_config(m, N); }

// window_bytes for one block, plus every other block's two traces (unperturbed and perturbed).
int64_t trained_window_bytes(const ModelConfig& m, int N) {
    const Config c = trained_config(m, N);
    return window_bytes(c) + 2 * int64_t(m.n_layer - 1) * trace_bytes(c);
}

bool shape_is(const Mat& m, int rows, int cols) { return m.rows() == rows && m.cols() == cols; }

} // namespace

namespace state_detail {

void put_back_model(AppState& s) {
    s.edit_trained = shown_model(s);
    s.edit_layer = s.shown.layer;
}

std::string check_toy(const TrainedInput& in, int64_t cap) {
    const Model& m = *in.model;
    const ModelConfig& c = m.config;
    if (std::string why = validate(c); !why.empty()) return "the trained model cannot be shown: " + why;
    bool shapes = shape_is(m.wte, c.vocab + 1, c.n_embd) && shape_is(m.wpe, c.n_tokens(), c.n_embd) &&
                  int(m.h.size()) == c.n_layer;
    for (const Block& b : m.h)
        shapes = shapes && shape_is(b.attn.c_attn.weight, 3 * c.n_embd, c.n_embd) && shape_is(b.attn.c_proj.weight, c.n_embd, c.n_embd);
    if (!shapes) return "the trained model's tensors do not match its sizes; train or load it again";
    const int N = int(in.tokens.size());
    if (N < 2 || in.tokens[0] != c.bos())
        return "the sequence must be BOS (^) and at least one letter of the vocabulary (" + vocabulary_text(c) + ")";
    if (N > c.n_tokens())
        return "the sequence has " + std::to_string(N - 1) + " letters but the model knows " + std::to_string(c.seq_len) +
               " positions after BOS; give at most " + std::to_string(c.seq_len);
    for (size_t t = 1; t < in.tokens.size(); ++t)
        if (in.tokens[t] < 0 || in.tokens[t] >= c.vocab)
            return "position " + std::to_string(t) + " holds token " + std::to_string(in.tokens[t]) +
                   ", which is not a letter of the vocabulary (" + vocabulary_text(c) + ")";
    if (const int64_t need = trained_window_bytes(c, N); need > cap)
        return "the trained model on " + std::to_string(N) + " tokens needs about " + human_bytes(need) +
               " in the window, over the cap of " + human_bytes(cap) + "; use a shorter sequence";
    return "";
}

void show_new_run(AppState& s, bool same_run) {
    run_model_layer(*shown_model(s)->model, s.shown.layer, s.config.applied, s.kernel, shown_ablation(s), true, s.model_run, s.run, same_run);
    if (!same_run) s.model_view.run_changed = true;
    s.perturb_dirty = s.strength != 0;
    s.upload = UploadRequest{};
    s.upload.full = true;
    s.base_upload = true;
}

// Block `layer`'s trace in every view, unperturbed; the slider is applied after.
void show_model_layer(AppState& s) {
    run_model_layer(*shown_model(s)->model, s.shown.layer, s.config.applied, s.kernel, shown_ablation(s), false, s.model_run, s.run);
}

bool apply_trained(AppState& s) {
    const std::shared_ptr<const TrainedInput> in = s.edit_trained;
    // The lesson's settings a trained model fixes: an edit of one (a key, Show me) is refused.
    std::string fixed;
    if (config_fixed(s) && s.ready) {
        const Config& a = s.config.applied;
        const Config& e = s.config.edit;
        if (e.mask != a.mask || e.scale != a.scale || e.n_embd != a.n_embd || e.n_head != a.n_head ||
            e.seq_len != a.seq_len || e.seed != a.seed)
            fixed = "Kept the trained model's settings: it was trained with C = " + std::to_string(a.n_embd) +
                    ", H = " + std::to_string(a.n_head) + ", the causal mask and ÷ √head_dim, and T follows its "
                    "sequence; press L (Back to the lesson) to change them.";
    }
    if (std::string why = check_model(in, s.memory_cap, s.gpt_memory_cap); !why.empty()) {
        s.error = "Kept what is shown: " + why + ".";
        put_back_model(s);
        s.config.put_back();
        return false;
    }
    const Model& m = *in->model;
    const int N = int(in->tokens.size());
    const Config c = trained_config(m.config, N);
    // Another layer of the model and tokens shown: the forward is kept, the layer recomputed.
    const bool same_run = s.ready && shown_model(s) == in && s.kernel_choice.applied == s.kernel_choice.edit;
    s.error = fixed;
    s.shown.source = model_source(in);
    s.config.applied = c;
    s.config.ask(c);
    s.kernel_choice.apply();
    s.shown.layer = s.edit_layer = std::clamp(s.edit_layer, 0, m.config.n_layer - 1);
    // Every layer's run: a GPT model's forward chooses its kernel (gpt_kernel), a toy model's
    // is the lesson's choice.
    std::visit(Overload{[&](const GptModel&) {
                            if (!same_run) gpt_forward_state(s);
                        },
                        [&](const auto&) {
                            s.kernel = resolve_kernel(s, c, s.kernel_choice.applied);
                            if (!same_run) model_forward(m, in->tokens, s.kernel, s.model_run.model_base);
                        }},
               s.shown.source);
    // A new clean run: its numbers kept, and the heads still ablated applied to it.
    if (!same_run) ablation_after_run(s);
    s.shown.words.clear();
    for (int t : in->tokens) s.shown.words.push_back(model_token_label(s, t));
    s.fields.sequence_field = sequence_field_text(s);
    s.p = std::clamp(s.p, first_replaceable(s), N - 1);
    show_new_run(s, same_run);
    clamp_windows(s);
    s.ready = true;
    s.status = "Showing " + model_title(s) + " (" + in->shown_name() + "), " + layer_word(s) + " " +
               std::to_string(s.shown.layer) + " of " + std::to_string(m.config.n_layer) + ", on " + std::to_string(N) +
               " tokens with the " + to_string(s.kernel) + " kernel.";
    return true;
}

void apply_trained_perturbation(AppState& s) {
    const int N = s.config.applied.seq_len;
    // A toy model's position 0 is BOS, which every sequence starts with and a perturbation
    // never replaces; a GPT model's tokens are replaced whole.
    s.p = std::clamp(s.p, first_replaceable(s), N - 1);
    const int token = s.strength == 0.f ? -1 : replacement_token(s, s.p);
    perturb_model(*shown_model(s)->model, s.shown.layer, s.p, s.strength, token, s.kernel, shown_ablation(s), s.model_run, s.run);
    s.upload.full = true;
}

void leave_trained(AppState& s) {
    s.shown.source = lesson_source(s.weights.applied);
    s.model_run.model_base = ModelTrace{};
    s.model_run.model_perturbed = ModelTrace{};
    s.shown.words.clear();
    s.model_run.dy_out.clear();
    s.model_run.dy_out_summary = DySummary{};
    s.shown.layer = s.edit_layer = 0;
    s.model_run.applied_replace_token = -1;
    s.model_run.causality = GptCausality{};
    // The lesson's module has no heads to ablate: the ablation goes with the model.
    const AblationMode mode = s.ablation.applied.mode;
    s.ablation.applied = s.ablation.edit = Ablation{};
    s.ablation.applied.mode = s.ablation.edit.mode = mode;
    s.ablation.model_clean = ModelTrace{};
    s.ablation.numbers = AblationNumbers{};
}

} // namespace state_detail

void request_layer(AppState& s, int layer) {
    if (layer_count(s) < 2) return; // one layer (the lesson's module): no other to show
    layer = std::clamp(layer, 0, layer_count(s) - 1);
    if (layer == s.edit_layer) return;
    s.edit_layer = layer;
    s.config_dirty = true;
}

void request_replacement(AppState& s, int token) {
    if (token == s.shown.replace_token) return;
    s.shown.replace_token = token;
    s.perturb_dirty = true;
}


bool parse_trained_sequence(const ModelConfig& c, const std::string& text, std::vector<int>& tokens, std::string& error) {
    const std::string vocab = "(" + vocabulary_text(c) + ")";
    if (invalid_utf8_at(text) != std::string::npos) {
        error = "the sequence is not valid UTF-8; type letters of the vocabulary " + vocab;
        return false;
    }
    std::vector<std::string> words = tokenize(text);
    if (!words.empty() && words[0] == "^") words.erase(words.begin()); // BOS is put first anyway
    tokens = {c.bos()};
    for (const std::string& w : words) {
        int t = token_of(c, w);
        if (t >= 0 && t != c.bos()) {
            tokens.push_back(t);
            continue;
        }
        // "abcab" typed without spaces: one letter per position, when every one is a letter.
        std::vector<int> letters;
        for (char ch : w) {
            const int u = token_of(c, std::string(1, ch));
            if (u < 0 || u == c.bos()) break;
            letters.push_back(u);
        }
        if (w.size() > 1 && letters.size() == w.size()) {
            tokens.insert(tokens.end(), letters.begin(), letters.end());
            continue;
        }
        error = quote(w, 20) + " is not a letter of the model's vocabulary " + vocab +
                (t == c.bos() ? "; BOS (^) is put first by attnviz itself" : "; type letters of it, e.g. a b c a b d");
        return false;
    }
    if (tokens.size() < 2) {
        error = "the sequence has no letters; type letters of the vocabulary " + vocab + ", e.g. a b c a b d";
        return false;
    }
    if (tokens.size() > size_t(c.n_tokens())) {
        error = "the sequence has " + std::to_string(tokens.size() - 1) + " letters but the model knows " +
                std::to_string(c.seq_len) + " positions after BOS; give at most " + std::to_string(c.seq_len);
        return false;
    }
    return true;
}

std::vector<int> default_trained_tokens(const ModelConfig& c) {
    std::vector<int> tokens{c.bos()};
    const int letters = std::min(c.vocab, 4);
    for (int i = 0; i < std::min(8, c.seq_len); ++i) tokens.push_back(i % letters);
    return tokens;
}

std::string sequence_text(const ModelConfig& c, const std::vector<int>& tokens) {
    std::string out;
    for (size_t t = 1; t < tokens.size(); ++t) out += (out.empty() ? "" : " ") + token_name(c, tokens[t]);
    return out;
}

bool set_trained_sequence(AppState& s, const std::string& text, std::string& error) {
    const std::shared_ptr<const TrainedInput> now = s.edit_trained ? s.edit_trained : shown_model(s);
    if (!now) {
        error = "no trained model is shown; open one with the weights field first";
        s.error = "Kept the sequence: " + error + ".";
        return false;
    }
    auto in = std::make_shared<TrainedInput>(*now);
    if (!parse_model_text(now, text, in->tokens, error)) {
        s.error = "Kept the sequence: " + error + ".";
        return false;
    }
    in->text = now->tokenizer ? text : ""; // the ids came from text (a toy model has no tokenizer)
    request_trained_model(s, std::move(in));
    return true;
}

bool read_trained_input(const std::string& path, const std::string& text, std::shared_ptr<const TrainedInput>& out,
                        std::string& error) {
    auto m = std::make_shared<Model>();
    if (!load_model(path, *m, error)) return false;
    auto in = std::make_shared<TrainedInput>();
    if (text.empty()) in->tokens = default_trained_tokens(m->config);
    else if (!parse_trained_sequence(m->config, text, in->tokens, error)) return false;
    in->model = std::move(m);
    in->source = path;
    out = std::move(in);
    return true;
}

bool state_detail::stage_read(AppState& s, bool read, std::shared_ptr<const TrainedInput> in, const std::string& error) {
    if (!read) {
        s.status = "Kept what is shown: " + error + ".";
        s.error = s.status;
        return false;
    }
    s.edit_layer = 0;
    request_trained_model(s, std::move(in));
    return true;
}

bool open_trained_file(AppState& s, const std::string& path, const std::string& text, std::string& error) {
    std::shared_ptr<const TrainedInput> in;
    const bool read = read_trained_input(path, text, in, error);
    return stage_read(s, read, std::move(in), error);
}

bool open_model_path(AppState& s, const std::string& path, std::string& error) {
    std::shared_ptr<const TrainedInput> in;
    bool read = false;
    if (path.empty()) error = "no model given; type the path of a GPT-2 directory or a .safetensors model file";
    else if (is_trained_model_file(path)) read = read_trained_input(path, "", in, error);
    else read = read_gpt_input(path, std::nullopt, "", "", in, error);
    return stage_read(s, read, std::move(in), error);
}

} // namespace attnviz
