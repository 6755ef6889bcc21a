// options.cpp: config options shared by the commands and the GUI; see options.h.
#include "options.h"
#include <cstdio>

namespace attnviz {

void add_config_options(CLI::App& app, ConfigOptions& o, bool with_kernel, bool with_perturb) {
    app.add_option("--seed", o.seed, "torch.manual_seed value (default 0)");
    app.add_option("--n-embd", o.n_embd, "C, the embedding width (default 8)");
    app.add_option("--n-head", o.n_head, "H, the number of heads; must divide C (default 2)");
    app.add_option("--seq-len", o.seq_len, "T, the number of positions (default 4)");
    app.add_option("--mask", o.mask, "causal (the lesson's), none, or off-by-one");
    app.add_option("--scale", o.scale, "head-dim (the lesson's), n-embd, or none");
    if (with_kernel)
        app.add_option("--kernel", o.kernel, "reference (bit-exact) or fast (default: by size)");
    if (with_perturb)
        app.add_option("--perturb", o.perturb, "position p (0..T-1) whose input row is replaced");
}

bool to_config(const ConfigOptions& o, Config& c, std::string& error) {
    int64_t v = 0;
    if (!parse_int(o.seed, "--seed", 0, INT64_MAX, v, error)) return false;
    c.seed = uint64_t(v);
    if (!parse_int(o.n_embd, "--n-embd", 1, max_n_embd, v, error)) return false;
    c.n_embd = int(v);
    if (!parse_int(o.n_head, "--n-head", 1, max_n_head, v, error)) return false;
    c.n_head = int(v);
    if (!parse_int(o.seq_len, "--seq-len", 1, max_seq_len, v, error)) return false;
    c.seq_len = int(v);
    if (!parse_mask(o.mask, c.mask, error)) return false;
    if (!parse_scale(o.scale, c.scale, error)) return false;
    error = validate(c);
    return error.empty();
}

bool to_perturb(const ConfigOptions& o, const Config& c, std::optional<int>& p, std::string& error) {
    p.reset();
    if (o.perturb.empty()) return true;
    int64_t v = 0;
    if (!parse_int(o.perturb, "--perturb", 0, c.seq_len - 1, v, error)) return false;
    p = int(v);
    return true;
}

KernelKind choose_kernel(const Config& c) {
    // The reference kernel's plain loops keep a slider live up to about T = C = 256.
    double flops = 2.0 * c.seq_len * double(c.n_embd) * c.n_embd * 4 + 4.0 * c.seq_len * double(c.seq_len) * c.n_embd;
    return flops <= 2.0e8 ? KernelKind::reference : KernelKind::fast;
}

bool to_kernel(const ConfigOptions& o, const Config& c, KernelKind& k, std::string& error) {
    if (o.kernel.empty()) {
        k = choose_kernel(c);
        return true;
    }
    return parse_kernel(o.kernel, k, error);
}

int usage_error(const std::string& sentence) {
    std::fprintf(stderr, "attnviz: %s\n", sentence.c_str());
    return 2;
}

} // namespace attnviz
