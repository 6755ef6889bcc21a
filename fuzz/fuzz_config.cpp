// fuzz_config: the core's parsers and validate() over arbitrary text and numbers.
//
// The first byte picks the function; the rest is its text, or the numbers of a Config.
// Besides "no crash, no undefined behaviour", it checks each function's promise: a
// success gives a value in range, a failure gives one non-empty line, and validate()
// accepts exactly the configs that are in range and divisible.
#include "ablation.h"
#include "config.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace attnviz;

static void require(bool ok, const char* what, const std::string& detail) {
    if (ok) return;
    std::fprintf(stderr, "broken promise: %s: %s\n", what, detail.c_str());
    std::abort();
}

static void check_error(const std::string& error) {
    require(!error.empty() && error.find('\n') == std::string::npos, "error is one non-empty line", error);
}

template <typename T>
static T take(const uint8_t*& p, size_t& n) {
    T v{};
    size_t k = n < sizeof(T) ? n : sizeof(T);
    std::memcpy(&v, p, k);
    p += k, n -= k;
    return v;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const uint8_t op = data[0] % 7;
    const uint8_t* p = data + 1;
    size_t n = size - 1;
    const std::string text(reinterpret_cast<const char*>(p), n);
    std::string error;

    switch (op) {
    case 0: { // parse_int with ranges from the lesson's options
        const int64_t ranges[][2] = {{1, max_n_embd}, {1, max_n_head}, {0, int64_t(UINT32_MAX)}, {INT64_MIN, INT64_MAX}};
        for (const auto& r : ranges) {
            int64_t v = 0;
            if (parse_int(text, "--n-embd", r[0], r[1], v, error))
                require(v >= r[0] && v <= r[1], "parse_int in range", text);
            else
                check_error(error);
        }
        break;
    }
    case 1: { // parse_real
        double v = 0;
        if (parse_real(text, "--alpha", 0.0, 1.0, v, error))
            require(std::isfinite(v) && v >= 0.0 && v <= 1.0, "parse_real in range", text);
        else
            check_error(error);
        break;
    }
    case 2: { // names round-trip through to_string
        MaskMode m;
        if (parse_mask(text, m, error)) require(text == to_string(m), "mask name", text);
        else check_error(error);
        ScaleMode s;
        if (parse_scale(text, s, error)) require(text == to_string(s), "scale name", text);
        else check_error(error);
        KernelKind k;
        if (parse_kernel(text, k, error)) require(text == to_string(k), "kernel name", text);
        else check_error(error);
        break;
    }
    case 3:
    case 4:
    case 5: { // validate over raw numbers (op 4, 5: small sizes, so that they are often valid)
        Config c;
        c.n_embd = take<int32_t>(p, n);
        c.n_head = take<int32_t>(p, n);
        c.seq_len = take<int32_t>(p, n);
        int64_t cap = take<int64_t>(p, n);
        if (op >= 4) {
            c.n_embd = int(uint32_t(c.n_embd) % (op == 4 ? 64u : 9000u));
            c.n_head = int(uint32_t(c.n_head) % (op == 4 ? 16u : 300u));
            c.seq_len = int(uint32_t(c.seq_len) % (op == 4 ? 64u : 9000u));
            cap = op == 4 ? default_memory_cap : int64_t(uint64_t(cap) % (uint64_t(1) << 40));
        }
        std::string why = validate(c, cap);
        bool sane = c.n_embd >= 1 && c.n_embd <= max_n_embd && c.n_head >= 1 && c.n_head <= max_n_head &&
                    c.seq_len >= 1 && c.seq_len <= max_seq_len && c.n_embd % c.n_head == 0;
        if (why.empty()) {
            require(sane && trace_bytes(c) <= cap, "validate accepted a bad config", std::to_string(c.n_embd));
            require(c.head_dim() * c.n_head == c.n_embd, "head_dim", std::to_string(c.n_embd));
        } else {
            check_error(why);
            require(!sane || trace_bytes(c) > cap, "validate refused a good config", why);
        }
        break;
    }
    case 6: { // the heads to ablate ("0.1,1.0") of a model of 1..4 layers and 1..16 heads, and the mode
        ModelConfig mc;
        mc.n_layer = 1 + int(p[-1] % 4);
        mc.n_head = 1 + int((p[-1] / 4) % 16);
        std::vector<HeadRef> heads;
        if (parse_heads(text, mc, heads, error)) {
            require(!heads.empty(), "parse_heads gave heads", text);
            for (size_t i = 0; i < heads.size(); ++i) {
                require(heads[i].layer >= 0 && heads[i].layer < mc.n_layer && heads[i].head >= 0 && heads[i].head < mc.n_head,
                        "head in range", text);
                require(i == 0 || heads[i - 1] < heads[i], "heads sorted without repeats", text);
            }
        } else {
            check_error(error);
        }
        AblationMode m;
        if (parse_ablation_mode(text, m, error)) require(text == to_string(m), "ablation mode name", text);
        else check_error(error);
        break;
    }
    }
    return 0;
}
