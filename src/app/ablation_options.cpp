// ablation_options.cpp: see ablation_options.h.
#include "ablation_options.h"
#include "config.h"
#include "text_util.h"

namespace attnviz {

void add_ablation_options(CLI::App& app, AblationOptions& o, bool with_dla) {
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--ablate", o.heads,
                   "heads to ablate, layer.head separated by commas, e.g. 0.1,1.0: their output\n"
                   "(hook_z) is replaced before the projection and the model run again")
        ->type_name("L.H[,L.H...]");
    app.add_option("--ablate-mode", o.mode,
                   "with --ablate: zero (default), or mean (the head's mean output over the probe:\n"
                   "a toy model's accuracy probe, a GPT model's input)")
        ->type_name("MODE");
    if (with_dla)
        app.add_option("--dla-pos", o.dla_pos,
                       "with --model: the position of the direct logit attribution (default the last),\n"
                       "onto the clean run's top token there")
            ->type_name("N");
}

bool to_ablation(const AblationOptions& o, const Model& m, Ablation& out, std::string& error) {
    out = Ablation{};
    if (o.mode && !o.heads) {
        error = "--ablate-mode " + quote(*o.mode, 40) + " needs --ablate L.H, the heads to ablate; give --ablate 0.1 "
                "or leave out --ablate-mode";
        return false;
    }
    if (!o.heads) return true;
    std::string why;
    if (!parse_heads(*o.heads, m.config, out.heads, why)) {
        error = "--ablate " + quote(*o.heads, 60) + ": " + why;
        return false;
    }
    if (o.mode && !parse_ablation_mode(*o.mode, out.mode, why)) {
        error = "--ablate-mode " + quote(*o.mode, 40) +
                " is not a mode; use zero (the head's output set to 0) or mean (set to its mean over the probe)";
        return false;
    }
    return true;
}

bool to_dla_pos(const AblationOptions& o, int T, int fallback, int& out, std::string& error) {
    out = fallback;
    if (!o.dla_pos) return true;
    int64_t v = 0;
    if (!parse_int(*o.dla_pos, "--dla-pos", 0, int64_t(T) - 1, v, error)) return false;
    out = int(v);
    return true;
}

bool refuse_ablation_options(const AblationOptions& o, const std::string& why, std::string& error) {
    const char* name = o.heads ? "--ablate" : o.mode ? "--ablate-mode" : o.dla_pos ? "--dla-pos" : nullptr;
    if (!name) return true;
    const std::string& value = o.heads ? *o.heads : o.mode ? *o.mode : *o.dla_pos;
    error = std::string(name) + " " + quote(value, 40) + " " + why;
    return false;
}

} // namespace attnviz
