// patch_command.cpp: `attnviz patch`; see patch_command.h.
#include "patch_command.h"
#include "commands.h"
#include "gpt_io.h"
#include "json_writer.h"
#include "model_commands.h"
#include "model_io.h"
#include "options.h"
#include "patch_json.h"
#include "text_util.h"
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

namespace attnviz {

namespace {

struct PatchArgs {
    std::string model;
    std::optional<std::string> revision;
    std::optional<std::string> clean, corrupt, clean_tokens, corrupt_tokens;
    std::optional<std::string> answer, wrong, answer_token, wrong_token;
    std::string what = "both";
    std::string kernel; // empty: the reference loops when they are quick, as trace chooses
    bool json = false;
};

PatchArgs args; // filled by CLI11 while parsing, read once by run_patch_command

// One prompt: --clean TEXT (through the tokenizer beside the model) or --clean-tokens IDS.
bool prompt_tokens(const Model& m, const std::string& path, const std::optional<std::string>& text,
                   const std::optional<std::string>& ids, const char* name, std::vector<int>& out, std::string& error) {
    if (text) {
        if (!text_to_gpt_tokens(m, *text, path, out, error)) {
            // The shared reader names --text; this command's option is --clean or --corrupt.
            if (error.rfind("--text", 0) == 0) error = std::string("--") + name + error.substr(6);
            return false;
        }
        return true;
    }
    if (!parse_token_list(*ids, m.config, out, error)) {
        if (error.rfind("--tokens", 0) == 0) error = std::string("--") + name + "-tokens" + error.substr(8);
        return false;
    }
    return true;
}

// One answer: --answer TOK must be one token of the tokenizer; --answer-token ID an id of wte.
bool answer_id(const Model& m, const std::optional<BpeTokenizer>& tok, const std::optional<std::string>& text,
               const std::optional<std::string>& id, const char* name, int& out, std::string& error) {
    if (id) {
        int64_t v = 0;
        std::string why;
        if (!parse_int(*id, "a token id", 0, int64_t(m.config.vocab) - 1, v, why)) {
            error = std::string("--") + name + "-token " + quote(*id, 40) + " is not a token id in the vocabulary; give an id from 0 to " +
                    std::to_string(m.config.vocab - 1);
            return false;
        }
        out = int(v);
        return true;
    }
    if (!tok) {
        error = std::string("--") + name + " " + quote(*text, 40) +
                " needs the model's tokenizer beside it; give the id with --" + name + "-token ID";
        return false;
    }
    const std::vector<int> ids = tok->encode(*text);
    if (ids.size() != 1) {
        error = std::string("--") + name + " " + quote(*text, 40) + " is " + std::to_string(ids.size()) +
                " tokens, not one; give a text that is one token (often with its leading space, e.g. \" Mary\") or --" +
                name + "-token ID";
        return false;
    }
    if (ids[0] >= m.config.vocab) {
        error = std::string("--") + name + " " + quote(*text, 40) + " is token " + std::to_string(ids[0]) +
                ", which the model's vocabulary of " + std::to_string(m.config.vocab) + " does not have";
        return false;
    }
    out = ids[0];
    return true;
}

// Exactly one of the two spellings of a pair of inputs.
bool one_of(bool text, bool ids, const std::string& texts, const std::string& idss, std::string& error) {
    if (text == ids) {
        error = text ? "give " + texts + " or " + idss + ", not both" : "patch needs " + texts + " or " + idss;
        return false;
    }
    return true;
}

void print_table(const std::vector<std::vector<float>>& t, const std::string& columns) {
    if (t.empty()) return;
    std::printf("%-8s", "layer");
    for (size_t c = 0; c < t[0].size(); ++c) std::printf(" %10s", (columns + std::to_string(c)).c_str());
    std::printf("\n");
    for (size_t l = 0; l < t.size(); ++l) {
        std::printf("%-8zu", l);
        for (float v : t[l]) std::printf(" %10.4f", double(v));
        std::printf("\n");
    }
}

int run_patch(const PatchArgs& a) {
    std::string error;
    ConfigOptions o;
    o.model = a.model;
    o.revision = a.revision;
    if (!resolve_model_option(o, error)) return usage_error(error);
    const std::string path = *o.model;
    if (is_trained_model_file(path))
        return usage_error(quote_path(path) + " is a toy model; patch runs on a GPT-2 directory or nanoGPT file");
    if (a.what != "resid" && a.what != "heads" && a.what != "both")
        return usage_error("--what " + quote(a.what, 40) + " is not a table; use resid, heads or both");
    if (!one_of(a.clean || a.corrupt, a.clean_tokens || a.corrupt_tokens, "--clean and --corrupt",
                "--clean-tokens and --corrupt-tokens", error) ||
        !one_of(a.answer || a.wrong, a.answer_token || a.wrong_token, "--answer and --wrong",
                "--answer-token and --wrong-token", error))
        return usage_error(error);
    if (bool(a.clean) != bool(a.corrupt) || bool(a.clean_tokens) != bool(a.corrupt_tokens))
        return usage_error("give both prompts: --clean with --corrupt, or --clean-tokens with --corrupt-tokens");
    if (bool(a.answer) != bool(a.wrong) || bool(a.answer_token) != bool(a.wrong_token))
        return usage_error("give both answers: --answer with --wrong, or --answer-token with --wrong-token");

    Model m;
    GptFileInfo info;
    if (!load_gpt(path, std::nullopt, m, info, error)) return usage_error(error);
    std::vector<int> clean, corrupt;
    if (!prompt_tokens(m, path, a.clean, a.clean_tokens, "clean", clean, error) ||
        !prompt_tokens(m, path, a.corrupt, a.corrupt_tokens, "corrupt", corrupt, error))
        return usage_error(error);
    if (clean.size() != corrupt.size())
        return usage_error("the clean prompt is " + std::to_string(clean.size()) + " tokens and the corrupted one " +
                           std::to_string(corrupt.size()) + "; give two prompts of the same number of tokens");
    const std::optional<BpeTokenizer> tok = a.answer ? tokenizer_beside(m, path) : std::nullopt;
    int answer = 0, wrong = 0;
    if (!answer_id(m, tok, a.answer, a.answer_token, "answer", answer, error) ||
        !answer_id(m, tok, a.wrong, a.wrong_token, "wrong", wrong, error))
        return usage_error(error);
    if (answer == wrong)
        return usage_error("the answer and the wrong token are both token " + std::to_string(answer) +
                           "; give two different tokens, whose logit difference is the metric");
    KernelKind kernel = KernelKind::fast;
    if (a.kernel == "reference") kernel = KernelKind::reference;
    else if (a.kernel.empty()) kernel = default_gpt_kernel(m.config, int(clean.size())); // as trace chooses
    else if (a.kernel != "fast") {
        return usage_error("--kernel " + quote(a.kernel, 40) + " is not a kernel; use reference or fast");
    }

    PatchRuns runs;
    try {
        prepare_patch_runs(m, clean, corrupt, answer, wrong, kernel, runs);
    } catch (const std::invalid_argument& e) {
        return usage_error(e.what());
    }
    if (runs.clean_ld == runs.corrupt_ld)
        return usage_error("the clean and corrupted logit differences are both " + json_number(runs.clean_ld) +
                           ", so the normalised tables would divide by zero; give prompts or answers that the model tells apart");
    const double gap = double(runs.clean_ld) - double(runs.corrupt_ld);
    if (std::abs(gap) < 1e-3)
        std::fprintf(stderr, "attnviz: warning: the clean and corrupted logit differences are only %.3g apart, so the "
                             "normalised tables magnify rounding; prompts further apart give steadier numbers\n", gap);
    const bool resid = a.what != "heads", heads = a.what != "resid";
    const auto t0 = std::chrono::steady_clock::now();
    const PatchTables tables = patch_tables(runs, resid, heads);
    const double patch_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    std::ios::sync_with_stdio(false);
    if (a.json) {
        write_patch_json(std::cout, runs, tables, patch_ms);
        return finish_stdout("patching tables");
    }
    std::printf("clean logit difference (answer %d - wrong %d at the last position): %s\n", answer, wrong,
                json_number(runs.clean_ld).c_str());
    std::printf("corrupted logit difference: %s\n", json_number(runs.corrupt_ld).c_str());
    std::printf("(tables: (patched - corrupted) / (clean - corrupted); 1 restores the clean answer, 0 does nothing)\n");
    if (resid) {
        std::printf("\nresid_pre of each layer at each position, from the clean run:\n");
        print_table(tables.resid, "pos ");
    }
    if (heads) {
        std::printf("\neach head's output (hook_z, every position), from the clean run:\n");
        print_table(tables.heads, "head ");
    }
    std::printf("\n%d patches in %.0f ms on the %s kernel\n", patch_count(runs, resid, heads), patch_ms,
                to_string(kernel));
    std::fflush(stdout);
    return std::ferror(stdout) ? finish_stdout("patching tables") : 0;
}

} // namespace

void add_patch_command(CLI::App& app) {
    CLI::App* sub = app.add_subcommand(
        "patch", "Activation patching on a GPT model: which layers and heads bring a clean prompt's answer back");
    sub->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    sub->add_option("--model", args.model, "a GPT-2 directory or nanoGPT .safetensors file, or a Hub id attnviz get downloaded")
        ->type_name("PATH|NAME")
        ->required();
    sub->add_option("--revision", args.revision, "with a Hub id as --model: the cached branch, tag or commit")->type_name("REV");
    sub->add_option("--clean", args.clean, "the clean prompt as text (the model's tokenizer beside it)")->type_name("TEXT");
    sub->add_option("--corrupt", args.corrupt, "the corrupted prompt as text, as many tokens as --clean")->type_name("TEXT");
    sub->add_option("--clean-tokens", args.clean_tokens, "the clean prompt as token ids, e.g. 464,3797")->type_name("IDS");
    sub->add_option("--corrupt-tokens", args.corrupt_tokens, "the corrupted prompt as token ids")->type_name("IDS");
    sub->add_option("--answer", args.answer, "the clean prompt's answer, one token of text, e.g. \" Mary\"")->type_name("TOK");
    sub->add_option("--wrong", args.wrong, "the other answer, one token of text, e.g. \" John\"")->type_name("TOK");
    sub->add_option("--answer-token", args.answer_token, "the answer as a token id")->type_name("ID");
    sub->add_option("--wrong-token", args.wrong_token, "the other answer as a token id")->type_name("ID");
    sub->add_option("--what", args.what, "the tables: resid (layer x position), heads (layer x head) or both (default)")
        ->type_name("TABLE");
    sub->add_option("--kernel", args.kernel, "reference or fast (default: reference when a forward is quick)")->type_name("KERNEL");
    sub->add_flag("--json", args.json, "print {clean_ld, corrupt_ld, resid, heads, patch_ms} as JSON");
}

int run_patch_command(const CLI::App& sub) {
    if (sub.get_name() != "patch") return -1;
    return run_patch(args);
}

} // namespace attnviz
