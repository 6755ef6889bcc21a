// fuzz_gpt: the whole-model reader (gpt_io.h's load_gpt) over arbitrary bytes.
//
// Input layout (scripts/make_fuzz_gpt_corpus.py writes seeds in it):
//   byte 0          bits 0-3: --n-head (0: not given); bit 6: load the directory rather
//                   than the file; bit 7: a config.json follows
//   [bit 7 set]     2 bytes, little-endian: n, then n bytes of config.json (fewer if the
//                   input ends first)
//   rest            model.safetensors
// The files go to a private scratch directory (load_gpt maps a path). Besides "no crash,
// no leak, no undefined behaviour, no huge allocation" (ASan, UBSan, -malloc_limit_mb), it
// checks what the reader promises: an error is one line that starts with a path in the
// scratch directory, and a loaded model is one consistent model of its config (every
// tensor has its shape, every weight is finite) that the forward runs on.
#include "gpt_io.h"
#include "gpt_model.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace attnviz;

static void require(bool ok, const char* what, const std::string& detail) {
    if (ok) return;
    std::fprintf(stderr, "broken promise: %s: %s\n", what, detail.c_str());
    std::abort();
}

// The scratch directory's path, in a buffer that outlives every static destructor (the
// atexit handler that removes the directory runs after them).
static char scratch_path[64];

static void remove_scratch() {
    const std::string d = scratch_path;
    ::unlink((d + "/config.json").c_str());
    ::unlink((d + "/model.safetensors").c_str());
    ::rmdir(d.c_str());
}

// Private to this process, in memory when /dev/shm is there. Removed when the fuzzer exits
// normally (after a crash it stays, with the process id in its name).
static std::string scratch() {
    if (!scratch_path[0]) {
        struct stat st {};
        const bool shm = ::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode);
        std::snprintf(scratch_path, sizeof scratch_path, "%s/fuzz_gpt_%d", shm ? "/dev/shm" : "/tmp", int(::getpid()));
        ::mkdir(scratch_path, 0700);
        std::atexit(remove_scratch);
    }
    return scratch_path;
}

static void write_file(const std::string& path, const uint8_t* p, size_t n) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(p), std::streamsize(n));
    require(bool(out), "scratch file written", path);
}

static void check_error(const std::string& error) {
    require(error.rfind(scratch() + "/", 0) == 0 || error.rfind(scratch() + ": ", 0) == 0,
            "error does not start with the path", error);
    require(error.find('\n') == std::string::npos, "error is not one line", error);
    require(error.size() > scratch().size() + 10 && error.size() < 2000, "error length", error);
}

static void check_mat(const Mat& m, int64_t rows, int64_t cols, const char* what) {
    require(m.rows() == rows && m.cols() == cols, "tensor shape", what);
    require(m.allFinite(), "finite values", what);
}

static void check_vec(const Vec& v, int64_t n, bool has, const char* what) {
    require(v.size() == (has ? n : 0), "vector size", what);
    require(v.allFinite(), "finite values", what);
}

static void check_loaded(const Model& m, int n_head) {
    const ModelConfig& c = m.config;
    const std::string bad = validate_gpt(c);
    require(bad.empty(), "config validates", bad);
    require(c.arch == Arch::gpt, "arch gpt", m.source);
    require(n_head == 0 || c.n_head == n_head, "the caller's n_head kept", m.source);
    const int64_t C = c.n_embd;
    check_mat(m.wte, c.vocab, C, "wte");
    check_mat(m.wpe, c.seq_len, C, "wpe");
    require(int(m.h.size()) == c.n_layer, "one block per layer", std::to_string(m.h.size()));
    for (const Block& b : m.h) {
        check_mat(b.attn.c_attn.weight, 3 * C, C, "c_attn");
        check_mat(b.attn.c_proj.weight, C, C, "c_proj");
        check_mat(b.mlp.c_fc.weight, 4 * C, C, "c_fc");
        check_mat(b.mlp.c_proj.weight, C, 4 * C, "mlp.c_proj");
        check_vec(b.ln_1.weight, C, true, "ln_1.weight");
        check_vec(b.ln_1.bias, C, c.bias, "ln_1.bias");
        check_vec(b.ln_2.weight, C, true, "ln_2.weight");
        check_vec(b.ln_2.bias, C, c.bias, "ln_2.bias");
        check_vec(b.attn.c_attn.bias, 3 * C, c.bias, "c_attn.bias");
        check_vec(b.attn.c_proj.bias, C, c.bias, "c_proj.bias");
        check_vec(b.mlp.c_fc.bias, 4 * C, c.bias, "c_fc.bias");
        check_vec(b.mlp.c_proj.bias, C, c.bias, "mlp.c_proj.bias");
    }
    check_vec(m.ln_f.weight, C, true, "ln_f.weight");
    check_vec(m.ln_f.bias, C, c.bias, "ln_f.bias");

    // The model runs, lean and full, on a few tokens cycling through the vocabulary (the
    // sequence is short so that a long block size cannot make the attention the bottleneck).
    std::vector<int> tokens;
    for (int t = 0; t < std::min(c.seq_len, 6); ++t) tokens.push_back(t % c.vocab);
    ModelTrace tr;
    gpt_forward(m, tokens, KernelKind::reference, false, tr);
    require(int(tr.layers.size()) == c.n_layer && int(tr.blocks.size()) == c.n_layer, "a trace per layer",
            std::to_string(tr.layers.size()));
    require(tr.logits.rows() == int64_t(tokens.size()) && tr.logits.cols() == c.vocab, "logits shape", m.source);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const uint8_t flags = data[0];
    size_t at = 1;
    const std::string dir = scratch();
    const std::string config = dir + "/config.json", model = dir + "/model.safetensors";
    ::unlink(config.c_str());
    if (flags & 0x80) {
        size_t n = 0;
        if (size >= at + 2) n = size_t(data[at]) | size_t(data[at + 1]) << 8;
        at = std::min(size, at + 2);
        n = std::min(n, size - at);
        write_file(config, data + at, n);
        at += n;
    }
    write_file(model, data + at, size - at);
    const int n_head = flags & 0x0f;
    std::optional<int> given;
    if (n_head) given = n_head;
    const std::string path = (flags & 0x40) ? dir : model;

    Model m;
    GptFileInfo info;
    std::string error;
    if (load_gpt(path, given, m, info, error)) {
        require(error.empty(), "no error on success", error);
        require(info.file == model, "the file read", info.file);
        check_loaded(m, n_head);
        require(looks_like_gpt(model), "a loaded file looks like a GPT", model);
    } else {
        check_error(error);
        require(m.h.empty() && m.wte.size() == 0, "the model untouched on failure", error);
    }
    return 0;
}
