// fuzz_model: the trained-model reader (load_model_from_memory) over arbitrary bytes.
//
// The input is a whole file. Besides "no crash, no leak, no undefined behaviour, no huge
// allocation" (ASan, UBSan, -malloc_limit_mb), it checks what the reader promises
// (model_io.h): an error is one line that starts with the file's name, and a loaded model
// is one consistent model of its config (validate() accepts it, every tensor has the
// layout's shape, the task has exactly its heads, every value is finite) that the
// reference forward runs on.
#include "model_io.h"
#include <cstdio>
#include <cstdlib>

using namespace attnviz;

static const std::string name = "fuzz.safetensors";

static void require(bool ok, const char* what, const std::string& detail) {
    if (ok) return;
    std::fprintf(stderr, "broken promise: %s: %s\n", what, detail.c_str());
    std::abort();
}

static void check_error(const std::string& error) {
    require(error.rfind(name + ": ", 0) == 0, "error does not start with the file name", error);
    require(error.find('\n') == std::string::npos, "error is not one line", error);
    require(error.size() > name.size() + 10 && error.size() < 2000, "error length", error);
}

static void check_shape(const Mat& m, int rows, int cols, const char* what) {
    require(m.rows() == rows && m.cols() == cols, "tensor shape", what);
    require(m.allFinite(), "finite values", what);
}

static void check_loaded(Model& m) {
    const ModelConfig& c = m.config;
    const std::string bad = validate(c);
    require(bad.empty(), "config validates", bad);
    const int V = c.vocab, C = c.n_embd, N = c.n_tokens();
    check_shape(m.wte, V + 1, C, "wte");
    check_shape(m.wpe, N, C, "wpe");
    require(int(m.h.size()) == c.n_layer, "one block per layer", std::to_string(m.h.size()));
    for (const Block& b : m.h) {
        check_shape(b.attn.c_attn.weight, 3 * C, C, "c_attn");
        check_shape(b.attn.c_proj.weight, C, C, "c_proj");
    }
    auto head = [&](const Mat& w, bool has, int rows, const char* what) {
        if (has)
            check_shape(w, rows, C, what);
        else
            require(w.size() == 0, "no head of another task", what);
    };
    head(m.head_prev, c.has_prev_head(), V + 1, "head_prev");
    head(m.head_dup, c.has_dup_head(), 2, "head_dup");
    head(m.lm_head, c.has_lm_head(), V, "lm_head");
    require(parameters(m).size() == model_layout(c).size(), "parameters match the layout", to_string(c.task));

    // The model runs: BOS, then tokens cycling through the vocabulary, to the longest sequence.
    std::vector<int> tokens{c.bos()};
    for (int t = 1; t < N; ++t) tokens.push_back((t - 1) % V);
    ModelTrace tr;
    model_forward(m, tokens, KernelKind::reference, tr);
    require(int(tr.layers.size()) == c.n_layer, "a trace per layer", std::to_string(tr.layers.size()));
    require(tr.h_out.rows() == N && tr.h_out.cols() == C, "output shape", "h_out");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Model m;
    std::string error;
    if (load_model_from_memory(data, size, name, m, error))
        check_loaded(m);
    else
        check_error(error);
    return 0;
}
