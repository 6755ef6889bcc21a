// generate_state.h: the Generate view's state (issue 30): the shown model writes on, one
// token at a time, with a KV cache (kv_cache.h), and every step is checked against a full
// recompute of the whole sequence.
//
// What is generated from is what the views show: a GPT model's tokens, a toy model's letters
// (BOS first; only a model with a next-token head writes on, generation_support says why
// not), or the lesson's module, which has no tokens: there a Step appends a new random row
// of x (lesson_generator below) through attention_cache_from / attention_step, and nothing is
// sampled.
//
// The UI reads this and calls the request functions; update_generate(), called by
// recompute() once a frame, does every computation.
#pragma once
#include "kv_cache.h"
#include "rng.h"
#include "sampling.h"
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attnviz {

struct AppState;
struct TrainedInput;

// One generated position, as measured when it was made.
struct GenerateStep {
    int token = -1;              // the token written (the lesson's module: -1, a row of x)
    float prob = 0;              // its probability under the options of its step (greedy: the plain softmax's)
    bool drew = false;           // it took one draw of the sampler's generator (not greedy)
    double cached_ms = 0;        // the cached step: kv_step (lesson: attention_step)
    double full_ms = 0;          // the full recompute of the whole sequence's last row on this step
                                 // (-1: not run: Play skips it above generate_rows_check_cap, where
                                 // it takes seconds, and Step runs it)
    // The full recompute's softmax rows 0 .. pos-1 of the kept layer (every head) against the
    // rows the picture kept from earlier steps (-1: not measured, the sequence being too
    // large). Split by how the reference softmax summed them (kernels.h, lane_sum): torch sums
    // a row of fewer than 8 values in order and a longer one in 8 lanes, so a row made while
    // the sequence was shorter than 8 differs in its last bits from the same row of a forward
    // over 8 or more positions. `rows_max_abs`: the rows made the same way as the recompute's
    // (0 exactly on the reference kernel); `rows_max_abs_short`: those made before the sequence
    // reached 8 positions when it now has 8 or more (-1: none).
    double rows_max_abs = -1;
    double rows_max_abs_short = -1;
    // The cached step's last-position logits against the full recompute's (lesson: its new y row).
    double logits_max_abs = -1;
    // The full recompute runs on a worker (a large model: seconds at GPT-2 small's thousand
    // positions); full_ms and the differences arrive when recompute() polls it.
    bool checking = false;
};

// A token and its chance at the last position: `prob` under the options (0 when cut), `logit` raw.
struct TokenChance {
    int token = -1;
    float prob = 0;
    float logit = 0;
};

// The check view's fifth question (why a model can keep the keys and values): a few tokens
// generated greedily with the cache and again by full recomputes, compared.
struct GenerateDemo {
    bool asked = false, computed = false;
    bool scroll = false;              // the check view brings the question into sight once
    std::string why_not;              // one sentence when the shown input cannot generate
    bool lesson = false;              // rows of x (the lesson's module), not tokens
    std::vector<int> cached_tokens, full_tokens;
    double max_abs_logits = 0;        // over every step (lesson: of the new y rows and softmax rows)
    double cached_ms = 0, full_ms = 0; // the steps' total times, each way
    int steps = 0;
    std::string sentence;             // what the numbers say
    bool working = false;             // computing on a worker (a large model)
};

// What a page that follows the teacher's GPT model was sent of the cache (follow_generate.h):
// its sizes only, the keys and values staying on the teacher's computer.
struct CacheSizes {
    int layers = 0, T = 0, C = 0;
};

// A generation read from a session (session_state.h), done by the next update_generate once
// the session's input is shown: the same tokens written again, the options as saved.
struct GenerateRestore {
    bool pending = false;
    SamplingOptions options;
    std::vector<GenerateStep> steps; // token, prob, drew (the lesson's module: one per row of x)
};

struct GenerateWork; // a full recompute or the check question's demonstration on a worker (generate_work.cpp)

// From this many positions on, the reference softmax sums a row in 8 lanes (kernels.h).
constexpr int generate_lane_sum_keys = 8;
// The most rows the lesson's module is grown to here (it has no block size of its own).
constexpr int lesson_generate_rows = 48;
// Above this many softmax values (L H T^2) the full recompute's every row is not compared
// each step (its time is still measured); GPT-2 small passes it near T = 300.
constexpr int64_t generate_rows_check_cap = int64_t(16) << 20;
// A full recompute of about this many multiply-adds (L T (12 C^2 + 2 T C)) or more runs on a
// worker: tens of milliseconds; GPT-2 small passes it at any length, the toy models never.
constexpr double generate_worker_min_macs = 2e8;

struct GenerateState {
    // What is generated from; a change of any of it starts again from the new prompt.
    bool synced = false;
    std::shared_ptr<const TrainedInput> input; // nullptr: the lesson's module
    std::vector<int> source_tokens;
    Config lesson_config;
    Mat lesson_x0;                             // the lesson's x the generation started from
    KernelKind kernel = KernelKind::reference;
    int layer = 0;                             // the layer whose rows the picture keeps

    std::string why_not;       // "": can generate; else one sentence (no next-token head, no causal mask, ...)
    int block = 0;             // the most positions: the model's block size, or lesson_generate_rows
    int prompt_len = 0;        // positions of the prompt (toy: BOS included)
    std::vector<int> tokens;   // prompt + generated (model modes)
    KvCache cache;             // model modes: every layer's keys and values of positions 0 .. T-1
    LayerKv lesson_kv;         // the lesson's module: its one layer's keys and values
    int lesson_T = 0;
    Mat lesson_x;              // (rows, C): the prompt's x and the rows appended
    Mat lesson_y_row;          // (1, C): the last step's output row
    // The lesson's new rows: torch.manual_seed(seed); the weights' draws; x = torch.randn(1, T, C);
    // the replacement row torch.randn(C) (experiment.h); then each Step's row is the next
    // torch.randn(C) of that same generator. Kept per step for Back.
    TorchGenerator lesson_gen;
    std::vector<TorchGenerator> lesson_gen_before;

    std::vector<Mat> rows;     // the picture: per position t, the kept layer's (H, t + 1) softmax rows
    std::vector<int> row_made_at; // per position: the sequence's length when its row was computed
    Vec logits;                // the last position's next-token logits (model modes)
    std::vector<float> probs;  // sampling_probs of them under `options`
    std::vector<TokenChance> top; // the 10 most likely under `options`, most likely first
    std::vector<GenerateStep> steps; // one per generated position
    float cache_range = 1;     // the largest |k| or |v| held: the cache strips' colour range

    SamplingOptions options;   // applied (validated)
    std::string error;         // why the last sampling edit was refused ("" when none)
    int draws = 0;             // draws the sampler's generator has given (one per sampled token)

    bool playing = false;
    double play_interval_ms = 150; // a step at most this often while playing (0: every frame)
    std::chrono::steady_clock::time_point last_play{};
    int step_requests = 0, back_requests = 0;
    bool reset_request = false;
    std::string status;        // what the last request did, or why it did nothing

    GenerateDemo demo;

    // Work on a worker: the last Step's full recompute, or the demonstration. While it runs
    // the other requests wait (the view says "working").
    std::shared_ptr<GenerateWork> work;
    double worker_min_macs = generate_worker_min_macs;
    std::function<void()> worker_started; // called on the worker first (tests hold it there)

    GenerateRestore restore;
    // A page showing the teacher's GPT model (follow_generate.h): everything above was received,
    // nothing is computed here, and rows before rows_from were not sent (the picture's window).
    bool received = false;
    bool received_playing = false; // the teacher's Play
    int rows_from = 0;
    CacheSizes received_cache;
    std::map<int, std::string> received_labels; // the tokens' labels
    std::string received_prompt, received_new;  // the prompt's text and the written text
    int received_short_rows = 0;                // rows kept from before 8 positions (the view's note)
    uint64_t epoch = 0; // counts the changes a page is sent (a step, Back, a new prompt)
};

// Requests, done by the next update_generate (a Step while playing, or at the block size,
// does nothing and says why in status).
void request_generate_step(AppState& s);
void request_generate_back(AppState& s);
void request_generate_reset(AppState& s);
void request_generate_play(AppState& s, bool play);
// Validated at once: a refused edit keeps the previous options and says why in
// s.generate.error (and the return value is false).
bool request_sampling(AppState& s, const SamplingOptions& o);
// The check view's fifth "Show me": computed by the next update_generate.
void request_generate_demo(AppState& s);

// Called by recompute() every frame: follows the shown input (starting again when it
// changed, while the Generate view is shown or something was asked), does the requests and
// Play's steps, and the check question's demonstration.
void update_generate(AppState& s);
// Play is on, or a worker is computing: the loop must not sleep.
bool generate_busy(const AppState& s);
// A worker computes the last step's full recompute or the demonstration.
bool generate_working(const AppState& s);
// recompute() until the worker is done and the steps asked for are taken (a screenshot's
// keys, before the picture); at most `seconds`.
void finish_generate(AppState& s, double seconds = 300);
// The KV cache's sizes as the view draws them (layers, positions, C).
CacheSizes generate_cache_sizes(const AppState& s);

// The prompt's text and the generated text: a GPT model's through its tokenizer (ids when it
// has none), a toy model's letters; the lesson's module: empty.
std::string generate_prompt_text(const AppState& s);
std::string generate_new_text(const AppState& s);
// The shown model's label of a token (as every axis labels it).
std::string generate_token_label(const AppState& s, int token);

} // namespace attnviz
