// source.h: what the views show, as one value. Every view draws the attention of one
// source: the lesson's block, a weights file's layer, a trained toy model's block or a
// whole GPT model's layer. Each alternative holds what only it has, and the questions the
// state and the panels ask of "what is shown" are answered in source.cpp, once for every
// kind, by std::visit. Code elsewhere asks a question (layer_count, input_name, ...) instead
// of testing which kind it is; a fifth source is one more alternative here and one more
// answer to each question there (std::visit names every question left unanswered).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace attnviz {

struct AppState;     // app_state.h
struct TrainedInput; // app_state.h: a model and the tokens the views run it on
struct WeightsFile;  // app_state.h: a safetensors file's attention layer
struct ModelTrace;   // model.h

// What a kind of source is: the same for every source of that kind, declared beside it.
struct SourceKind {
    // The shown layer's attention input, trace.x: "x" (the lesson's module, seeded or a
    // file's layer), "h" (a toy model's block: the residual stream, wte + wpe into block 0),
    // "ln_1(h)" (a GPT layer). Trace, the JSON, the export files and the panels' titles call it
    // x for every source; hover text says which one it is.
    const char* attention_input;
    const char* layer_word;      // a model's unit: "layer" (GPT, the lesson's module), "block" (a toy model)
    int first_replaceable;       // the first position a perturbation may change: 1 for a toy model (0 is BOS)
    const char* model_noun;      // "GPT model", "trained model"; "" for the lesson's module
    // What the logit lens and the direct logit attribution read the residual stream through:
    // "ln_f, then the unembedding wte" (GPT), "the next-token head lm_head" (toy); "" for none.
    const char* unembedding;
    // Heads can be ablated: a model's, whose later layers read them; the lesson's module is
    // one layer with nothing after it.
    bool heads_ablatable;
    // The source fixes the run's sizes, mask and scale (a model was trained with them): the
    // controls show them and the check view's demonstrations that change them are refused.
    bool config_fixed;
    // A step of the Generate view writes a token (a model), or a new random row of x (the
    // lesson's module, which has no tokens).
    bool generates_tokens;
    // The views run every layer (model_run.model_base holds each one's trace, and the Model
    // view's grid draws each layer's own patterns), or the source is one layer whose trace
    // every view draws (the lesson's module: run.trace).
    bool runs_every_layer;
    // The layer shown is one the views chose of the model's n_layer, and they name it ("layer 1
    // · head 0" over the Generate view's picture, its row of the Model view's grid in the accent
    // colour); the lesson's module is its one layer, named nowhere.
    bool names_layer;
    // The token every sequence starts with, as the head detector's explanation writes the
    // repeated sequences: "^" (a toy model's BOS), "<|endoftext|>" (GPT-2's); "" for the
    // lesson's module, which has no tokens.
    const char* bos_text;
    // The way from a head's output to the logit that the direct logit attribution's tooltip
    // adds: " through ln_f with its scale frozen" (GPT); "" for a toy model, whose task head
    // reads the residual stream as it is.
    const char* dla_path;
    // The ablation's numbers hold the top 5 at the predictions' position, before and after
    // (RunSummary::top): a GPT model's; a toy model's task accuracies stand for them.
    bool ablation_top5;
    // The mean ablation's tooltip: what the head's mean is taken over ("" for the lesson's
    // module, which has no heads to ablate).
    const char* mean_ablation_tip;
    // Between two position labels written in a row: "" for GPT (its labels carry their own
    // spaces, ·), " " for letters and words.
    const char* label_separator;
    // The width a token's label is given in a column, as a sample of text: "·WWWWWW" (a GPT-2
    // token, a space and a few letters), "WWWW".
    const char* label_width_sample;
};

// Each alternative holds what only it has and its SourceKind (in the order of the fields
// above); its answers to the questions below that depend on what it holds are in
// source.cpp, grouped by kind.
// The lesson's module: x = torch.randn(1, T, C) (or the words' rows) and the recipe's
// seeded weights.
struct LessonBlock {
    static constexpr SourceKind kind{"x", "layer", 0, "", "", false, false, false, false, false, "", "", false, "", " ", "WWWW"};
};
// The lesson's module with an attention layer read from a safetensors file.
struct WeightsLayer {
    std::shared_ptr<const WeightsFile> file;
    static constexpr SourceKind kind{"x", "layer", 0, "", "", false, false, false, false, false, "", "", false, "", " ", "WWWW"};
};
// A model attnviz train wrote (the Train view's "Open in the views", or a file): one block
// in every view, on its residual stream h; position 0 is BOS.
struct ToyModel {
    std::shared_ptr<const TrainedInput> input;
    static constexpr SourceKind kind{"h", "block", 1, "trained model", "the next-token head lm_head", true, true, true, true, true,
                                     "^", "", false,
                                     "The head's output is set to its mean over the accuracy probe (256 sequences, every "
                                     "position; the clean model's).",
                                     " ", "WWWW"};
};
// A GPT-2 or nanoGPT model: one layer's attention on ln_1(h), over GPT-2's tokens. On a page
// that follows the teacher, the teacher's layer as received (input->received).
struct GptModel {
    std::shared_ptr<const TrainedInput> input;
    static constexpr SourceKind kind{"ln_1(h)", "layer", 0, "GPT model", "ln_f, then the unembedding wte", true, true, true,
                                     true, true, "<|endoftext|>", " through ln_f with its scale frozen", true,
                                     "The head's output is set to its mean over the text's positions (the clean model's).",
                                     "", "·WWWWWW"};
};
using Source = std::variant<LessonBlock, WeightsLayer, ToyModel, GptModel>;

// std::visit(Overload{...}, source): one lambda per alternative, or a generic one for the rest.
template <class... F> struct Overload : F... {
    using F::operator()...;
};
template <class... F> Overload(F...) -> Overload<F...>;

// The source recompute applies: the lesson's module with these weights (nullptr: seeded),
// or a model (a toy or a GPT one, as its config says).
Source lesson_source(std::shared_ptr<const WeightsFile> weights);
Source model_source(std::shared_ptr<const TrainedInput> input);

// The model shown, toy or GPT; nullptr for the lesson's module (seeded or a file's layer).
const std::shared_ptr<const TrainedInput>& shown_model(const AppState& s);
// The weights file shown; nullptr unless the source is a file's layer.
const std::shared_ptr<const WeightsFile>& shown_weights_file(const AppState& s);

// ---- What the views ask of the source

// What kind of source is shown (SourceKind's fields).
const SourceKind& source_kind(const AppState& s);

// The shown layer's attention input, trace.x: "x" (the lesson's module, seeded or a
// file's layer), "h" (a toy model's block: the residual stream, wte + wpe into block 0),
// "ln_1(h)" (a GPT layer). Trace, the JSON, the export files and the panels' titles call it
// x for every source; hover text says which one it is.
const char* attention_input_name(const AppState& s);
// What a model's unit is called: "layer" (GPT, and the lesson's module), "block" (a toy model).
const char* layer_word(const AppState& s);
// The layers the views can page through: a model's n_layer, 1 for the lesson's module.
int layer_count(const AppState& s);
// The first position a perturbation may change: 1 for a toy model (0 is BOS), else 0.
int first_replaceable(const AppState& s);
// What the shown model is called: "GPT model", "trained model"; "" for the lesson's module.
const char* model_noun(const AppState& s);
// The head of the run's line over the views: "seed 0" for the lesson's module (a file's
// layer too), "GPT · L = 12" or "trained induction · L = 2" for a model, which has no seed.
std::string source_summary(const AppState& s);
// A token as the views label it: a toy model's letter, a GPT model's label (or, on a page
// that follows, the label the teacher sent); the id for the lesson's module.
std::string model_token_label(const AppState& s, int token);
// The side panel's field for the tokens shown: a GPT model's text (or its ids, without a
// tokenizer), a toy model's letters (BOS left out); "" for the lesson's module.
std::string sequence_field_text(const AppState& s);
// What the status line calls the shown model: "GPT-2 (Hugging Face) model", "the induction
// model"; "" for the lesson's module.
std::string model_title(const AppState& s);
// Token ids as text: a GPT model's through its tokenizer (else the ids), a toy model's
// letters; "" for the lesson's module. `after_text`: the ids follow other text, so ids and
// letters start with a space (a tokenizer's text has its own).
std::string model_text(const AppState& s, const std::vector<int>& ids, bool after_text);
// The model shown predicts the next token: a GPT model, or a toy model with lm_head.
bool has_next_token_head(const AppState& s);
// What the logit lens and the direct logit attribution read the residual stream through:
// "ln_f, then the unembedding wte" (GPT), "the next-token head lm_head" (toy); "" for none.
const char* unembedding_name(const AppState& s);
// Heads can be ablated: a model's (toy or GPT), whose later layers read them; the lesson's
// module is one layer with nothing after it.
bool heads_ablatable(const AppState& s);
// The source fixes the run's sizes, mask and scale (a model was trained with them): the
// controls show them and the check view's demonstrations that change them are refused.
bool config_fixed(const AppState& s);
// A step of the Generate view writes a token (a model), or a new random row of x (the
// lesson's module, which has no tokens).
bool generates_tokens(const AppState& s);
// The shown model is a teacher's layer on a page that follows (every number received).
bool received_gpt(const AppState& s);
// The labels of the positions on every axis: a model's tokens ("^", "a", ... or GPT's), else
// the words given as input (empty: numbers).
const std::vector<std::string>& position_words(const AppState& s);
// The token that is, or would be, used at position p: the one asked for (request_replacement),
// else the one after the token at p (as attnviz trace --perturb replaces it); -1 for the
// lesson's module, whose perturbation blends toward a random row.
int replacement_token(const AppState& s, int p);
// A session keeps the Generate view's steps and writes them again: the lesson's module and
// a toy model; a GPT model's generation is not kept (it opens again from its own files).
bool session_keeps_generation(const AppState& s);
// What a saved session's status adds: " (without the GPT model, ...)" for a GPT model.
const char* session_saved_note(const AppState& s);
// A new p or strength applied to the run shown (the lesson's input row, or a model's token).
void apply_shown_perturbation(AppState& s);

// ---- What a model answers, shown or staged (its kind is model_source(in)'s)

// "" when the model and its tokens can be shown within `cap` bytes (gui_memory_cap; a whole
// GPT model within `gpt_cap`, gui_gpt_memory_cap), else one sentence naming the value and
// what to do instead.
std::string check_model(const std::shared_ptr<const TrainedInput>& in, int64_t cap, int64_t gpt_cap);
// `text` as the model's input tokens: a GPT model's through its tokenizer (or ids typed), a
// toy model's letters after BOS. False with one sentence in `error` when it cannot.
bool parse_model_text(const std::shared_ptr<const TrainedInput>& in, const std::string& text, std::vector<int>& tokens,
                      std::string& error);
// `text` as the tokens it names, without BOS: a GPT model's through its tokenizer (without
// one: false and one sentence), a toy model's letters (none when they are not letters).
bool parse_answer_tokens(const std::shared_ptr<const TrainedInput>& in, const std::string& text, std::vector<int>& ids,
                         std::string& error);
// How a field gives one token: " (often with its leading space, e.g. \" Mary\")" (GPT),
// " (a letter)" (toy).
const char* one_token_hint(const std::shared_ptr<const TrainedInput>& in);
// Token `id` as a field shows it: a toy model's letter; a GPT model's text when its
// tokenizer reads that text back as `id` alone, else the id.
std::string token_field_text(const std::shared_ptr<const TrainedInput>& in, int id);
// The shown model's vocabulary: its token ids are 0 .. vocab_size - 1; 0 for the lesson's
// module, which has no tokens.
int vocab_size(const AppState& s);
// What the shown layer reads and where its output goes, for the layer strip: "block 1 of 2:
// input x = h + attn(h) of block 0, ..." (a toy model), "x = ln_1(residual stream) of layer
// 1, ..." (GPT); "" for the lesson's module, which is one layer.
std::string layer_sentence(const AppState& s);

} // namespace attnviz
