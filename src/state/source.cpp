// source.cpp: the answers to what the views ask of the source shown (source.h). Each kind
// answers in its own group below, one overload per question; a question is one generic
// std::visit that calls the shown kind's overload, so a kind left without an answer does
// not compile. What is the same for every source of a kind is its SourceKind (source.h).
#include "source.h"
#include "app_state.h"
#include "model_io.h"
#include "state_internal.h"

namespace attnviz {

namespace {

const std::shared_ptr<const TrainedInput> no_model;
const std::shared_ptr<const WeightsFile> no_file;

// What the lesson's module answers, seeded or with a file's layer.
template <class Lesson> struct LessonAnswers {
    static const std::vector<std::string>& words(const Lesson&, const AppState& s) { return s.tokens.applied; }
    static int replacement(const Lesson&, const AppState&, int) { return -1; }
    static bool keeps_generation(const Lesson&) { return true; }
    static const char* saved_note(const Lesson&) { return ""; }
    static void perturb(const Lesson&, AppState& s) { state_detail::apply_lesson_perturbation(s); }
    static int layer_count(const Lesson&) { return 1; }
    static std::string summary(const Lesson&, const AppState& s) { return "seed " + std::to_string(s.config.applied.seed); }
    static std::string token_label(const Lesson&, int token) { return std::to_string(token); }
    static std::string text(const Lesson&, const std::vector<int>&, bool) { return ""; }
    static std::string sequence_field(const Lesson&) { return ""; }
    static std::string title(const Lesson&) { return ""; }
    static bool next_token_head(const Lesson&) { return false; }
    static const std::shared_ptr<const TrainedInput>& model(const Lesson&) { return no_model; }
    static bool received(const Lesson&) { return false; }
    static int vocab(const Lesson&) { return 0; }
    static std::string layer_sentence(const Lesson&, const AppState&) { return ""; }
};

// ---- The lesson's module
struct LessonBlockAnswers : LessonAnswers<LessonBlock> {
    static const std::shared_ptr<const WeightsFile>& weights(const LessonBlock&) { return no_file; }
};

// ---- A weights file's layer in the lesson's module
struct WeightsLayerAnswers : LessonAnswers<WeightsLayer> {
    static const std::shared_ptr<const WeightsFile>& weights(const WeightsLayer& w) { return w.file; }
};

// What both models answer alike.
template <class M> struct ModelAnswers {
    static const std::vector<std::string>& words(const M&, const AppState& s) { return s.shown.words; }
    static int replacement(const M& m, const AppState& s, int p) {
        const ModelConfig& c = m.input->model->config;
        if (s.shown.replace_token >= 0 && s.shown.replace_token < c.vocab) return s.shown.replace_token;
        const std::vector<int>& tok = m.input->tokens;
        const int at = p >= 0 && size_t(p) < tok.size() ? tok[size_t(p)] : 0;
        return (at + 1) % c.vocab; // as attnviz trace --perturb replaces it
    }
    static void perturb(const M&, AppState& s) { state_detail::apply_trained_perturbation(s); }
    static int layer_count(const M& m) { return m.input->model->config.n_layer; }
    static const std::shared_ptr<const TrainedInput>& model(const M& m) { return m.input; }
    static const std::shared_ptr<const WeightsFile>& weights(const M&) { return no_file; }
    static int vocab(const M& m) { return m.input->model->config.vocab; }
    template <class Label> static std::string joined(const std::vector<int>& ids, bool after_text, Label label) {
        std::string out;
        for (int id : ids) out += (out.empty() ? "" : " ") + label(id);
        return (after_text ? " " : "") + out;
    }
};

// ---- A trained toy model
struct ToyModelAnswers : ModelAnswers<ToyModel> {
    static std::string summary(const ToyModel& m, const AppState&) {
        const ModelConfig& c = m.input->model->config;
        return std::string("trained ") + to_string(c.task) + " · L = " + std::to_string(c.n_layer);
    }
    static std::string token_label(const ToyModel& m, int token) { return token_name(m.input->model->config, token); }
    static std::string text(const ToyModel& m, const std::vector<int>& ids, bool after_text) {
        return joined(ids, after_text, [&](int id) { return token_label(m, id); });
    }
    static std::string sequence_field(const ToyModel& m) { return sequence_text(m.input->model->config, m.input->tokens); }
    static std::string title(const ToyModel& m) { return "the " + std::string(to_string(m.input->model->config.task)) + " model"; }
    static bool next_token_head(const ToyModel& m) { return m.input->model->config.has_lm_head(); }
    static bool received(const ToyModel&) { return false; }
    static std::string check(const ToyModel& m, int64_t cap, int64_t) { return state_detail::check_toy(*m.input, cap); }
    static bool parse(const ToyModel& m, const std::string& text, std::vector<int>& tokens, std::string& error) {
        return parse_trained_sequence(m.input->model->config, text, tokens, error);
    }
    static bool answer_tokens(const ToyModel& m, const std::string& text, std::vector<int>& ids, std::string&) {
        std::string e;
        if (parse_trained_sequence(m.input->model->config, text, ids, e)) ids.erase(ids.begin()); // BOS
        else ids.clear();
        return true;
    }
    static const char* one_token_hint(const ToyModel&) { return " (a letter)"; }
    static bool keeps_generation(const ToyModel&) { return true; }
    static const char* saved_note(const ToyModel&) { return ""; }
    static std::string field_text(const ToyModel& m, int id) { return token_label(m, id); }
    static std::string layer_sentence(const ToyModel& m, const AppState& s) {
        const int L = m.input->model->config.n_layer, l = s.shown.layer;
        const std::string input = l == 0 ? "x = wte[token] + wpe[position], the embeddings"
                                         : "x = h + attn(h) of block " + std::to_string(l - 1) + ", the residual stream";
        const std::string output = l + 1 < L ? "its h + attn(h) is block " + std::to_string(l + 1) + "'s input"
                                             : "its h + attn(h) goes to the task heads";
        return "block " + std::to_string(l) + " of " + std::to_string(L) + ": input " + input + "; " + output + ".";
    }
};

// ---- A GPT model (on a page that follows, the teacher's layer as received)
struct GptModelAnswers : ModelAnswers<GptModel> {
    static std::string summary(const GptModel& m, const AppState&) {
        return "GPT · L = " + std::to_string(m.input->model->config.n_layer);
    }
    static std::string token_label(const GptModel& m, int token) {
        if (!m.input->received) return gpt_token_label(m.input->tokenizer.get(), token);
        const auto it = m.input->labels.find(token);
        return it != m.input->labels.end() ? it->second : "#" + std::to_string(token);
    }
    static std::string text(const GptModel& m, const std::vector<int>& ids, bool after_text) {
        if (m.input->tokenizer) return m.input->tokenizer->decode(ids);
        return joined(ids, after_text, [](int id) { return std::to_string(id); });
    }
    static std::string sequence_field(const GptModel& m) { return gpt_sequence_text(*m.input); }
    static std::string title(const GptModel& m) { return m.input->layout + " model"; }
    static bool next_token_head(const GptModel&) { return true; }
    static bool received(const GptModel& m) { return m.input->received; }
    static std::string check(const GptModel& m, int64_t, int64_t gpt_cap) { return state_detail::check_gpt(*m.input, gpt_cap); }
    static bool parse(const GptModel& m, const std::string& text, std::vector<int>& tokens, std::string& error) {
        return parse_gpt_input(*m.input, text, tokens, error);
    }
    static bool answer_tokens(const GptModel& m, const std::string& text, std::vector<int>& ids, std::string& error) {
        if (!m.input->tokenizer) {
            error = "needs the model's tokenizer, which it has none of; give a token id";
            return false;
        }
        ids = m.input->tokenizer->encode(text);
        return true;
    }
    static const char* one_token_hint(const GptModel&) { return " (often with its leading space, e.g. \" Mary\")"; }
    static bool keeps_generation(const GptModel&) { return false; }
    static const char* saved_note(const GptModel&) { return " (without the GPT model, which opens again from its own files with --model)"; }
    static std::string field_text(const GptModel& m, int id) {
        if (const BpeTokenizer* t = m.input->tokenizer.get()) {
            const std::string text = t->decode({id});
            if (t->encode(text) == std::vector<int>{id}) return text;
        }
        return std::to_string(id);
    }
    static std::string layer_sentence(const GptModel& m, const AppState& s) {
        const int L = m.input->model->config.n_layer, l = s.shown.layer;
        return "x = ln_1(residual stream) of layer " + std::to_string(l) + ", the stream being " +
               (l == 0 ? std::string("the embeddings wte + wpe") : "layer " + std::to_string(l - 1) + "'s resid_post") +
               "; then + attn, + mlp(ln_2) " +
               (l + 1 < L ? "into layer " + std::to_string(l + 1) : std::string("into ln_f and the logits")) + ".";
    }
};

// The answers of a kind: a kind missing here does not compile.
template <class K> struct AnswersOf;
template <> struct AnswersOf<LessonBlock> : LessonBlockAnswers {};
template <> struct AnswersOf<WeightsLayer> : WeightsLayerAnswers {};
template <> struct AnswersOf<ToyModel> : ToyModelAnswers {};
template <> struct AnswersOf<GptModel> : GptModelAnswers {};

// The shown kind's answer: `answer(AnswersOf<K>(), source)`, one generic visit (a call,
// not a branch: every kind is asked the same).
template <class F> decltype(auto) ask(const AppState& s, F answer) {
    return std::visit([&](const auto& k) -> decltype(auto) { return answer(AnswersOf<std::decay_t<decltype(k)>>(), k); },
                      s.shown.source);
}

// A model's answer, shown or staged: its kind is model_source(in)'s.
template <class F> decltype(auto) ask_model(const std::shared_ptr<const TrainedInput>& in, F answer) {
    if (in->gpt()) return answer(GptModelAnswers(), GptModel{in});
    return answer(ToyModelAnswers(), ToyModel{in});
}

} // namespace

Source lesson_source(std::shared_ptr<const WeightsFile> weights) {
    if (weights) return WeightsLayer{std::move(weights)};
    return LessonBlock{};
}

Source model_source(std::shared_ptr<const TrainedInput> input) {
    if (input->gpt()) return GptModel{std::move(input)};
    return ToyModel{std::move(input)};
}

const SourceKind& source_kind(const AppState& s) {
    return std::visit([](const auto& k) -> const SourceKind& { return std::decay_t<decltype(k)>::kind; }, s.shown.source);
}

const std::shared_ptr<const TrainedInput>& shown_model(const AppState& s) {
    return ask(s, [](auto a, const auto& k) -> const std::shared_ptr<const TrainedInput>& { return a.model(k); });
}
const std::shared_ptr<const WeightsFile>& shown_weights_file(const AppState& s) {
    return ask(s, [](auto a, const auto& k) -> const std::shared_ptr<const WeightsFile>& { return a.weights(k); });
}
int layer_count(const AppState& s) {
    return ask(s, [](auto a, const auto& k) { return a.layer_count(k); });
}
std::string source_summary(const AppState& s) {
    return ask(s, [&](auto a, const auto& k) { return a.summary(k, s); });
}
std::string model_token_label(const AppState& s, int token) {
    return ask(s, [&](auto a, const auto& k) { return a.token_label(k, token); });
}
std::string model_text(const AppState& s, const std::vector<int>& ids, bool after_text) {
    return ask(s, [&](auto a, const auto& k) { return a.text(k, ids, after_text); });
}
std::string sequence_field_text(const AppState& s) {
    return ask(s, [](auto a, const auto& k) { return a.sequence_field(k); });
}
std::string model_title(const AppState& s) {
    return ask(s, [](auto a, const auto& k) { return a.title(k); });
}
bool has_next_token_head(const AppState& s) {
    return ask(s, [](auto a, const auto& k) { return a.next_token_head(k); });
}
bool received_gpt(const AppState& s) {
    return ask(s, [](auto a, const auto& k) { return a.received(k); });
}
int vocab_size(const AppState& s) {
    return ask(s, [](auto a, const auto& k) { return a.vocab(k); });
}
std::string layer_sentence(const AppState& s) {
    return ask(s, [&](auto a, const auto& k) { return a.layer_sentence(k, s); });
}

const std::vector<std::string>& position_words(const AppState& s) {
    return ask(s, [&](auto a, const auto& k) -> const std::vector<std::string>& { return a.words(k, s); });
}
int replacement_token(const AppState& s, int p) {
    return ask(s, [&](auto a, const auto& k) { return a.replacement(k, s, p); });
}
bool session_keeps_generation(const AppState& s) {
    return ask(s, [](auto a, const auto& k) { return a.keeps_generation(k); });
}
const char* session_saved_note(const AppState& s) {
    return ask(s, [](auto a, const auto& k) { return a.saved_note(k); });
}
void apply_shown_perturbation(AppState& s) {
    ask(s, [&](auto a, const auto& k) { a.perturb(k, s); });
}

const char* attention_input_name(const AppState& s) { return source_kind(s).attention_input; }
const char* layer_word(const AppState& s) { return source_kind(s).layer_word; }
int first_replaceable(const AppState& s) { return source_kind(s).first_replaceable; }
const char* model_noun(const AppState& s) { return source_kind(s).model_noun; }
const char* unembedding_name(const AppState& s) { return source_kind(s).unembedding; }
bool heads_ablatable(const AppState& s) { return source_kind(s).heads_ablatable; }
bool config_fixed(const AppState& s) { return source_kind(s).config_fixed; }
bool generates_tokens(const AppState& s) { return source_kind(s).generates_tokens; }

std::string check_model(const std::shared_ptr<const TrainedInput>& in, int64_t cap, int64_t gpt_cap) {
    if (!in || !in->model) return "there is no model to show";
    return ask_model(in, [&](auto a, const auto& k) { return a.check(k, cap, gpt_cap); });
}
bool parse_model_text(const std::shared_ptr<const TrainedInput>& in, const std::string& text, std::vector<int>& tokens,
                      std::string& error) {
    return ask_model(in, [&](auto a, const auto& k) { return a.parse(k, text, tokens, error); });
}
bool parse_answer_tokens(const std::shared_ptr<const TrainedInput>& in, const std::string& text, std::vector<int>& ids,
                         std::string& error) {
    return ask_model(in, [&](auto a, const auto& k) { return a.answer_tokens(k, text, ids, error); });
}
const char* one_token_hint(const std::shared_ptr<const TrainedInput>& in) {
    return ask_model(in, [](auto a, const auto& k) { return a.one_token_hint(k); });
}
std::string token_field_text(const std::shared_ptr<const TrainedInput>& in, int id) {
    return ask_model(in, [&](auto a, const auto& k) { return a.field_text(k, id); });
}

} // namespace attnviz
