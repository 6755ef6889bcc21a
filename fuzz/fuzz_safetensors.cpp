// fuzz_safetensors: the safetensors reader and the naming schemes over arbitrary bytes.
//
// The input is a whole file. Besides "no crash, no leak, no undefined behaviour, no huge
// allocation" (ASan, UBSan, -malloc_limit_mb), it checks what the reader promises:
// an error is one line that starts with the file's name, and loaded weights have the
// shapes, head count and finite values that the rest of attnviz relies on.
#include "config.h"
#include "safetensors.h"
#include "weights_io.h"
#include <cmath>
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

static void check_loaded(const LoadedWeights& w, std::optional<int> n_head) {
    const int C = w.n_embd;
    require(C >= 1 && C <= max_n_embd, "n_embd range", w.description);
    require(w.n_head >= 1 && C % w.n_head == 0, "n_head divides n_embd", w.description);
    require(!n_head || *n_head == w.n_head, "caller's n_head kept", w.description);
    require(w.weights.c_attn.weight.rows() == 3 * C && w.weights.c_attn.weight.cols() == C, "c_attn.weight shape", w.description);
    require(w.weights.c_proj.weight.rows() == C && w.weights.c_proj.weight.cols() == C, "c_proj.weight shape", w.description);
    require(w.weights.c_attn.bias.size() == 0 || w.weights.c_attn.bias.size() == 3 * C, "c_attn.bias size", w.description);
    require(w.weights.c_proj.bias.size() == 0 || w.weights.c_proj.bias.size() == C, "c_proj.bias size", w.description);
    require(w.weights.c_attn.weight.allFinite() && w.weights.c_proj.weight.allFinite() && w.weights.c_attn.bias.allFinite() &&
                w.weights.c_proj.bias.allFinite(),
            "finite weights", w.description);
    require(w.description.rfind(name + ": ", 0) == 0, "description names the file", w.description);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // 1. The container: every tensor's range lies inside the data, and decodes.
    SafetensorsFile file;
    std::string error;
    if (parse_safetensors(data, size, name, file, error)) {
        require(file.data_start() + file.data_bytes == size, "sizes add up", name);
        for (const TensorInfo& t : file.tensors) {
            require(t.begin <= t.end && t.end <= file.data_bytes, "range inside the data", t.name);
            std::vector<float> v;
            std::string e;
            if (decode_tensor(file, t, data + file.data_start() + t.begin, v, e))
                require(v.size() == t.numel(), "decoded size", t.name);
            else
                check_error(e);
        }
    } else {
        check_error(error);
    }

    // 2. The schemes, with n_head from the file and from the caller, and two layers.
    const std::optional<int> heads[] = {std::nullopt, 1 + int(size % 7)};
    for (std::optional<int> n_head : heads) {
        for (int layer : {0, 1}) {
            LoadedWeights w;
            std::string e;
            if (load_weights_from_memory(data, size, name, n_head, layer, w, e))
                check_loaded(w, n_head);
            else
                check_error(e);
        }
    }
    return 0;
}
