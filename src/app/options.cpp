// options.cpp: config options shared by the commands and the GUI; see options.h.
#include "options.h"
#include <cstdio>

namespace attnviz {

void add_config_options(CLI::App& app, ConfigOptions& o, bool with_kernel, bool with_perturb) {
    // An option given twice takes its last value, as most command lines do.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--seed", o.seed, "torch.manual_seed value, 0 or more (default 0)")->type_name("N");
    app.add_option("--n-embd", o.n_embd,
                   "C, the embedding width, 1 to " + std::to_string(max_n_embd) + " (default 8)")
        ->type_name("C");
    app.add_option("--n-head", o.n_head, "H, the number of heads; must divide C (default 2)")->type_name("H");
    app.add_option("--seq-len", o.seq_len,
                   "T, the number of positions, 1 to " + std::to_string(max_seq_len) + " (default 4)")
        ->type_name("T");
    app.add_option("--mask", o.mask, "causal (the lesson's, default), none, or off-by-one")->type_name("MASK");
    app.add_option("--scale", o.scale, "score scale: head-dim (the lesson's, default), n-embd, or none")
        ->type_name("SCALE");
    if (with_kernel)
        app.add_option("--kernel", o.kernel,
                       "reference (bit-exact with PyTorch) or fast (default: fast above about T = C = 256)")
            ->type_name("KERNEL");
    if (with_perturb)
        app.add_option("--perturb", o.perturb, "position P (0 to T-1) whose input row is replaced")
            ->type_name("P");
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

std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& e) {
    // CLI11 2.1's messages, reworded; anything unforeseen keeps CLI11's own words.
    std::string where = "attnviz"; // not app.get_name(): CLI11 fills that in from argv[0]
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    const std::string what = e.what();
    const std::string see = "; see " + where + " --help";
    auto after = [&](const std::string& mark) {
        size_t at = what.find(mark);
        return at == std::string::npos ? what : what.substr(at + mark.size());
    };
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
        // "The following argument(s) was/were not expected: b a": CLI11 lists them last first.
        std::string listed = after(": "), extras;
        for (size_t end = listed.size(); end != std::string::npos && end > 0;) {
            size_t space = listed.rfind(' ', end - 1);
            size_t begin = space == std::string::npos ? 0 : space + 1;
            extras += (extras.empty() ? "" : " ") + listed.substr(begin, end - begin);
            end = space;
        }
        if (app.get_subcommands().empty()) {
            std::string commands;
            auto subs = app.get_subcommands([](const CLI::App*) { return true; });
            for (size_t i = 0; i < subs.size(); ++i)
                commands += (i == 0 ? "" : i + 1 == subs.size() ? " or " : ", ") + subs[i]->get_name();
            return "'" + extras + "' is not a command or option; use one of " + commands + see;
        }
        return where + " does not take '" + extras + "'" + see;
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && what.find("missing") != std::string::npos) {
        // "--seed: 1 required N missing"
        std::string option = what.substr(0, what.find(':'));
        return option + " needs a value" + see;
    }
    if (dynamic_cast<const CLI::ConversionError*>(&e) && what.find("Could not convert: ") == 0) {
        // A flag given a value: "Could not convert: --intermediates = maybe"
        std::string rest = after("Could not convert: ");
        size_t eq = rest.find(" = ");
        if (eq != std::string::npos)
            return rest.substr(0, eq) + " is a switch and takes no value, not '" + rest.substr(eq + 3) + "'" + see;
    }
    return what + see;
}

} // namespace attnviz
