// bench_json.cpp: see bench_json.h.
#include "bench_json.h"
#include "ablation_json.h"
#include "json_writer.h"
#include "model_json.h"
#include <algorithm>

namespace attnviz {

double median_ms(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double useful_flops(const Config& c) {
    const double T = c.seq_len, C = c.n_embd;
    double pairs = c.mask == MaskMode::causal ? T * (T + 1) / 2
                   : c.mask == MaskMode::none ? T * T
                                              : T * (T - 1) / 2;
    return 2 * T * C * 3 * C + 2 * 2 * C * pairs + 2 * T * C * C; // C = head_dim * H
}

static double min_ms(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

void write_lesson_bench_json(std::ostream& out, const LessonBenchTimes& t) {
    const Config& c = t.config;
    const double fwd = median_ms(t.forward_ms), upd = median_ms(t.update_ms);
    const double flops = useful_flops(c);
    JsonWriter w(out);
    w.begin_object();
    w.key("seed"); w.value_int(int64_t(c.seed));
    w.key("n_embd"); w.value_int(c.n_embd);
    w.key("n_head"); w.value_int(c.n_head);
    w.key("T"); w.value_int(c.seq_len);
    w.key("head_dim"); w.value_int(c.head_dim());
    w.key("mask"); w.value_string(to_string(c.mask));
    w.key("scale"); w.value_string(to_string(c.scale));
    w.key("kernel"); w.value_string(to_string(t.kernel));
    w.key("input"); w.value_string(t.text_input ? "text" : "randn");
    w.key("weights"); w.value_string(t.weights_source);
    w.key("has_bias"); w.value_bool(t.has_bias);
    w.key("threads"); w.value_int(t.threads);
    w.key("repeat"); w.value_int(t.repeat);
    w.key("perturbed_position"); w.value_int(t.perturbed_position);
    w.key("forward_ms"); w.value(float(fwd));
    w.key("forward_ms_min"); w.value(float(min_ms(t.forward_ms)));
    w.key("update_ms"); w.value(float(upd));
    w.key("update_ms_min"); w.value(float(min_ms(t.update_ms)));
    w.key("update_first_ms"); w.value(float(median_ms(t.update_first_ms)));
    w.key("forward_cpu_ms"); w.value(float(median_ms(t.forward_cpu_ms)));
    w.key("update_cpu_ms"); w.value(float(median_ms(t.update_cpu_ms)));
    w.key("flops"); w.value(float(flops));
    w.key("gflops"); w.value(float(flops / (fwd * 1e6)));
    w.key("peak_rss_mb"); w.value(float(t.peak_rss_mb));
    w.key("blas_core"); w.value_string(t.blas_core);
    w.key("sgemm_gflops"); w.value(float(t.sgemm_gflops));
    w.key("sgemm_blas_threads_gflops"); w.value(float(t.sgemm_blas_threads_gflops));
    w.end_object();
    w.flush();
}

void write_gpt_bench_json(std::ostream& out, const GptBenchTimes& t) {
    const double fwd = median_ms(t.forward_ms), upd = median_ms(t.update_ms);
    JsonWriter w(out);
    w.begin_object();
    write_gpt_model_info(w, *t.model, *t.info, t.path);
    w.key("kernel"); w.value_string(to_string(t.kernel));
    w.key("T"); w.value_int(t.T);
    w.key("perturbed_position"); w.value_int(t.perturbed_position);
    w.key("repeat"); w.value_int(t.repeat);
    w.key("load_ms"); w.value(float(t.load_ms));
    w.key("forward_ms"); w.value(float(fwd));
    w.key("forward_ms_min"); w.value(float(min_ms(t.forward_ms)));
    w.key("update_ms"); w.value(float(upd));
    w.key("update_ms_min"); w.value(float(min_ms(t.update_ms)));
    w.key("update_over_forward"); w.value(float(upd / fwd));
    w.key("peak_rss_mb"); w.value(float(t.peak_rss_mb));
    w.key("threads"); w.value_int(t.threads);
    w.key("blas_core"); w.value_string(t.blas_core);
    if (!t.logit_lens_ms.empty()) { // logit_lens.h on the forward's trace, after each timed forward
        w.key("logit_lens_ms"); w.value(float(median_ms(t.logit_lens_ms)));
        w.key("logit_lens_over_forward"); w.value(float(median_ms(t.logit_lens_ms) / fwd));
    }
    if (!t.logit_lens_window_ms.empty()) { // the window's table: the positions it shows
        w.key("logit_lens_window_positions"); w.value(t.lens_window_positions);
        w.key("logit_lens_window_ms"); w.value(float(median_ms(t.logit_lens_window_ms)));
        w.key("logit_lens_window_over_forward"); w.value(float(median_ms(t.logit_lens_window_ms) / fwd));
    }
    if (t.ablation && !t.ablation->empty()) {
        const Ablation& ab = *t.ablation;
        const AblationBenchTimes& abt = t.ablation_times;
        w.key("ablation");
        w.begin_object();
        write_ablation_heads(w, ab);
        w.key("first_layer"); w.value_int(ab.first_layer());
        w.key("rerun_ms"); w.value(float(median_ms(abt.rerun_ms)));
        w.key("rerun_ms_min"); w.value(float(min_ms(abt.rerun_ms)));
        const double fwd_beside = median_ms(abt.forward_ms);
        w.key("forward_ms"); w.value(float(fwd_beside));
        w.key("rerun_over_forward"); w.value(float(median_ms(abt.rerun_ms) / fwd_beside));
        w.key("restore_ms"); w.value(float(median_ms(abt.restore_ms)));
        w.key("rerun_parts_ms");
        w.begin_object();
        const char* parts[4] = {"layers", "loss", "top5", "dla"};
        for (int i = 0; i < 4; ++i) { w.key(parts[i]); w.value(float(median_ms(abt.parts_ms[i]))); }
        w.end_object();
        w.key("detector_sequences"); w.value_int(abt.detector_sequences);
        w.key("detector_length"); w.value_int(abt.detector_length);
        w.key("detector_ms"); w.value(float(median_ms(abt.detector_ms)));
        w.key("with_detector_ms"); w.value(float(median_ms(abt.with_detector_ms)));
        w.key("with_detector_over_forward"); w.value(float(median_ms(abt.with_detector_ms) / fwd_beside));
        w.end_object();
    }
    w.end_object();
    w.flush();
}

} // namespace attnviz
