// recompute_model_view.cpp: what the Model view shows that the traces do not hold, computed in
// recompute() so that the view only draws: the head detector's scores (head_detector.h) on
// the shown sequence, with the induction score on repeated random sequences once per model,
// and the next-token predictions (a softmax of the model's logits, top 5) per position.
//
// A trained model: the detector reads every block of the unperturbed forward (model_base),
// the sequence the grid draws. The lesson's module: its one block as the other views show
// it (perturbation included), its positions told apart by the words when given (a repeated
// word is a repeated token), else all distinct, so that it has previous-token scores only.
// A GPT model: as a trained one, through the whole GPT forward, its predictions from the
// logits over its whole vocabulary (decoded as text by the view).
#include "either_model.h"
#include "gpt_model.h"
#include "model_io.h"
#include "state_internal.h"
#include <algorithm>
#include <map>

namespace attnviz {

namespace {

// Below this many logits the whole table is computed at once (the toy models: 17 x 16);
// above it only the positions asked for, one softmax over the vocabulary each.
constexpr int64_t all_predictions_below = int64_t(1) << 20;
constexpr int prediction_count = 5;

std::vector<int> lesson_tokens(const AppState& s) {
    const int T = s.run.trace.T;
    std::vector<int> tok(static_cast<size_t>(T));
    std::map<std::string, int> ids;
    for (int t = 0; t < T; ++t) {
        if (size_t(t) < s.tokens.applied.size()) tok[size_t(t)] = ids.emplace(s.tokens.applied[size_t(t)], int(ids.size())).first->second;
        else tok[size_t(t)] = -1 - t; // no words: every position its own token
    }
    return tok;
}

const Mat& prediction_logits(const AppState& s) { return next_token_logits(*shown_model(s)->model, s.model_run.model_base); }

// Positions with logits: a compact trace keeps none, and makes a row when asked.
int prediction_rows(const AppState& s) {
    if (s.model_run.model_base.compact) return int(s.model_run.model_base.tokens.size());
    return int(prediction_logits(s).rows());
}

bool has_predictions(const AppState& s) {
    return has_next_token_head(s) &&
           prediction_rows(s) > 0;
}

void predict_at(AppState& s, int pos) {
    if (pos < 0 || pos >= prediction_rows(s) || !s.model_view.predictions[size_t(pos)].empty()) return;
    if (s.model_run.model_base.compact) {
        const Mat row = next_token_row(*shown_model(s)->model, s.model_run.model_base, pos);
        s.model_view.predictions[size_t(pos)] = top_k(softmax_logits(row.data(), int(row.cols())), prediction_count);
        return;
    }
    const Mat& logits = prediction_logits(s);
    const std::vector<float> p = softmax_logits(logits.data() + int64_t(pos) * logits.cols(), int(logits.cols()));
    s.model_view.predictions[size_t(pos)] = top_k(p, prediction_count);
}

// The hovered head's weights of a compact trace, when the tooltip needs them.
void compute_hovered_weights(AppState& s) {
    ModelViewState& v = s.model_view;
    const bool wanted = s.model_run.model_base.compact && v.hover_layer >= 0 &&
                        v.hover_layer != s.shown.layer && v.hover_layer < int(s.model_run.model_base.layers.size()) && v.hover_head >= 0;
    if (!wanted || (v.weights_layer == v.hover_layer && v.weights_head == v.hover_head)) return;
    gpt_head_weights(s.model_run.model_base, v.hover_layer, v.hover_head, v.weights);
    v.weights_layer = v.hover_layer;
    v.weights_head = v.hover_head;
}

} // namespace

const Mat* grid_head_weights(const AppState& s, int layer, int head) {
    if (!source_kind(s).runs_every_layer) return size_t(head) < s.run.trace.att.size() ? &s.run.trace.att[size_t(head)] : nullptr;
    if (layer < 0 || size_t(layer) >= s.model_run.model_base.layers.size()) return nullptr;
    const Trace& tr = s.model_run.model_base.layers[size_t(layer)];
    if (size_t(head) < tr.att.size() && tr.att[size_t(head)].rows() == tr.T) return &tr.att[size_t(head)];
    // Compact: the shown layer's unperturbed trace holds them (the forward's bits), the
    // hovered head's are recomputed.
    if (layer == s.shown.layer && s.run.has_base && size_t(head) < s.run.base.att.size()) return &s.run.base.att[size_t(head)];
    if (layer == s.model_view.weights_layer && head == s.model_view.weights_head) return &s.model_view.weights;
    return nullptr;
}

namespace state_detail {

void update_model_view(AppState& s, bool config_changed, bool perturb_changed, bool ablation_changed) {
    if (!s.ready) return;
    if (received_gpt(s)) {
        // A teacher's GPT layer (follow_gpt.h): every number as received, nothing computed.
    } else if (source_kind(s).runs_every_layer) {
        const bool new_run = s.model_view.run_changed || ablation_changed;
        // The detector's numbers are recompute_ablation.cpp's, of the run shown (ablated or clean).
        if (new_run) {
            s.model_view.run_changed = false;
            const AblationNumbers& n = s.ablation.numbers;
            s.model_view.detection = s.ablation.applied.empty() ? n.clean.detection : n.ablated.detection;
            s.model_view.roles = head_roles(s.model_view.detection);
            s.model_view.detected_model = shown_model(s)->model;
            s.model_view.grid_upload = true; // model_base's buffers may have moved
            s.model_view.predictions.assign(size_t(prediction_rows(s)), {});
            s.model_view.weights_layer = s.model_view.weights_head = -1;
            s.model_view.weights = Mat();
        }
        compute_hovered_weights(s);
        update_ablation_position(s);
        update_lens(s, new_run, s.screen.screenshot_mode); // the lens table's cells (lens_state.cpp)
    } else if (config_changed || perturb_changed || s.model_view.detected_model || s.model_view.detection.text.prev_token.empty()) {
        const std::vector<int> tok = lesson_tokens(s);
        SequenceAttention a;
        a.tokens = &tok;
        a.layers.push_back(&s.run.trace.att);
        s.model_view.detection.text = detect_on_text({a});
        s.model_view.detection.repeat_induction.clear();
        s.model_view.detection.repeat_count = s.model_view.detection.repeat_len = 0;
        s.model_view.roles = head_roles(s.model_view.detection);
        if (s.model_view.detected_model) s.model_view.grid_upload = true; // the grid's textures of a model that has gone
        s.model_view.detected_model.reset();
        s.model_view.predictions.clear();
    }
    const int N = s.config.applied.seq_len;
    s.model_view.predict_pos = std::clamp(s.model_view.predict_pos, -1, N - 1);
    if (s.model_view.predict_hover >= N) s.model_view.predict_hover = -1;
    if (!has_predictions(s) || received_gpt(s)) return; // a teacher's layer: its predictions as received
    const Mat& logits = prediction_logits(s);
    if (!s.model_run.model_base.compact && int64_t(logits.rows()) * logits.cols() < all_predictions_below) {
        for (int pos = 0; pos < int(logits.rows()); ++pos) predict_at(s, pos);
    } else {
        predict_at(s, s.model_view.predict_pos < 0 ? N - 1 : s.model_view.predict_pos);
        predict_at(s, s.model_view.predict_hover);
    }
}

} // namespace state_detail

} // namespace attnviz
