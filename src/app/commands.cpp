// commands.cpp: the command-line commands (lesson, trace, bench, export); see commands.h.
//
// Each command checks its texts first (options.h), then computes with the core and prints.
// Bad input ends in usage_error: one sentence on stderr, exit status 2.
#include "commands.h"
#include "bench_json.h"
#include "lesson.h"
#include "formats.h"
#include "text_util.h"
#include "model_commands.h"
#include "model_io.h" // is_trained_model_file
#include "train_commands.h"
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sys/resource.h>
#include <ctime>
#include "work_team.h" // work_team_threads: the threads the kernels use
#include "blas.h"      // the fast kernel's products, timed alone at the qkv shape

namespace attnviz {

// =======================================================================================
// [SECTION] Registration

void add_commands(CLI::App& app, Commands& cmds) {
    // One line each: the top-level --help lists them; details go in each command's footer.
    CLI::App* lesson = app.add_subcommand("lesson", "Print the lesson's four printed lines, computed by attnviz");
    lesson->footer("The lines: y1's shape, the parameter count, max |y1 - y2| at positions 0-1 and,\n"
                   "rounded to 4 places, at positions 2-3 (seed 0, C 8, H 2, T 4, p 2, reference kernel).");

    CLI::App* trace = app.add_subcommand("trace", "Print one run as JSON: the weights, x, y1 and, on request, every intermediate");
    add_config_options(*trace, cmds.trace.config, true, true);
    add_input_options(*trace, cmds.trace.config);
    add_model_file_options(*trace, cmds.trace.config); // --model, --tokens, --replace: model_commands.h
    trace->add_flag("--intermediates", cmds.trace.intermediates,
                    "also print intermediates_for_x: qkv, q, k, v, raw/scaled/masked scores, softmax\n"
                    "probs, head outputs and the concatenation before proj");
    add_ablation_options(*trace, cmds.trace.ablation, true); // with --model or a toy --weights
    trace->add_flag("--logit-lens", cmds.trace.logit_lens,
                    "with a GPT --model: add \"logit_lens\", every layer's residual read through ln_f and\n"
                    "the unembedding (the top 5 tokens and the next token's probability at each position)");

    trace->footer("Fields as in the reference files; with --perturb also x2, y2 and max |y1 - y2| per\n"
                  "position; with --text also text and tokens; with --weights a weights object.\n"
                  "Floats have 9 significant digits (float32 round-trips); NaN and -inf are null.");

    CLI::App* bench = app.add_subcommand("bench", "Time the forward pass and the slider's update_row; print JSON");
    add_config_options(*bench, cmds.bench.config, true, true);
    add_input_options(*bench, cmds.bench.config);
    add_model_file_options(*bench, cmds.bench.config); // --model, --tokens, --replace: model_commands.h
    bench->get_option("--perturb")->description("position P (0 to T-1) the timed update changes (default T/2)");
    bench->add_option("--repeat", cmds.bench.repeat,
                      "timed runs of each (default: enough for about 1 s, 3 to 200)")
        ->type_name("N");
    add_ablation_options(*bench, cmds.bench.ablation, false); // with --model: the ablation's rerun timed
    bench->add_flag("--logit-lens", cmds.bench.logit_lens,
                    "with a GPT --model: also time the logit lens on each forward's trace (logit_lens_ms)");

    bench->footer("forward_ms and update_ms are medians (forward computes every intermediate);\n"
                  "update_first_ms: median of the first update at P after each forward (the fast\n"
                  "kernel then builds what later updates at P reuse; update_ms is one of those);\n"
                  "gflops: the causal FLOPs of one forward per forward_ms; peak_rss_mb: peak memory;\n"
                  "forward_cpu_ms, update_cpu_ms: medians of the CPU time of all threads (on a busy\n"
                  "machine, CPU / wall below the thread count means the threads waited for a core).");

    CLI::App* ex = app.add_subcommand("export", "Write one tensor of the trace to a .npy (float32) or .csv file");
    add_config_options(*ex, cmds.export_args.config, true, true);
    add_input_options(*ex, cmds.export_args.config);
    add_model_file_options(*ex, cmds.export_args.config); // --model, --tokens, --replace: model_commands.h
    ex->get_option("--perturb")->description("export the trace of x with row P (0 to T-1) replaced");
    ex->add_option("--tensor", cmds.export_args.tensor, "the tensor to write: " + tensor_name_list())
        ->type_name("NAME")
        ->required();
    ex->add_option("--out", cmds.export_args.out, "output file, FILE.npy or FILE.csv")
        ->type_name("FILE")
        ->required();
    ex->add_option("--strength", cmds.export_args.strength,
                   "with --perturb: blend row P from x (0) to the replacement (1, default)")
        ->type_name("A");
    ex->footer("Tensors: x (T, C), qkv (T, 3C), q k v (H, T, head_dim), scores (H, T, T: raw q k^T),\n"
               "scaled (scores * scale), masked (scaled with -inf where masked), probs (H, T, T),\n"
               "heads (H, T, head_dim), concat (T, C), y (T, C).\n"
               ".npy: float32, numpy.load gives that shape.\n"
               ".csv: one row per line; a first '# name, shape' comment line and, for per-head\n"
               "tensors, a '# head h' line before each head; -inf and nan written as such.\n"
               "Files are written to a temporary name and renamed, so a failure leaves no half file.");

    CLI::App* save = app.add_subcommand("save-weights", "Write the seeded (or --weights) attention weights to a .safetensors file");
    save->add_option("FILE", cmds.save_weights.out, "the file to write; its name must end in .safetensors")
        ->type_name("")
        ->required();
    add_model_options(*save, cmds.save_weights.config);
    add_weights_options(*save, cmds.save_weights.config);
    save->footer("Writes qkv.weight (3C, C) and proj.weight (C, C), plus qkv.bias and proj.bias when the\n"
                 "weights have them, as float32 with __metadata__ {\"format\": \"pt\", \"n_head\": \"H\"}:\n"
                 "the lesson's state_dict names, so load_state_dict and --weights read it back.\n"
                 "Seeded weights are SelfAttention(C, H) right after torch.manual_seed(N).");

    add_train_commands(app); // train, heads
}

// =======================================================================================
// [SECTION] lesson

static int run_lesson() {
    for (const std::string& line : lesson_lines()) std::printf("%s\n", line.c_str());
    return 0;
}

// =======================================================================================
// [SECTION] trace

static int run_trace(const TraceArgs& a) {
    if (a.logit_lens && (!a.config.model || is_trained_model_file(*a.config.model)))
        return usage_error(std::string("--logit-lens reads a GPT model's residual stream through its ln_f, which ") +
                           (a.config.model ? quote_path(*a.config.model) + " (a toy model)" : "the lesson's module") +
                           " does not have; give a GPT-2 directory or nanoGPT file with --model");
    if (a.config.model) return run_model_trace(a);
    if (wants_trained_trace(a)) return run_trained_trace(a);
    Inputs in;
    TraceJsonRequest r;
    std::string error;
    if (!refuse_ablation_options(a.ablation, "needs a whole model, which the lesson's single module is not; give "
                                             "--model DIR-or-FILE, or --weights with a model attnviz train wrote", error))
        return usage_error(error);
    if (!to_inputs(a.config, in, error) || !to_perturb(a.config, in.config, r.perturb, error) ||
        !to_kernel(a.config, in.config, r.kernel, error))
        return usage_error(error);
    r.intermediates = a.intermediates;
    Experiment e;
    if (!to_experiment(in, e, error)) return usage_error(error);
    if (a.config.text) {
        r.text = a.config.text;
        r.tokens = in.tokens;
    }
    if (in.weights) {
        r.weights = &*in.weights;
        r.weights_path = in.weights_path;
    }

    Trace scratch;
    std::ios::sync_with_stdio(false);
    write_trace_json(std::cout, e, r, scratch);
    return finish_stdout("trace");
}

// =======================================================================================
// [SECTION] bench

using Clock = std::chrono::steady_clock;

static double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// CPU time of every thread of the process: on a busy machine a forward can wait for a
// core, and CPU ms / wall ms says how much of the time it really ran (2 with both cores).
static double process_cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

// The lesson's timed runs on the warm-up's trace: forwards, the first update after a forward, a drag's updates,
// each by wall clock and then by the process's CPU clock.
static void time_lesson_runs(const Config& c, Experiment& e, KernelKind kernel, int p, int64_t repeat, const Vec (&rows)[2],
                             Trace& tr, LessonBenchTimes& t) {
    // Wall times first, CPU times in passes of their own: reading the process's CPU clock
    // is a system call, and the call timed right after one ran about 0.1 us slower at the
    // lesson's size (its caches and branch history were cold).
    std::vector<double>&forward_ms = t.forward_ms, &update_first_ms = t.update_first_ms, &update_ms = t.update_ms,
                        &forward_cpu_ms = t.forward_cpu_ms, &update_cpu_ms = t.update_cpu_ms;
    Clock::time_point t0;
    for (int64_t i = 0; i < repeat; ++i) {
        t0 = Clock::now();
        forward(c, e.weights, e.x, kernel, tr);
        forward_ms.push_back(ms_since(t0));
    }
    for (int64_t i = 0; i < repeat; ++i) {
        const double c0 = process_cpu_ms();
        forward(c, e.weights, e.x, kernel, tr);
        forward_cpu_ms.push_back(process_cpu_ms() - c0);
    }
    // The first update at p after a forward, as when the user starts to drag the slider.
    for (int64_t i = 0; i < repeat; ++i) {
        forward(c, e.weights, e.x, kernel, tr);
        t0 = Clock::now();
        update_row(e.weights, p, rows[0].data(), tr);
        update_first_ms.push_back(ms_since(t0));
    }
    forward(c, e.weights, e.x, kernel, tr);
    // A drag from x (what the trace now holds): its first move (untimed, timed above), then
    // moves alternating between x and the replacement, each a real change of row p.
    update_row(e.weights, p, rows[0].data(), tr);
    for (int64_t i = 0; i < repeat; ++i) {
        t0 = Clock::now();
        update_row(e.weights, p, rows[(i + 1) % 2].data(), tr);
        update_ms.push_back(ms_since(t0));
    }
    for (int64_t i = 0; i < repeat; ++i) {
        const double c0 = process_cpu_ms();
        update_row(e.weights, p, rows[(i + 1) % 2].data(), tr);
        update_cpu_ms.push_back(process_cpu_ms() - c0);
    }

}

static int run_bench(const BenchArgs& a) {
    if (a.logit_lens && !a.config.model)
        return usage_error("--logit-lens times a GPT model's logit lens; give --model with a GPT-2 directory or nanoGPT file");
    if (a.config.model) return run_model_bench(a);
    Inputs in;
    std::optional<int> perturb;
    KernelKind kernel;
    std::string error;
    if (!refuse_ablation_options(a.ablation, "times the ablation of a GPT model's heads; give --model with a GPT-2 "
                                             "directory or nanoGPT file", error))
        return usage_error(error);
    if (!to_inputs(a.config, in, error) || !to_perturb(a.config, in.config, perturb, error) ||
        !to_kernel(a.config, in.config, kernel, error))
        return usage_error(error);
    int64_t repeat = 0;
    if (!a.repeat.empty() && !parse_int(a.repeat, "--repeat", 1, 100000, repeat, error))
        return usage_error(error);
    const Config& c = in.config;
    const int p = perturb ? *perturb : c.seq_len / 2;

    Experiment e;
    if (!to_experiment(in, e, error)) return usage_error(error);
    in.weights.reset(); // the experiment holds its own copy
    Trace tr;
    // The two rows the update alternates between: the replacement (strength 1) and the
    // original (strength 0), so every call really changes row p.
    const Vec rows[2] = {perturbed_row(e, p, 1.f), perturbed_row(e, p, 0.f)};

    // Warm-up: allocates the trace's buffers and sizes the default repeat count.
    Clock::time_point t0 = Clock::now();
    forward(c, e.weights, e.x, kernel, tr);
    double first_forward = ms_since(t0);
    t0 = Clock::now();
    update_row(e.weights, p, rows[0].data(), tr);
    double first_update = ms_since(t0);
    if (repeat == 0)
        repeat = std::clamp<int64_t>(int64_t(std::ceil(1000.0 / std::max(first_forward + first_update, 1e-3))), 3, 200);

    LessonBenchTimes t;
    time_lesson_runs(c, e, kernel, p, repeat, rows, tr, t);

    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    // This machine's own product rate at the qkv shape, (T, C) x (C, 3C), so the forward's
    // GFLOP/s reads as a fraction of it on any machine. Timed last: OpenBLAS's threads,
    // started for the second rate, spin for a moment after it.
    const detail::SgemmRates sgemm = detail::measure_sgemm(c.seq_len, 3 * c.n_embd, c.n_embd,
                                                           detail::work_team_threads(), 8, 0.2);
    t.config = c;
    t.kernel = kernel;
    t.text_input = a.config.text.has_value();
    t.weights_source = e.weights.source;
    t.has_bias = e.weights.has_bias();
    t.threads = detail::work_team_threads();
    t.repeat = repeat;
    t.perturbed_position = p;
    t.peak_rss_mb = double(usage.ru_maxrss) / 1024.0; // ru_maxrss is in KiB
    t.blas_core = detail::blas_core_name();
    t.sgemm_gflops = sgemm.team;
    t.sgemm_blas_threads_gflops = sgemm.blas_threads;
    write_lesson_bench_json(std::cout, t);
    return finish_stdout("timings");
}

int finish_stdout(const char* what) {
    std::cout << '\n';
    std::cout.flush();
    if (!std::cout) {
        std::fprintf(stderr, "attnviz: could not write the %s to stdout\n", what);
        return 1;
    }
    return 0;
}

// =======================================================================================
// [SECTION] export

static int run_export(const ExportArgs& a) {
    if (a.config.model) return run_model_export(a);
    std::optional<int> perturb;
    KernelKind kernel;
    TensorName name;
    std::string error;
    Inputs in;
    if (!parse_tensor_name(a.tensor, name, error) || !check_export_path(a.out, error) ||
        !to_inputs(a.config, in, error) || !to_perturb(a.config, in.config, perturb, error) ||
        !to_kernel(a.config, in.config, kernel, error))
        return usage_error(error);
    const Config& c = in.config;
    double strength = 1.0;
    if (!a.strength.empty()) {
        if (!perturb)
            return usage_error("--strength " + escaped(a.strength, 40) + " needs --perturb P, the position whose row it blends");
        if (!parse_real(a.strength, "--strength", 0.0, 1.0, strength, error)) return usage_error(error);
    }

    Experiment e;
    if (!to_experiment(in, e, error)) return usage_error(error);
    in.weights.reset(); // the experiment holds its own copy
    Trace tr;
    if (perturb) forward(c, e.weights, perturbed_input(e, *perturb, float(strength)), kernel, tr);
    else forward(c, e.weights, e.x, kernel, tr);
    if (!export_tensor(a.out, tensor_by_name(tr, name), error)) return usage_error(error);
    return 0;
}

// =======================================================================================
// [SECTION] save-weights

static int run_save_weights(const SaveWeightsArgs& a) {
    if (!ends_with_nocase(a.out, ".safetensors")) {
        return usage_error("output file " + quote_path(a.out) + " does not end in .safetensors; give a name like attn.safetensors");
    }
    Inputs in;
    std::string error;
    if (!to_inputs(a.config, in, error)) return usage_error(error);
    const Config& c = in.config;
    const int C = c.n_embd;
    Weights w;
    std::string from;
    if (in.weights) {
        w = std::move(in.weights->weights);
        from = in.weights->description;
    } else {
        TorchGenerator gen(c.seed); // torch.manual_seed(seed); SelfAttention(C, H)
        w = init_weights(gen, C);
        from = "seeded SelfAttention(" + std::to_string(C) + ", " + std::to_string(c.n_head) +
               ") after torch.manual_seed(" + std::to_string(c.seed) + ")";
    }
    if (!save_weights(a.out, w, c.n_head, error)) return usage_error(error);
    std::printf("wrote %s: qkv.weight (%d, %d), proj.weight (%d, %d)%s, float32, n_head %d; from %s\n", a.out.c_str(),
                3 * C, C, C, C, w.has_bias() ? ", qkv.bias and proj.bias" : "", c.n_head, from.c_str());
    return 0;
}

// =======================================================================================
// [SECTION] Dispatch

int run_command(const CLI::App& sub, const Commands& cmds) {
    const std::string& name = sub.get_name();
    if (name == "lesson") return run_lesson();
    if (name == "trace") return run_trace(cmds.trace);
    if (name == "bench") return run_bench(cmds.bench);
    if (name == "export") return run_export(cmds.export_args);
    if (name == "save-weights") return run_save_weights(cmds.save_weights);
    if (int status = run_train_command(sub); status >= 0) return status;
    return usage_error("command " + quote(name) + " is not known; use lesson, trace, bench, export, save-weights, train or heads");
}

} // namespace attnviz
