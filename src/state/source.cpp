// source.cpp: the answers to what the views ask of the source shown (source.h), one per
// kind. Each question is one std::visit over the alternatives, so a kind left out does not
// compile.
#include "source.h"
#include "app_state.h"
#include "model_io.h"

namespace attnviz {

namespace {

template <class... F> decltype(auto) ask(const AppState& s, F... answers) {
    return std::visit(Overload{answers...}, s.shown.source);
}

const std::shared_ptr<const TrainedInput> no_model;
const std::shared_ptr<const WeightsFile> no_file;

} // namespace

Source lesson_source(std::shared_ptr<const WeightsFile> weights) {
    if (weights) return WeightsLayer{std::move(weights)};
    return LessonBlock{};
}

Source model_source(std::shared_ptr<const TrainedInput> input) {
    if (input->gpt()) return GptModel{std::move(input)};
    return ToyModel{std::move(input)};
}

const std::shared_ptr<const TrainedInput>& shown_model(const AppState& s) {
    return ask(
        s, [](const ToyModel& m) -> const std::shared_ptr<const TrainedInput>& { return m.input; },
        [](const GptModel& m) -> const std::shared_ptr<const TrainedInput>& { return m.input; },
        [](const auto&) -> const std::shared_ptr<const TrainedInput>& { return no_model; });
}

const std::shared_ptr<const WeightsFile>& shown_weights_file(const AppState& s) {
    return ask(
        s, [](const WeightsLayer& w) -> const std::shared_ptr<const WeightsFile>& { return w.file; },
        [](const auto&) -> const std::shared_ptr<const WeightsFile>& { return no_file; });
}

const char* attention_input_name(const AppState& s) {
    return ask(
        s, [](const LessonBlock&) { return "x"; }, [](const WeightsLayer&) { return "x"; },
        [](const ToyModel&) { return "h"; }, [](const GptModel&) { return "ln_1(h)"; });
}

const char* layer_word(const AppState& s) {
    return ask(
        s, [](const ToyModel&) { return "block"; }, [](const auto&) { return "layer"; });
}

int layer_count(const AppState& s) {
    return ask(
        s, [](const ToyModel& m) { return m.input->model->config.n_layer; },
        [](const GptModel& m) { return m.input->model->config.n_layer; }, [](const auto&) { return 1; });
}

int first_replaceable(const AppState& s) {
    return ask(
        s, [](const ToyModel&) { return 1; }, [](const auto&) { return 0; });
}

const char* model_noun(const AppState& s) {
    return ask(
        s, [](const ToyModel&) { return "trained model"; }, [](const GptModel&) { return "GPT model"; },
        [](const auto&) { return ""; });
}

std::string source_summary(const AppState& s) {
    return ask(
        s,
        [](const ToyModel& m) {
            const ModelConfig& c = m.input->model->config;
            return std::string("trained ") + to_string(c.task) + " · L = " + std::to_string(c.n_layer);
        },
        [](const GptModel& m) { return "GPT · L = " + std::to_string(m.input->model->config.n_layer); },
        [&](const auto&) { return "seed " + std::to_string(s.config.applied.seed); });
}

std::string model_token_label(const AppState& s, int token) {
    return ask(
        s, [&](const ToyModel& m) { return token_name(m.input->model->config, token); },
        [&](const GptModel& m) {
            if (!m.input->received) return gpt_token_label(m.input->tokenizer.get(), token);
            const auto it = m.input->labels.find(token);
            return it != m.input->labels.end() ? it->second : "#" + std::to_string(token);
        },
        [&](const auto&) { return std::to_string(token); });
}

std::string model_text(const AppState& s, const std::vector<int>& ids, bool after_text) {
    auto joined = [&](auto label) {
        std::string out;
        for (int id : ids) out += (out.empty() ? "" : " ") + label(id);
        return (after_text ? " " : "") + out;
    };
    return ask(
        s, [&](const ToyModel&) { return joined([&](int id) { return model_token_label(s, id); }); },
        [&](const GptModel& m) {
            if (m.input->tokenizer) return m.input->tokenizer->decode(ids);
            return joined([](int id) { return std::to_string(id); });
        },
        [](const auto&) { return std::string(); });
}

std::string sequence_field_text(const AppState& s) {
    return ask(
        s, [](const ToyModel& m) { return sequence_text(m.input->model->config, m.input->tokens); },
        [](const GptModel& m) { return gpt_sequence_text(*m.input); }, [](const auto&) { return std::string(); });
}

std::string model_title(const AppState& s) {
    return ask(
        s, [](const ToyModel& m) { return "the " + std::string(to_string(m.input->model->config.task)) + " model"; },
        [](const GptModel& m) { return m.input->layout + " model"; }, [](const auto&) { return std::string(); });
}

bool has_next_token_head(const AppState& s) {
    return ask(
        s, [](const ToyModel& m) { return m.input->model->config.has_lm_head(); }, [](const GptModel&) { return true; },
        [](const auto&) { return false; });
}

const char* unembedding_name(const AppState& s) {
    return ask(
        s, [](const ToyModel&) { return "the next-token head lm_head"; },
        [](const GptModel&) { return "ln_f, then the unembedding wte"; }, [](const auto&) { return ""; });
}

bool heads_ablatable(const AppState& s) {
    return ask(
        s, [](const ToyModel&) { return true; }, [](const GptModel&) { return true; }, [](const auto&) { return false; });
}

bool config_fixed(const AppState& s) {
    return ask(
        s, [](const ToyModel&) { return true; }, [](const GptModel&) { return true; }, [](const auto&) { return false; });
}

bool generates_tokens(const AppState& s) {
    return ask(
        s, [](const ToyModel&) { return true; }, [](const GptModel&) { return true; }, [](const auto&) { return false; });
}

bool received_gpt(const AppState& s) {
    return ask(
        s, [](const GptModel& m) { return m.input->received; }, [](const auto&) { return false; });
}

} // namespace attnviz
