// config.cpp: names, parsing and validation of a Config; see config.h.
#include "config.h"
#include "text_util.h"
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace attnviz {

const char* to_string(MaskMode m) {
    switch (m) {
    case MaskMode::causal: return "causal";
    case MaskMode::none: return "none";
    case MaskMode::off_by_one: return "off-by-one";
    }
    return "?";
}

const char* to_string(ScaleMode s) {
    switch (s) {
    case ScaleMode::head_dim: return "head-dim";
    case ScaleMode::n_embd: return "n-embd";
    case ScaleMode::none: return "none";
    }
    return "?";
}

const char* to_string(KernelKind k) { return k == KernelKind::reference ? "reference" : "fast"; }


bool parse_mask(const std::string& s, MaskMode& out, std::string& error) {
    for (MaskMode m : {MaskMode::causal, MaskMode::none, MaskMode::off_by_one})
        if (s == to_string(m)) { out = m; return true; }
    error = "mask " + quote(s, 40) + " is not known; use causal, none or off-by-one";
    return false;
}

bool parse_scale(const std::string& s, ScaleMode& out, std::string& error) {
    for (ScaleMode m : {ScaleMode::head_dim, ScaleMode::n_embd, ScaleMode::none})
        if (s == to_string(m)) { out = m; return true; }
    error = "scale " + quote(s, 40) + " is not known; use head-dim, n-embd or none";
    return false;
}

bool parse_kernel(const std::string& s, KernelKind& out, std::string& error) {
    for (KernelKind k : {KernelKind::reference, KernelKind::fast})
        if (s == to_string(k)) { out = k; return true; }
    error = "kernel " + quote(s, 40) + " is not known; use reference or fast";
    return false;
}

bool parse_int(const std::string& text, const char* what, int64_t lo, int64_t hi, int64_t& out,
               std::string& error) {
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(begin, &end, 10);
    bool whole = !text.empty() && end == begin + text.size() && !std::isspace((unsigned char)text[0]);
    if (!whole) {
        error = std::string(what) + " " + quote(text, 40) + " is not a whole number; give one from " +
                std::to_string(lo) + " to " + std::to_string(hi);
        return false;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        error = std::string(what) + " " + escaped(text, 40) + " is out of range; give one from " +
                std::to_string(lo) + " to " + std::to_string(hi);
        return false;
    }
    out = v;
    return true;
}

bool parse_real(const std::string& text, const char* what, double lo, double hi, double& out,
                std::string& error) {
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(begin, &end);
    bool whole = !text.empty() && end == begin + text.size() && !std::isspace((unsigned char)text[0]);
    std::ostringstream range;
    range << lo << " to " << hi;
    if (!whole || !std::isfinite(v)) {
        error = std::string(what) + " " + quote(text, 40) + " is not a number; give one from " + range.str();
        return false;
    }
    if (v < lo || v > hi) {
        error = std::string(what) + " " + escaped(text, 40) + " is out of range; give one from " + range.str();
        return false;
    }
    out = v;
    return true;
}

std::vector<int> divisors(int n) {
    std::vector<int> d;
    for (int i = 1; i <= n; ++i)
        if (n % i == 0) d.push_back(i);
    return d;
}

int64_t trace_bytes(const Config& c) {
    const int64_t T = c.seq_len, C = c.n_embd, H = c.n_head;
    int64_t floats = T * C      // x
                     + T * 3 * C  // qkv
                     + 3 * T * C  // q, k, v per head
                     + 2 * H * T * T // raw scores and att (softmax weights)
                     + T * C      // heads
                     + 2 * T * C; // concat, y
    int64_t weights = 4 * C * C + 4 * C;
    return (floats + weights) * int64_t(sizeof(float));
}

// "1.5 GiB", "3 GiB", "120 MiB": the unit a reader expects at that size.
std::string human_bytes(int64_t bytes) {
    const double gib = double(int64_t(1) << 30), mib = double(1 << 20);
    char buf[64];
    if (bytes >= (int64_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.3g GiB", double(bytes) / gib);
    else std::snprintf(buf, sizeof buf, "%.3g MiB", double(bytes) / mib);
    return buf;
}

std::string validate(const Config& c, int64_t memory_cap) {
    if (c.n_embd < 1 || c.n_embd > max_n_embd)
        return "n_embd " + std::to_string(c.n_embd) + " is out of range; give one from 1 to " +
               std::to_string(max_n_embd);
    if (c.n_head < 1 || c.n_head > max_n_head)
        return "n_head " + std::to_string(c.n_head) + " is out of range; give one from 1 to " +
               std::to_string(max_n_head);
    if (c.seq_len < 1 || c.seq_len > max_seq_len)
        return "seq_len " + std::to_string(c.seq_len) + " is out of range; give one from 1 to " +
               std::to_string(max_seq_len);
    if (c.n_embd % c.n_head != 0)
        return "n_embd " + std::to_string(c.n_embd) + " is not divisible by n_head " +
               std::to_string(c.n_head) + "; n_head can be " + list_or(divisors(c.n_embd));
    int64_t need = trace_bytes(c);
    if (need > memory_cap)
        return "seq_len " + std::to_string(c.seq_len) + " with n_embd " + std::to_string(c.n_embd) +
               " and n_head " + std::to_string(c.n_head) + " needs about " + human_bytes(need) +
               " for one trace, over the cap of " + human_bytes(memory_cap) +
               "; use a smaller seq_len, n_head or n_embd";
    return "";
}

} // namespace attnviz
