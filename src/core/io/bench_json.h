// bench_json.h: what `attnviz bench` measured, and its JSON (docs/cli.md documents the keys).
//
// The command times the core's calls and fills one of these; every number it prints (the
// medians, minimums, FLOPs and ratios) is derived here, so src/app only times and prints.
#pragma once
#include "ablation.h"
#include "config.h"
#include "gpt_io.h"
#include "kernels.h"
#include "model.h"
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace attnviz {

// The middle value (the mean of the two middle ones for an even count); v must not be empty.
double median_ms(std::vector<double> v);
// FLOPs the lesson's forward must do: the qkv and proj products, and the score and probs*v
// products over the (query, key) pairs the mask leaves visible (T(T+1)/2 for causal).
double useful_flops(const Config& c);

// bench on the lesson's module (or a weights file): wall and CPU times of the forward and
// of the slider's update at one position.
struct LessonBenchTimes {
    Config config;
    KernelKind kernel = KernelKind::reference;
    bool text_input = false;        // x from --text (else torch.randn)
    std::string weights_source;     // Weights::source
    bool has_bias = false;
    int threads = 1;                // the kernels' work team
    int64_t repeat = 0;
    int perturbed_position = 0;
    std::vector<double> forward_ms, update_ms, update_first_ms, forward_cpu_ms, update_cpu_ms;
    double peak_rss_mb = 0;
    std::string blas_core;
    double sgemm_gflops = 0;              // the qkv shape's product on the work team
    double sgemm_blas_threads_gflops = 0; // the same on OpenBLAS's own threads
};
void write_lesson_bench_json(std::ostream& out, const LessonBenchTimes& t);

// What the window does when a head's ablate toggle changes, timed beside a plain forward.
struct AblationBenchTimes {
    std::vector<double> forward_ms, restore_ms, rerun_ms, detector_ms, with_detector_ms;
    std::vector<double> parts_ms[4]; // of rerun_ms: the layers, the loss, the top 5, the DLA
    int detector_sequences = 0, detector_length = 0;
};

// bench --model: a GPT-2 or nanoGPT model's lean forward and token update, and with
// --ablate the ablation's rerun.
struct GptBenchTimes {
    const Model* model = nullptr;
    const GptFileInfo* info = nullptr;
    std::string path;               // the model as the user gave it
    KernelKind kernel = KernelKind::fast;
    int T = 0;
    int perturbed_position = 0;
    int64_t repeat = 0;
    double load_ms = 0;
    std::vector<double> forward_ms, update_ms;
    double peak_rss_mb = 0;
    int threads = 1;
    std::string blas_core;
    const Ablation* ablation = nullptr; // nullptr or empty: no "ablation" object
    AblationBenchTimes ablation_times;
    std::vector<double> logit_lens_ms; // --logit-lens: the lens on each timed forward's trace; empty: none
    // --logit-lens: the lens on the last lens_window_positions positions alone, as the Model
    // view's table asks for what it shows (logit_lens_range); empty: none.
    std::vector<double> logit_lens_window_ms;
    int lens_window_positions = 0;
};
void write_gpt_bench_json(std::ostream& out, const GptBenchTimes& t);

} // namespace attnviz
