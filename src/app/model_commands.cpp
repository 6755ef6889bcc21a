// model_commands.cpp: trace, export and bench with --model; see model_commands.h.
//
// The options are checked here; the trace's JSON is the core's (model_json.h), and bench
// --model times the core and writes its own timings after the same model object.
#include "model_commands.h"
#include "ablation.h"
#include "ablation_json.h"
#include "ablation_options.h"
#include "bench_json.h"
#include "bpe_tokenizer.h"
#include "gpt_io.h"
#include "gpt_model.h"
#include "head_detector.h"
#include "json_writer.h"
#include "logit_lens.h"
#include "model_io.h"
#include "model_json.h"
#include "tensor_files.h"
#include "tensor_table.h"
#include "text_util.h"
#include "train_commands.h"
#include "blas.h"      // blas_core_name: the OpenBLAS kernels in use
#include "work_team.h" // work_team_threads
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <sys/resource.h>

namespace attnviz {

namespace {

// Everything the options say about a GPT run, checked.
struct GptRun {
    Model model;
    GptFileInfo info;
    std::vector<int> tokens;
    KernelKind kernel = KernelKind::fast;
    std::optional<int> layer;
};

} // namespace

KernelKind default_gpt_kernel(const ModelConfig& c, int T) {
    // The reference loops where they take well under a second.
    const double work = double(T) * c.n_embd * c.n_embd * 12.0 * c.n_layer + double(T) * c.n_embd * c.vocab;
    return work < 2e8 ? KernelKind::reference : KernelKind::fast;
}

// The one place that turns --text into GPT token ids: GPT-2's tokenizer from the files saved
// beside the model (vocab.json + merges.txt, or encoder.json + vocab.bpe), in the model's
// directory or the folder of a single-file checkpoint, checked against wte's rows.
bool text_to_gpt_tokens(const Model& m, const std::string& text, const std::string& path, std::vector<int>& out,
                        std::string& error) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir = fs::is_directory(path, ec) ? fs::path(path) : fs::path(path).parent_path();
    const std::string folder = dir.empty() ? std::string(".") : dir.string();
    BpeTokenizer tok;
    std::string why;
    if (!tok.load_dir(folder, why)) {
        error = "--text with the GPT model " + quote_path(path) + " needs its tokenizer beside it: " + why +
                "; or give the token ids with --tokens, e.g. --tokens 464,3797";
        return false;
    }
    if (!tok.check_embedding_rows(m.wte.rows(), why)) {
        error = "--text with the GPT model " + quote_path(path) + ": " + why;
        return false;
    }
    out = tok.encode(text);
    if (out.empty()) {
        error = "--text is empty; give at least one character of text";
        return false;
    }
    for (int id : out)
        if (id >= m.config.vocab) {
            error = "--text " + quote(text, 40) + " gives token " + std::to_string(id) + ", which the model's wte of " +
                    std::to_string(m.config.vocab) + " rows does not have; give tokenizer files saved with this model";
            return false;
        }
    if (out.size() > size_t(m.config.seq_len)) {
        error = "--text " + quote(text, 40) + " is " + std::to_string(out.size()) + " tokens, more than the model's block size of " +
                std::to_string(m.config.seq_len) + "; give a shorter text";
        return false;
    }
    return true;
}

bool parse_token_list(const std::string& text, const ModelConfig& c, std::vector<int>& out, std::string& error) {
    out.clear();
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        std::string item = text.substr(start, comma - start);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        int64_t v = 0;
        std::string why;
        if (!parse_int(item, "a token id", 0, int64_t(c.vocab) - 1, v, why)) {
            error = "--tokens " + quote(text) + ": " + quote(item) + " is not a token id of this model; give ids from 0 to " +
                    std::to_string(c.vocab - 1) + " separated by commas";
            return false;
        }
        out.push_back(int(v));
        if (out.size() > size_t(c.seq_len)) {
            error = "--tokens has more than the model's block size of " + std::to_string(c.seq_len) +
                    " ids; give at most " + std::to_string(c.seq_len);
            return false;
        }
        start = comma + 1;
    }
    return true;
}

namespace {

// Options of the lesson's module that a GPT file fixes itself.
bool check_unused_options(const ConfigOptions& o, std::string& error) {
    auto refuse = [&](const std::string& what) {
        error = what + " does not apply to a --model, whose sizes and weights come from its file; leave it out";
        return false;
    };
    if (o.weights) return refuse("--weights " + quote_path(*o.weights) + " (give --model or --weights, not both)");
    if (o.seed != "0") return refuse("--seed " + quote(o.seed, 40));
    if (o.n_embd) return refuse("--n-embd " + quote(*o.n_embd, 40));
    if (o.mask != "causal") return refuse("--mask " + quote(o.mask, 40));
    if (o.scale != "head-dim") return refuse("--scale " + quote(o.scale, 40));
    return true;
}

bool to_gpt_run(const ConfigOptions& o, bool need_tokens, GptRun& run, std::string& error) {
    if (!check_unused_options(o, error)) return false;
    std::optional<int> n_head;
    int64_t v = 0;
    if (o.n_head) {
        if (!parse_int(*o.n_head, "--n-head", 1, max_n_head, v, error)) return false;
        n_head = int(v);
    }
    if (!load_gpt(*o.model, n_head, run.model, run.info, error)) return false;
    if (!o.model_name.empty() && o.model_name != *o.model) run.info.hub_id = o.model_name;
    const ModelConfig& c = run.model.config;
    if (o.text && o.tokens) {
        error = "give --text or --tokens, not both";
        return false;
    }
    if (o.text && !text_to_gpt_tokens(run.model, *o.text, *o.model, run.tokens, error)) return false;
    if (o.tokens && !parse_token_list(*o.tokens, c, run.tokens, error)) return false;
    if (need_tokens && run.tokens.empty()) {
        error = quote_path(*o.model) + " is a GPT model that reads token ids: give --tokens, e.g. --tokens 464,3797,3332";
        return false;
    }
    if (o.layer) {
        if (!parse_int(*o.layer, "--layer", 0, c.n_layer - 1, v, error)) return false;
        run.layer = int(v);
    }
    if (o.kernel == "reference") run.kernel = KernelKind::reference;
    else if (o.kernel == "fast") run.kernel = KernelKind::fast;
    else if (!o.kernel.empty()) {
        error = "--kernel " + quote(o.kernel, 40) + " is not a kernel; use reference or fast";
        return false;
    } else {
        run.kernel = default_gpt_kernel(c, int(run.tokens.size()));
    }
    return true;
}

bool to_replacement(const ConfigOptions& o, const GptRun& run, int& p, int& id, std::string& error) {
    const int T = int(run.tokens.size());
    int64_t v = 0;
    if (!parse_int(o.perturb, "--perturb", 0, T - 1, v, error)) return false;
    p = int(v);
    id = (run.tokens[size_t(p)] + 1) % run.model.config.vocab;
    if (o.replace) {
        if (!parse_int(*o.replace, "--replace", 0, run.model.config.vocab - 1, v, error)) return false;
        id = int(v);
    }
    return true;
}

} // namespace

// The tokenizer saved beside the model, when there is one that fits wte: the top tokens'
// and the DLA's token as text. None is not an error here (the ids are always written).
std::optional<BpeTokenizer> tokenizer_beside(const Model& m, const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir = fs::is_directory(path, ec) ? fs::path(path) : fs::path(path).parent_path();
    BpeTokenizer tok;
    std::string why;
    if (!tok.load_dir(dir.empty() ? std::string(".") : dir.string(), why) || !tok.check_embedding_rows(m.wte.rows(), why))
        return std::nullopt;
    return tok;
}

int run_model_trace(const TraceArgs& a) {
    const ConfigOptions& o = *&a.config;
    if (is_trained_model_file(*o.model)) {
        TraceArgs toy = a;
        toy.config.weights = *o.model;
        toy.config.model.reset();
        return run_trained_trace(toy);
    }
    GptRun run;
    std::string error;
    if (!to_gpt_run(o, true, run, error)) return usage_error(error);
    int p = -1, id = 0;
    if (!o.perturb.empty() && !to_replacement(o, run, p, id, error)) return usage_error(error);
    if (o.replace && o.perturb.empty())
        return usage_error("--replace " + quote(*o.replace, 40) + " needs --perturb P, the position whose token it replaces");
    Ablation ab;
    const int T = int(run.tokens.size());
    int dla_pos = T - 1;
    if (!to_ablation(a.ablation, run.model, ab, error) || !to_dla_pos(a.ablation, T, T - 1, dla_pos, error))
        return usage_error(error);
    if (ab.mode == AblationMode::mean && !ab.empty())
        compute_ablation_means(run.model, ablation_probe(run.model, run.tokens), run.kernel, ab);

    GptTraceRequest r;
    r.path = *o.model;
    r.tokens = run.tokens;
    r.kernel = run.kernel;
    r.intermediates = a.intermediates;
    r.layer = run.layer;
    if (p >= 0) {
        r.perturb = p;
        r.replacement = id;
    }
    r.ablation = &ab;
    if (a.ablation.dla_pos) r.dla_pos = dla_pos;
    // Only a DLA (with or without an ablation) names tokens: the tokenizer is read for it.
    r.logit_lens = a.logit_lens;
    const std::optional<BpeTokenizer> tok = !ab.empty() || a.ablation.dla_pos || a.logit_lens
                                                ? tokenizer_beside(run.model, *o.model)
                                                : std::nullopt;
    r.tokenizer = tok ? &*tok : nullptr;
    std::ios::sync_with_stdio(false);
    write_gpt_trace_json(std::cout, run.model, run.info, r);
    return finish_stdout("trace");
}

int run_model_export(const ExportArgs& a) {
    const ConfigOptions& o = a.config;
    std::string error;
    if (is_trained_model_file(*o.model))
        return usage_error(quote_path(*o.model) + " is a toy model; export its tensors with trace --model " +
                           quote_path(*o.model) + " --intermediates, or give a GPT model");
    TensorName name;
    GptRun run;
    if (!parse_tensor_name(a.tensor, name, error) || !check_export_path(a.out, error) || !to_gpt_run(o, true, run, error))
        return usage_error(error);
    if (!a.strength.empty()) return usage_error("--strength " + quote(a.strength, 40) + " does not apply to a --model; use --perturb P --replace ID");
    ModelTrace tr;
    gpt_forward(run.model, run.tokens, run.kernel, true, tr);
    if (!o.perturb.empty()) {
        int p = 0, id = 0;
        if (!to_replacement(o, run, p, id, error)) return usage_error(error);
        gpt_update(run.model, p, id, run.kernel, tr);
    }
    Trace one;
    gpt_layer_trace(run.model, tr, run.layer.value_or(0), run.kernel, one);
    if (!export_tensor(a.out, tensor_by_name(one, name), error)) return usage_error(error);
    return 0;
}

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// What the window does when a head's ablate toggle changes (recompute_ablation.cpp), timed
// `repeat` times, each time beside a plain forward: its one trace rerun in place from the first layer whose ablation changed
// (here the first ablated layer), then the next-token loss, the top 5 and the DLA at the
// last position; the toggle cleared again (the rerun back to the clean model, timed on its
// own); and the detector's repeated probe rerun with the ablation from the clean probe's
// kept traces.
AblationBenchTimes time_ablation(const GptRun& run, Ablation& ab, int64_t repeat) {
    const Model& m = run.model;
    const int T = int(run.tokens.size());
    ModelTrace tr;
    gpt_forward(m, run.tokens, run.kernel, true, tr);
    if (ab.mode == AblationMode::mean) compute_ablation_means(m, ablation_probe(m, run.tokens), run.kernel, ab);
    const int64_t V = tr.logits.cols();
    const int token = top_k(softmax_logits(tr.logits.data() + int64_t(T - 1) * V, int(V)), 1)[0].token;
    const int l0 = first_difference(Ablation{}, ab);
    AblationBenchTimes out;
    out.detector_sequences = window_probe_count(m);
    // The window's clean detection, made when the model opened: the ablated one reruns its
    // probe traces from the first ablated layer.
    HeadDetection clean;
    detect_repeat_induction(m, run.kernel, clean, out.detector_sequences);
    for (int64_t i = 0; i < repeat; ++i) {
        // A plain forward in the same iteration: on a busy machine the load changes from
        // one second to the next, and the ratio is of times taken side by side.
        Clock::time_point t0 = Clock::now();
        gpt_forward(m, run.tokens, run.kernel, true, tr);
        out.forward_ms.push_back(ms_since(t0));
        t0 = Clock::now();
        gpt_rerun_from(m, l0, run.kernel, &ab, tr);
        const Clock::time_point t1 = Clock::now();
        const double loss = next_token_loss(tr);
        const Clock::time_point t2 = Clock::now();
        const std::vector<TokenProb> top =
            top_k(softmax_logits(tr.logits.data() + int64_t(T - 1) * V, int(V)), gpt_summary_top_k);
        const Clock::time_point t3 = Clock::now();
        const LogitAttribution dla = logit_attribution(m, tr, T - 1, token, &ab);
        out.rerun_ms.push_back(ms_since(t0));
        auto between = [](Clock::time_point a, Clock::time_point b) {
            return std::chrono::duration<double, std::milli>(b - a).count();
        };
        out.parts_ms[0].push_back(between(t0, t1));
        out.parts_ms[1].push_back(between(t1, t2));
        out.parts_ms[2].push_back(between(t2, t3));
        out.parts_ms[3].push_back(ms_since(t3));
        (void)loss;
        (void)top;
        (void)dla;
        t0 = Clock::now();
        gpt_rerun_from(m, l0, run.kernel, nullptr, tr);
        out.restore_ms.push_back(ms_since(t0));
        HeadDetection d;
        t0 = Clock::now();
        detect_repeat_induction(m, run.kernel, d, out.detector_sequences, detector_repeat_seed, std::nullopt, &ab,
                                &clean);
        out.detector_ms.push_back(ms_since(t0));
        out.with_detector_ms.push_back(out.rerun_ms.back() + out.detector_ms.back());
        out.detector_length = (d.repeat_bos >= 0 ? 1 : 0) + 2 * d.repeat_len;
    }
    return out;
}

} // namespace

int run_model_bench(const BenchArgs& a) {
    ConfigOptions o = a.config;
    std::string error;
    if (is_trained_model_file(*o.model))
        return usage_error(quote_path(*o.model) + " is a toy model; bench --model takes a GPT-2 directory or nanoGPT file");
    const std::optional<std::string> seq_len = o.seq_len;
    o.seq_len.reset();
    const std::string kernel_text = o.kernel;
    if (kernel_text.empty()) o.kernel = "fast"; // the bench times the fast path unless told
    GptRun run;
    const Clock::time_point load0 = Clock::now();
    if (!to_gpt_run(o, false, run, error)) return usage_error(error);
    const double load_ms = ms_since(load0);
    const ModelConfig& c = run.model.config;
    int64_t v = 0;
    if (run.tokens.empty()) {
        // T ids spread over the vocabulary: the timings do not depend on which.
        int T = c.seq_len;
        if (seq_len) {
            if (!parse_int(*seq_len, "--seq-len", 1, c.seq_len, v, error)) return usage_error(error);
            T = int(v);
        }
        for (int t = 0; t < T; ++t) run.tokens.push_back(int((int64_t(t) * 7919 + 13) % c.vocab));
    } else if (seq_len) {
        return usage_error("--seq-len " + quote(*seq_len, 40) + " and --tokens both give T; leave out --seq-len");
    }
    int64_t repeat = 3;
    if (!a.repeat.empty() && !parse_int(a.repeat, "--repeat", 1, 1000, repeat, error)) return usage_error(error);
    const int T = int(run.tokens.size());
    int p = T / 2;
    if (!o.perturb.empty()) {
        if (!parse_int(o.perturb, "--perturb", 0, T - 1, v, error)) return usage_error(error);
        p = int(v);
    }
    Ablation ab;
    if (!to_ablation(a.ablation, run.model, ab, error)) return usage_error(error);

    ModelTrace tr;
    gpt_forward(run.model, run.tokens, run.kernel, true, tr); // warm-up: buffers, pages, threads
    std::vector<double> forward_ms, update_ms, lens_ms, lens_window_ms;
    // The Model view's lens table at 1280 pixels shows 14 positions; it asks for those alone.
    const int window_positions = std::min(T, 14);
    for (int64_t i = 0; i < repeat; ++i) {
        const Clock::time_point t0 = Clock::now();
        gpt_forward(run.model, run.tokens, run.kernel, true, tr);
        forward_ms.push_back(ms_since(t0));
        if (a.logit_lens) {
            const Clock::time_point t1 = Clock::now();
            const LogitLens lens = logit_lens(run.model, tr, run.kernel);
            lens_ms.push_back(ms_since(t1));
            const Clock::time_point t2 = Clock::now();
            const LogitLens shown = logit_lens_range(run.model, tr, run.kernel, T - window_positions, T);
            lens_window_ms.push_back(ms_since(t2));
        }
    }
    // Token p alternates between a replacement and the original: every update is a change.
    const int ids[2] = {(run.tokens[size_t(p)] + 1) % c.vocab, run.tokens[size_t(p)]};
    gpt_update(run.model, p, ids[0], run.kernel, tr);
    for (int64_t i = 0; i < repeat; ++i) {
        const Clock::time_point t0 = Clock::now();
        gpt_update(run.model, p, ids[(i + 1) % 2], run.kernel, tr);
        update_ms.push_back(ms_since(t0));
    }
    GptBenchTimes t;
    if (!ab.empty()) t.ablation_times = time_ablation(run, ab, repeat);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    t.model = &run.model;
    t.info = &run.info;
    t.path = *o.model;
    t.kernel = run.kernel;
    t.T = T;
    t.perturbed_position = p;
    t.repeat = repeat;
    t.load_ms = load_ms;
    t.forward_ms = std::move(forward_ms);
    t.update_ms = std::move(update_ms);
    t.logit_lens_ms = std::move(lens_ms);
    t.logit_lens_window_ms = std::move(lens_window_ms);
    t.lens_window_positions = window_positions;
    t.peak_rss_mb = double(usage.ru_maxrss) / 1024.0; // ru_maxrss is in KiB
    t.threads = detail::work_team_threads();
    t.blas_core = detail::blas_core_name();
    t.ablation = &ab;
    write_gpt_bench_json(std::cout, t);
    return finish_stdout("timings");
}

} // namespace attnviz
