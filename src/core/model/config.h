// config.h: what one run of the lesson's module is, and whether it makes sense.
//
// The lesson fixes B = 1. The user chooses C (n_embd), H (n_head), T (seq_len), the
// seed, and two teaching switches: which mask and which score scale.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attnviz {

// torch.tril(ones(T, T))            -> causal     (the lesson's)
// no mask at all                    -> none       ("training would silently cheat")
// torch.tril(ones(T, T), diagonal=-1) -> off_by_one (the bug the lesson warns about)
enum class MaskMode { causal, none, off_by_one };

// scores * head_dim^-1/2 (the lesson's), * C^-1/2, or not scaled at all.
enum class ScaleMode { head_dim, n_embd, none };

// reference: plain loops, bit-exact with PyTorch. fast: OpenBLAS products, causal-aware.
enum class KernelKind { reference, fast };

struct Config {
    int n_embd = 8;    // C
    int n_head = 2;    // H
    int seq_len = 4;   // T   (B is always 1)
    uint64_t seed = 0; // torch.manual_seed(seed)
    MaskMode mask = MaskMode::causal;
    ScaleMode scale = ScaleMode::head_dim;

    int head_dim() const { return n_embd / n_head; }
    int64_t param_count() const { return 4 * int64_t(n_embd) * n_embd; } // 3C^2 + C^2
};

// Largest sizes accepted anywhere (command line, GUI, files).
constexpr int max_n_embd = 8192;
constexpr int max_seq_len = 8192;
constexpr int max_n_head = 256;
// Memory cap for one trace (every intermediate of the shape walk), in bytes.
constexpr int64_t default_memory_cap = int64_t(3) << 30; // 3 GiB

// Names as typed on the command line and stored in files.
const char* to_string(MaskMode m);   // "causal", "none", "off-by-one"
const char* to_string(ScaleMode s);  // "head-dim", "n-embd", "none"
const char* to_string(KernelKind k); // "reference", "fast"
// Parse a name; on failure return false and set `error` to one sentence naming the
// value and the allowed names.
bool parse_mask(const std::string& s, MaskMode& out, std::string& error);
bool parse_scale(const std::string& s, ScaleMode& out, std::string& error);
bool parse_kernel(const std::string& s, KernelKind& out, std::string& error);

// Parse a whole number / a finite real number in [lo, hi] from the whole of `text`.
// `what` names the option in the error sentence, e.g. "--n-embd".
bool parse_int(const std::string& text, const char* what, int64_t lo, int64_t hi, int64_t& out,
               std::string& error);
bool parse_real(const std::string& text, const char* what, double lo, double hi, double& out,
                std::string& error);

// Divisors of n, ascending: the n_head values that split C evenly.
std::vector<int> divisors(int n);

// Bytes a full trace of this config holds (see Trace in attention.h).
int64_t trace_bytes(const Config& c);
// "1.5 GiB", "120 MiB": a size in the unit a reader expects.
std::string human_bytes(int64_t bytes);

// Empty when the config is usable; otherwise one sentence that names the bad value
// and says what is allowed, e.g. "n_embd 10 is not divisible by n_head 3; n_head can
// be 1, 2, 5 or 10."
std::string validate(const Config& c, int64_t memory_cap = default_memory_cap);

} // namespace attnviz
