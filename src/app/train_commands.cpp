// train_commands.cpp: attnviz train and attnviz heads; see train_commands.h.
#include "train_commands.h"
#include "atomic_file.h"
#include "commands.h"
#include "config.h"
#include "model_io.h"
#include "text_util.h"
#include "train.h"
#include "train_json.h"
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

namespace attnviz {

using ojson = nlohmann::ordered_json;

// =======================================================================================
// [SECTION] Registration

static TrainArgs train_args;
static HeadsArgs heads_args;

int run_train_command(const CLI::App& sub) {
    if (sub.get_name() == "train") return run_train(train_args);
    if (sub.get_name() == "heads") return run_heads(heads_args);
    return -1;
}

void add_train_commands(CLI::App& app) {
    TrainArgs& t = train_args;
    HeadsArgs& h = heads_args;
    CLI::App* train = app.add_subcommand("train", "Train a toy model on a task (prev, dup, both, induction); JSON of the run");
    train->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    train->add_option("--task", t.task, "prev, dup, both or induction")->type_name("TASK")->required();
    train->add_option("--seed", t.seed, "torch.manual_seed for the weights; the batches use seed + 1 (default 0)")
        ->type_name("N");
    train->add_option("--steps", t.steps, "Adam steps (default per task: 300, 600, 1000, 1500)")->type_name("N");
    train->add_option("--lr", t.lr, "learning rate, above 0 (default 5e-3; 3e-3 for induction)")->type_name("X");
    train->add_option("--batch", t.batch, "sequences per step, 1 to 256 (default 64)")->type_name("B");
    train->add_option("--n-embd", t.n_embd, "C, the embedding width (default 64)")->type_name("C");
    train->add_option("--n-head", t.n_head, "H, heads per block; must divide C (default 2; 4 for both)")->type_name("H");
    train->add_option("--n-layer", t.n_layer, "L, attention blocks (default 1; 2 for induction)")->type_name("L");
    train->add_option("--seq-len", t.seq_len, "T, tokens after BOS (default 16; 24 for induction)")->type_name("T");
    train->add_option("--vocab", t.vocab, "V, the tokens a, b, c, ... (default 16)")->type_name("V");
    train->add_option("--out", t.out, "the trained model, FILE.safetensors (replaced whole, or not at all)")
        ->type_name("FILE")
        ->required();
    train->footer("stdout: one JSON object {task, seed, config {V, T, C, H, L, lr, B, steps}, losses (one\n"
                  "per step, before that step's update), accuracy, head_scores {prev_token, duplicate,\n"
                  "induction: [layer][head]}, seconds}. On a terminal, stderr shows a progress bar.\n"
                  "The file holds the model in nanoGPT's names; attnviz heads and attnviz trace read it.\n"
                  "The same arguments give the same file bit for bit, with any OMP_NUM_THREADS.");

    CLI::App* heads = app.add_subcommand("heads", "Print the head scores of a trained model file as JSON");
    heads->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    heads->add_option("--weights", h.weights, "a model written by attnviz train (or by PyTorch in the same layout)")
        ->type_name("FILE")
        ->required();
    add_ablation_options(*heads, h.ablation, false);
    heads->footer("JSON: {file, task, config {V, T, C, H, L}, accuracy, head_scores {prev_token,\n"
                  "duplicate, induction: [layer][head]}}, computed on fixed probe sequences (docs/training.md).\n"
                  "With --ablate also ablation {heads, mode, before {loss, accuracy}, after {loss, accuracy,\n"
                  "head_scores}, delta {loss, accuracy}}: the task's loss and accuracy on the accuracy probe.");
}

// =======================================================================================
// [SECTION] Shared pieces

static int print_json(const ojson& j) {
    std::cout << j.dump();
    return finish_stdout("JSON");
}

// Before any training: the output can be created where it is asked for. The atomic
// writer's temporary file is made and removed in the target's folder; an existing file
// there is not touched.
static bool check_out_path(const std::string& path, std::string& error) {
    const std::string shown = quote_path(path);
    if (path.empty()) {
        error = "--out is empty; give a file name like model.safetensors";
        return false;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        error = "--out " + shown + " is a directory; give a file name like model.safetensors";
        return false;
    }
    if (!ends_with_nocase(path, ".safetensors")) {
        error = "--out " + shown + " does not end in .safetensors; give a name like model.safetensors";
        return false;
    }
    // The writer's own first step, abandoned: it makes (and removes) its temporary file.
    AtomicFile probe(path);
    return probe.open(error);
}

// An optional integer option: parsed when given, else `fallback`.
static bool int_option(const std::optional<std::string>& text, const char* what, int64_t lo, int64_t hi,
                       int64_t fallback, int64_t& out, std::string& error) {
    out = fallback;
    return !text || parse_int(*text, what, lo, hi, out, error);
}

// =======================================================================================
// [SECTION] Progress on a terminal

namespace {

using Clock = std::chrono::steady_clock;

struct Progress {
    bool on = false;
    int steps = 0;
    Clock::time_point start = Clock::now(), last{};

    void show(int done, float loss, bool final_line) {
        if (!on) return;
        Clock::time_point now = Clock::now();
        if (!final_line && done > 1 && now - last < std::chrono::milliseconds(100)) return;
        last = now;
        const double s = std::chrono::duration<double>(now - start).count();
        const int width = 30, filled = steps > 0 ? int(int64_t(width) * done / steps) : width;
        std::string bar(size_t(filled), '#');
        bar.append(size_t(width - filled), '.');
        std::fprintf(stderr, "\rstep %*d/%d [%s] loss %.4f  %.0f steps/s ", int(std::to_string(steps).size()), done,
                     steps, bar.c_str(), double(loss), s > 0 ? done / s : 0.0);
        if (final_line) std::fputc('\n', stderr);
        std::fflush(stderr);
    }
    void stop() {
        if (on) std::fputc('\n', stderr);
        on = false;
    }
};

} // namespace

// =======================================================================================
// [SECTION] train

int run_train(const TrainArgs& a) {
    std::string error;
    Task task;
    if (!parse_task(a.task, task, error)) return usage_error(error);
    const TrainDefaults d = task_defaults(task);
    ModelConfig c = d.model;
    int64_t seed = 0, steps = 0, batch = 0, v = 0;
    double lr = d.lr;
    if (!int_option(a.seed, "--seed", 0, INT64_MAX - 1, 0, seed, error) ||
        !int_option(a.steps, "--steps", 1, 100'000'000, d.steps, steps, error) ||
        !int_option(a.batch, "--batch", 1, max_train_batch, d.batch, batch, error))
        return usage_error(error);
    struct Size {
        const std::optional<std::string>& text;
        const char* what;
        int& field;
    } sizes[] = {{a.n_embd, "--n-embd", c.n_embd},   {a.n_head, "--n-head", c.n_head}, {a.n_layer, "--n-layer", c.n_layer},
                 {a.seq_len, "--seq-len", c.seq_len}, {a.vocab, "--vocab", c.vocab}};
    for (Size& s : sizes) {
        // Wide bounds here; validate() below says what the task can use.
        if (!int_option(s.text, s.what, 0, 1 << 20, s.field, v, error)) return usage_error(error);
        s.field = int(v);
    }
    if (a.lr) {
        if (!parse_real(*a.lr, "--lr", -1e300, 1e300, lr, error)) return usage_error(error);
        if (!(lr > 0))
            return usage_error("--lr " + escaped(*a.lr, 40) + " is not positive; give a learning rate above 0, e.g. " +
                               (task == Task::induction ? "3e-3" : "5e-3"));
    }
    if (std::string bad = validate(c); !bad.empty()) return usage_error(bad);
    if (!check_out_path(a.out, error)) return usage_error(error);

    Progress progress;
    progress.on = ::isatty(2) == 1;
    progress.steps = int(steps);
    const auto t0 = Clock::now();
    TrainRun run;
    try {
        run = start_training(c, uint64_t(seed), lr, int(batch));
    } catch (const std::invalid_argument& e) { // what the checks above let through, if anything
        return usage_error(e.what());
    }
    for (int s = 0; s < steps; ++s) {
        const float loss = train_step(run);
        if (!std::isfinite(loss)) {
            progress.stop();
            char lr_text[32];
            std::snprintf(lr_text, sizeof lr_text, "%g", lr);
            return usage_error("training diverged at step " + std::to_string(s + 1) + " of " + std::to_string(steps) +
                               " (the loss is not finite) and nothing was written; try a smaller --lr than " + lr_text);
        }
        progress.show(s + 1, loss, s + 1 == steps);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();

    if (!save_model(a.out, run.model, error)) return usage_error(error);
    TrainReport report;
    report.task = task;
    report.seed = seed;
    report.config = c;
    report.lr = lr;
    report.batch = batch;
    report.steps = steps;
    report.seconds = seconds;
    return print_json(train_json(report, run));
}

// =======================================================================================
// [SECTION] heads

int run_heads(const HeadsArgs& a) {
    Model m;
    std::string error;
    if (!load_model(a.weights, m, error)) return usage_error(error);
    Ablation ab;
    if (!to_ablation(a.ablation, m, ab, error)) return usage_error(error);
    // The mean mode's means from the accuracy probe, on the kernel the metrics run on.
    if (ab.mode == AblationMode::mean && !ab.empty())
        compute_ablation_means(m, ablation_probe(m, {}), heads_kernel, ab);
    return print_json(heads_json(m, a.weights, &ab));
}

} // namespace attnviz
