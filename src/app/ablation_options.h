// ablation_options.h: --ablate L.H[,L.H...], --ablate-mode zero|mean and --dla-pos N, the
// head ablation of ablation.h on the command line (heads, trace --model, trace --weights
// with a toy model, bench --model). The JSON pieces those commands share are the core's
// (ablation_json.h).
//
// Bad input is one sentence naming the value and what to do (the command's usage_error,
// exit status 2): a head outside the model, a malformed list, an unknown mode,
// --ablate-mode or --dla-pos where nothing uses them, a position outside the sequence.
#pragma once
#include "ablation.h"
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace attnviz {

struct AblationOptions {
    std::optional<std::string> heads;   // --ablate
    std::optional<std::string> mode;    // --ablate-mode
    std::optional<std::string> dla_pos; // --dla-pos (trace only)
    bool any() const { return heads || mode || dla_pos; }
};

// Registers --ablate and --ablate-mode, and --dla-pos when `with_dla`.
void add_ablation_options(CLI::App& app, AblationOptions& o, bool with_dla);

// The heads and the mode of the options, checked against the model (the means are the
// caller's: they need the probe). No --ablate: an empty ablation, unless --ablate-mode was
// given, which is refused.
bool to_ablation(const AblationOptions& o, const Model& m, Ablation& out, std::string& error);

// --dla-pos checked against 0 .. T-1; `fallback` (the last position) when not given.
bool to_dla_pos(const AblationOptions& o, int T, int fallback, int& out, std::string& error);

// For a command that takes none of them: one sentence saying where they apply.
bool refuse_ablation_options(const AblationOptions& o, const std::string& why, std::string& error);

} // namespace attnviz
