// recompute_gpt.cpp: recompute()'s path for a whole GPT-2 or nanoGPT model (gpt_model.h) in the
// views: the second case, beside the toy models of recompute_model.cpp, of one "model in the
// views" (TrainedInput, shown_model(s)).
//
//   tok (T)        the ids: the text through GPT-2's tokenizer saved beside the model, or
//                  typed as ids when there is none
//   layer l        x = ln_1(h_l), y = attn_l(x)    the Trace every view shows
//                  h_{l+1} = h_l + y + mlp(ln_2(h_l + y))
//   logits         ln_f(h_L) wte^T                 the Model view's next-token predictions
//
// The forward keeps a lean ModelTrace (every layer's attention weights, keys, values and
// residual stream) once full traces would be large, and the layer on screen is recomputed
// whole by gpt_layer_trace. The causality view replaces token p: gpt_update redoes the rows
// from p on, and gpt_causality measures every layer's residual stream and the logits.
#include "app_state.h"
#include "gpt_io.h"
#include "gpt_model.h"
#include "head_detector.h"
#include "hub_cache.h"
#include "model_io.h"
#include "state_internal.h"
#include "text_util.h"
#include <algorithm>
#include <cmath>
#include <filesystem>

namespace attnviz {

using namespace state_detail;

namespace {

int64_t model_floats(const Model& m) {
    int64_t n = m.wte.size() + m.wpe.size() + m.ln_f.weight.size() + m.ln_f.bias.size();
    for (const Block& b : m.h)
        n += b.attn.c_attn.weight.size() + b.attn.c_proj.weight.size() + b.attn.c_attn.bias.size() + b.attn.c_proj.bias.size() +
             b.ln_1.weight.size() + b.ln_1.bias.size() + b.ln_2.weight.size() + b.ln_2.bias.size() + b.mlp.c_fc.weight.size() +
             b.mlp.c_fc.bias.size() + b.mlp.c_proj.weight.size() + b.mlp.c_proj.bias.size();
    return n;
}

// Full traces of every layer above this are kept lean (gpt_model.h).
constexpr int64_t lean_above = int64_t(64) << 20;

int64_t full_layers_bytes(const ModelConfig& c, int T) {
    return int64_t(c.n_layer) * (trace_bytes(block_config(c, T)) + 4 * int64_t(T) * c.n_embd * 4);
}

// One ModelTrace on T tokens: compact (gpt_model.h), every layer's q, k, v, heads' outputs
// and residual stream, h0, h_out, ln_f and the grid's pooled weights; else every layer's
// attention weights, keys, values and residual stream when lean (else the full traces), h0,
// ln_f and the logits.
int64_t model_trace_bytes(const ModelConfig& c, int T) {
    const int64_t t = T, C = c.n_embd, f = 4;
    if (gpt_compact(c, T)) {
        const int64_t pool = (t + compact_grid_side - 1) / compact_grid_side, side = (t + pool - 1) / pool;
        return (int64_t(c.n_layer) * 5 * t * C + 3 * t * C + int64_t(c.n_layer) * c.n_head * side * side) * f;
    }
    const int64_t layers = full_layers_bytes(c, T) > lean_above
                               ? int64_t(c.n_layer) * (int64_t(c.n_head) * t * t + 3 * t * C) * f
                               : full_layers_bytes(c, T);
    return layers + 2 * t * C * f + t * c.vocab * f;
}

// A forward as the command line times it: the reference loops where they take well under
// a second (model_commands.cpp's rule), else the fast kernel.
KernelKind gpt_kernel(const ModelConfig& c, int T, KernelChoice k) {
    if (k == KernelChoice::reference) return KernelKind::reference;
    if (k == KernelChoice::fast) return KernelKind::fast;
    const double work = double(T) * c.n_embd * c.n_embd * 12.0 * c.n_layer + double(T) * c.n_embd * c.vocab;
    return work < 2e8 ? KernelKind::reference : KernelKind::fast;
}

// "1,2,3" or "1 2 3": ids of the model's vocabulary.
bool parse_ids(const ModelConfig& c, const std::string& text, std::vector<int>& out, std::string& error) {
    out.clear();
    std::string item;
    auto flush = [&]() {
        if (item.empty()) return true;
        int64_t v = 0;
        std::string why;
        if (!parse_int(item, "a token id", 0, int64_t(c.vocab) - 1, v, why)) {
            error = quote(item, 20) + " is not a token id of this model; give ids from 0 to " + std::to_string(c.vocab - 1) +
                    " separated by commas or spaces";
            return false;
        }
        out.push_back(int(v));
        item.clear();
        return true;
    };
    for (char ch : text) {
        if (ch == ',' || ch == ' ' || ch == '\t' || ch == '\n') {
            if (!flush()) return false;
        } else {
            item += ch;
        }
    }
    return flush();
}

} // namespace

std::string gpt_token_label(const BpeTokenizer* tok, int id) {
    if (!tok || id < 0 || id >= tok->vocab_size()) return "#" + std::to_string(id);
    std::string text;
    for (char ch : tok->token_bytes(id)) text += ch == ' ' ? std::string("·") : std::string(1, ch);
    return escaped(text);
}

bool gpt_compact(const ModelConfig& c, int T, int64_t above) {
    return int64_t(c.n_layer) * c.n_head * int64_t(T) * T * 4 > above;
}

int64_t gpt_window_bytes(const Model& m, int T) {
    const ModelConfig& c = m.config;
    const int64_t probs = int64_t(c.n_layer) * c.n_head * int64_t(T) * T * 4;
    // The weights, the unperturbed and the changed trace, the shown layer's traces and
    // textures, and the Model view's grid (lazy, up to the renderer's budget; compact: the
    // pooled pictures, which the changed trace does not keep).
    if (gpt_compact(c, T)) {
        const int64_t pool = (int64_t(T) + compact_grid_side - 1) / compact_grid_side;
        const int64_t side = (int64_t(T) + pool - 1) / pool, grid = int64_t(c.n_layer) * c.n_head * side * side * 4;
        return model_floats(m) * 4 + 2 * model_trace_bytes(c, T) - grid + window_bytes(block_config(c, T)) + grid;
    }
    return model_floats(m) * 4 + 2 * model_trace_bytes(c, T) + window_bytes(block_config(c, T)) +
           std::min(probs, head_texture_budget);
}

bool parse_gpt_input(const TrainedInput& in, const std::string& text, std::vector<int>& ids, std::string& error) {
    const ModelConfig& c = in.model->config;
    if (in.tokenizer) {
        ids = in.tokenizer->encode(text);
        for (int id : ids)
            if (id >= c.vocab) {
                error = "the text " + quote(text, 40) + " gives token " + std::to_string(id) + ", which the model's wte of " +
                        std::to_string(c.vocab) + " rows does not have";
                return false;
            }
    } else if (!parse_ids(c, text, ids, error)) {
        if (!in.tokenizer_note.empty()) error += " (" + in.tokenizer_note + ")";
        return false;
    }
    if (ids.empty()) {
        error = in.tokenizer ? "the text is empty; type at least one character" : "no token ids given; type ids such as 464, 3797";
        return false;
    }
    if (ids.size() > size_t(c.seq_len)) {
        error = (in.tokenizer ? "the text is " : "the ids are ") + std::to_string(ids.size()) +
                " tokens, more than the model's block size of " + std::to_string(c.seq_len) + "; give a shorter text";
        return false;
    }
    return true;
}

std::string gpt_sequence_text(const TrainedInput& in) {
    if (in.tokenizer && !in.text.empty()) return in.text;
    std::string out;
    for (int id : in.tokens) out += (out.empty() ? "" : ", ") + std::to_string(id);
    return out;
}

bool read_gpt_input(const std::string& path, std::optional<int> n_head, const std::string& text,
                    const std::string& ids, std::shared_ptr<const TrainedInput>& out, std::string& error) {
    auto m = std::make_shared<Model>();
    auto in = std::make_shared<TrainedInput>();
    GptFileInfo info;
    if (!load_gpt(path, n_head, *m, info, error)) return false;
    in->layout = info.layout;
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir = fs::is_directory(path, ec) ? fs::path(path) : fs::path(path).parent_path();
    auto tok = std::make_shared<BpeTokenizer>();
    std::string why;
    if (!tok->load_dir(dir.empty() ? "." : dir.string(), why)) {
        in->tokenizer_note = "no tokenizer beside the model: " + why;
    } else if (!tok->check_embedding_rows(m->wte.rows(), why)) {
        in->tokenizer_note = "the tokenizer beside the model does not fit it: " + why;
    } else {
        in->tokenizer = std::move(tok);
    }
    in->model = std::move(m);
    in->source = path;
    in->name = hub_id_of_snapshot(path).value_or(""); // a snapshot folder is named by its commit: say "gpt2"
    if (!text.empty() && !ids.empty()) {
        error = "give --text or --tokens, not both";
        return false;
    }
    if (!text.empty() && !in->tokenizer) {
        error = "--text with the GPT model " + quote_path(path) + " needs its tokenizer beside it (" + in->tokenizer_note +
                "); or give the token ids with --tokens, e.g. --tokens 464,3797";
        return false;
    }
    if (!text.empty()) {
        if (!parse_gpt_input(*in, text, in->tokens, error)) return false;
        in->text = text;
    } else if (!ids.empty()) {
        TrainedInput as_ids = *in;
        as_ids.tokenizer.reset();
        as_ids.tokenizer_note.clear();
        if (!parse_gpt_input(as_ids, ids, in->tokens, error)) return false;
    } else if (in->tokenizer) {
        in->text = "When Mary and John went to the store, John gave a drink to";
        if (!parse_gpt_input(*in, in->text, in->tokens, error)) {
            in->text = "The cat sat on the mat.";
            if (!parse_gpt_input(*in, in->text, in->tokens, error)) return false;
        }
    } else {
        const ModelConfig& c = in->model->config;
        for (int t = 0; t < std::min(12, c.seq_len); ++t) in->tokens.push_back(int((int64_t(t % 6) * 7919 + 13) % c.vocab));
    }
    out = std::move(in);
    return true;
}

namespace state_detail {

std::string check_gpt(const TrainedInput& in, int64_t cap) {
    const Model& m = *in.model;
    const ModelConfig& c = m.config;
    const int T = int(in.tokens.size());
    if (T < 1) return "the GPT model needs at least one token";
    if (T > c.seq_len)
        return "the sequence is " + std::to_string(T) + " tokens, more than the model's block size of " +
               std::to_string(c.seq_len) + "; give a shorter text";
    for (size_t t = 0; t < in.tokens.size(); ++t)
        if (in.tokens[t] < 0 || in.tokens[t] >= c.vocab)
            return "position " + std::to_string(t) + " holds token " + std::to_string(in.tokens[t]) +
                   ", outside the model's vocabulary 0.." + std::to_string(c.vocab - 1);
    if (const int64_t need = gpt_window_bytes(m, T); need > cap) {
        int fit = T;
        while (fit > 1 && gpt_window_bytes(m, fit) > cap) fit = fit * 3 / 4;
        return "the model on " + std::to_string(T) + " tokens needs about " + human_bytes(need) +
               " in the window (its weights, two traces and their textures), over the cap of " + human_bytes(cap) +
               (gpt_window_bytes(m, fit) <= cap ? "; give at most about " + std::to_string(fit) + " tokens"
                                                : "; this model is too large for the window, use the command line");
    }
    return "";
}

int64_t gpt_trace_bytes(const Model& m, int T) { return model_trace_bytes(m.config, T); }

HeadScores text_scores(const ModelTrace& t) {
    return t.compact ? t.att_scores : detect_on_text({attention_of(t)});
}

void gpt_forward_state(AppState& s) {
    const Model& m = *shown_model(s)->model;
    const int T = int(shown_model(s)->tokens.size());
    if (gpt_compact(m.config, T, s.gpt_compact_above)) {
        s.kernel = KernelKind::fast; // a compact trace is the fast lean forward's (gpt_model.h)
        gpt_forward_compact(m, shown_model(s)->tokens, s.model_run.model_base);
        return;
    }
    s.kernel = gpt_kernel(m.config, T, s.kernel_choice.applied);
    gpt_forward(m, shown_model(s)->tokens, s.kernel, full_layers_bytes(m.config, T) > lean_above, s.model_run.model_base);
}

} // namespace state_detail

bool set_replacement_text(AppState& s, const std::string& text, std::string& error) {
    const GptModel* gpt = std::get_if<GptModel>(&s.shown.source);
    if (!gpt) {
        error = "the replacement is typed only for a GPT model";
        return false;
    }
    const TrainedInput& in = *gpt->input;
    const ModelConfig& c = in.model->config;
    std::vector<int> ids;
    const bool digits = !text.empty() && text.find_first_not_of("0123456789 ") == std::string::npos;
    if (text.find_first_not_of(' ') == std::string::npos) {
        ids = {-1}; // empty: the next id
    } else if (digits || !in.tokenizer) {
        TrainedInput as_ids = in;
        as_ids.tokenizer.reset();
        as_ids.tokenizer_note.clear();
        if (!parse_gpt_input(as_ids, text, ids, error)) {
            s.error = "Kept the replacement: " + error + ".";
            return false;
        }
    } else {
        ids = in.tokenizer->encode(text);
    }
    if (ids.size() != 1 || ids[0] >= c.vocab) {
        error = quote(text, 30) + " is " + std::to_string(ids.size()) +
                " tokens; type one word that is a single token (e.g. \" dog\", with its space) or one id";
        s.error = "Kept the replacement: " + error + ".";
        return false;
    }
    s.error.clear();
    request_replacement(s, ids[0]);
    if (s.strength == 0.f) request_perturbation(s, s.p, 1.f);
    return true;
}

} // namespace attnviz
