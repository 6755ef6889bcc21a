// generate_command.cpp: `attnviz generate`; see generate_command.h.
//
// The options are checked first (each bad value one sentence), then the model is read and
// the prompt made as trace makes it, then the loop: a step's own time is its forward (the
// prompt's prefill, one cached step, or with --no-cache the whole sequence) and its draw;
// --check's full forward runs outside that time.
#include "generate_command.h"
#include "commands.h"
#include "generate_json.h"
#include "gpt_io.h"
#include "hub_cache.h"
#include "kv_cache.h"
#include "model_commands.h"
#include "model_io.h"
#include "options.h"
#include "sampling.h"
#include "text_input.h"
#include "text_util.h"
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>

namespace attnviz {

namespace {

struct GenerateArgs {
    std::optional<std::string> model, revision, n_head;
    std::optional<std::string> text, tokens;
    std::optional<std::string> max_new;
    bool greedy = false;
    std::optional<std::string> temperature, top_k, top_p, seed;
    bool no_cache = false, check = false, json = false;
    std::string kernel; // empty: trace's choice for the model's size
};

GenerateArgs args; // filled by CLI11 while parsing, read once by run_generate_command

// ---- The options, checked

// A whole real number, or nullopt (then `v` is untouched); "nan" and "inf" parse, so their
// own sentence can say what to give instead.
std::optional<double> parse_double(const std::string& text) {
    const char* begin = text.c_str();
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (text.empty() || end != begin + text.size() || std::isspace(static_cast<unsigned char>(text[0])))
        return std::nullopt;
    return v;
}

bool refuse(std::string& error, const std::string& sentence) {
    error = sentence;
    return false;
}

bool to_sampling(const GenerateArgs& a, SamplingOptions& o, std::string& error) {
    o = SamplingOptions{};
    const std::optional<std::string>* given[] = {&a.temperature, &a.top_k, &a.top_p, &a.seed};
    const char* names[] = {"--temperature", "--top-k", "--top-p", "--seed"};
    for (int i = 0; i < 4; ++i)
        if (a.greedy && *given[i])
            return refuse(error, std::string("--greedy takes the most likely token at every step, so ") + names[i] + " " +
                                     quote(**given[i], 40) + " does not apply; give --greedy alone, or sample with "
                                     "--temperature T [--top-k K] [--top-p P] [--seed S]");
    // No sampling option: greedy, as Hugging Face's generate does by default.
    o.greedy = !(a.temperature || a.top_k || a.top_p || a.seed);
    if (a.temperature) {
        const std::optional<double> t = parse_double(*a.temperature);
        if (!t)
            return refuse(error, "--temperature " + quote(*a.temperature, 40) +
                                     " is not a number; give one above 0, e.g. 0.8, or use --greedy");
        if (!std::isfinite(*t) || *t <= 0)
            return refuse(error, "--temperature " + quote(*a.temperature, 40) +
                                     " must be a finite number above 0 (the logits are divided by it); for the most "
                                     "likely token at every step use --greedy");
        o.temperature = *t;
    }
    int64_t v = 0;
    if (a.top_k) {
        if (!parse_int(*a.top_k, "--top-k", INT64_MIN, INT64_MAX, v, error)) return false;
        if (v < 1)
            return refuse(error, "--top-k " + quote(*a.top_k, 40) +
                                     " keeps no token; give 1 or more (the K most likely tokens are kept)");
        o.top_k = int(std::min<int64_t>(v, INT_MAX));
    }
    if (a.top_p) {
        const std::optional<double> p = parse_double(*a.top_p);
        if (!p || !std::isfinite(*p) || *p <= 0 || *p > 1)
            return refuse(error, "--top-p " + quote(*a.top_p, 40) +
                                     " is not in (0, 1]; give the share of probability to keep, e.g. 0.9 (1 keeps "
                                     "every token)");
        o.top_p = *p;
    }
    if (a.seed) {
        if (!parse_int(*a.seed, "--seed", 0, INT64_MAX, v, error)) return false;
        o.seed = uint64_t(v);
    }
    error = validate(o); // the core's own check, which the sentences above cover
    return error.empty();
}

bool to_max_new(const GenerateArgs& a, int& n, std::string& error) {
    if (!a.max_new) return refuse(error, "generate needs --max-new N, the number of tokens to write, e.g. --max-new 20");
    int64_t v = 0;
    if (!parse_int(*a.max_new, "--max-new", INT64_MIN, INT64_MAX, v, error)) return false;
    if (v < 1)
        return refuse(error, "--max-new " + quote(*a.max_new, 40) + " writes no token; give 1 or more");
    n = int(std::min<int64_t>(v, INT_MAX));
    return true;
}

// ---- The model and the prompt

struct Loaded {
    Model m;
    std::optional<BpeTokenizer> tok; // GPT: the tokenizer beside the model, when one fits
    std::vector<int> prompt;         // as the model reads it (a toy model's BOS first)
    std::string name;                // the model as messages call it
};

bool empty_list(const std::string& s) { return s.find_first_not_of(" ,") == std::string::npos; }

// A toy model: --text words of its vocabulary or --tokens ids, BOS put first as trace does.
bool toy_prompt(const GenerateArgs& a, const Model& m, const std::string& name, std::vector<int>& out,
                std::string& error) {
    const ModelConfig& c = m.config;
    const std::string vocab = "(" + vocabulary_text(c) + ")";
    out = {c.bos()};
    if (a.text) {
        const std::vector<std::string> words = tokenize(*a.text);
        if (words.empty())
            return refuse(error, "--text has no words; give words of the vocabulary of " + name + " " + vocab +
                                     ", e.g. --text \"a b c a b\"");
        for (const std::string& w : words) {
            const int t = token_of(c, w);
            if (t < 0 || t == c.bos())
                return refuse(error, "--text word " + quote(w, 20) + " is not in the vocabulary of " + name + " " + vocab +
                                         (t == c.bos() ? "; BOS (^) is put first by attnviz itself" : ""));
            out.push_back(t);
        }
        return true;
    }
    ModelConfig ids = c; // ids 0 .. V-1 (BOS is V, put first here), up to the block size
    ids.seq_len = generation_block_size(m);
    std::vector<int> body;
    if (!parse_token_list(*a.tokens, ids, body, error)) return false;
    out.insert(out.end(), body.begin(), body.end());
    return true;
}

bool load(const GenerateArgs& a, Loaded& l, std::string& error) {
    if (!a.model) {
        if (a.revision)
            return refuse(error, "--revision " + quote(*a.revision, 40) +
                                     " needs --model with a Hub id, e.g. --model gpt2 --revision main");
        return refuse(error, "generate needs --model: a GPT-2 directory, a nanoGPT file, a Hub id such as gpt2, or a "
                             "model attnviz train --task induction wrote");
    }
    if (a.text && a.tokens) return refuse(error, "give the prompt with --text or with --tokens, not both");
    if (!a.text && !a.tokens)
        return refuse(error, "generate needs a prompt: --text \"...\" or --tokens IDS, e.g. --tokens 464,3797");
    if (a.tokens && empty_list(*a.tokens))
        return refuse(error, "--tokens " + quote(*a.tokens, 40) + " is an empty prompt; give at least one token id");
    std::string path;
    if (!resolve_model_arg(*a.model, a.revision.value_or(""), path, l.name, error)) return false;
    if (l.name.empty()) l.name = *a.model;
    const std::string shown = quote_path(l.name);

    if (is_trained_model_file(path)) {
        if (a.n_head)
            return refuse(error, "--n-head " + quote(*a.n_head, 40) + " does not apply: " + shown +
                                     " is a toy model whose n_head is in the file; leave out --n-head");
        if (!load_model(path, l.m, error)) return false;
        if (std::string why = generation_support(l.m); !why.empty()) return refuse(error, why);
        return toy_prompt(a, l.m, shown, l.prompt, error);
    }
    std::optional<int> n_head;
    if (a.n_head) {
        int64_t v = 0;
        if (!parse_int(*a.n_head, "--n-head", 1, max_n_head, v, error)) return false;
        n_head = int(v);
    }
    GptFileInfo info;
    if (!load_gpt(path, n_head, l.m, info, error)) return false;
    if (std::string why = generation_support(l.m); !why.empty()) return refuse(error, why);
    if (a.text && !text_to_gpt_tokens(l.m, *a.text, path, l.prompt, error)) return false;
    if (a.tokens && !parse_token_list(*a.tokens, l.m.config, l.prompt, error)) return false;
    l.tok = tokenizer_beside(l.m, path);
    return true;
}

bool check_room(const Loaded& l, int& block, std::string& error) {
    block = generation_block_size(l.m);
    const int P = int(l.prompt.size());
    if (P < block) return true;
    const bool toy = l.m.config.arch == Arch::toy;
    return refuse(error, "the prompt is " + std::to_string(P) + " tokens" + (toy ? " with BOS first" : "") +
                             ", already the block size of " + std::to_string(block) + " that " + quote_path(l.name) +
                             " reads, so no token can be added; give at most " + std::to_string(block - 1) +
                             (toy ? " tokens with BOS" : ""));
}

// ---- Writing on

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Without --json: each token's text as it comes, flushed (a toy model's letters and bare ids
// separated by spaces).
void stream_token(const Loaded& l, int token, bool first) {
    const BpeTokenizer* tok = l.tok ? &*l.tok : nullptr;
    if (l.m.config.arch == Arch::gpt && tok) std::cout << tok->token_bytes(token);
    else std::cout << (first ? "" : " ") << (has_token_text(l.m, tok) ? generated_token_text(l.m, tok, token)
                                                                     : std::to_string(token));
    std::cout.flush();
}

float max_abs_diff(const Vec& a, const Vec& b) {
    float d = 0;
    for (Eigen::Index i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
    return d;
}

int generate(const GenerateArgs& a, Loaded& l, const SamplingOptions& sampling, int max_new, int block,
             KernelKind kernel) {
    GenerateRun run;
    run.prompt_tokens = l.prompt;
    run.kernel = kernel;
    run.cache = !a.no_cache;
    run.block_size = block;
    run.sampling = sampling;
    const int room = block - int(l.prompt.size());
    const int n = std::min(max_new, room);
    run.stopped_at_block_size = max_new > room;
    if (a.check) run.max_abs_diff_logits = 0.f;

    std::vector<int> seq = l.prompt;
    KvCache cache;
    KvStepRow row, full;
    Sampler sampler(sampling);
    std::vector<float> probs;
    std::ios::sync_with_stdio(false);
    for (int i = 0; i < n; ++i) {
        const Clock::time_point t0 = Clock::now();
        if (a.no_cache) full_last_row(l.m, seq, kernel, row);
        else if (i == 0) kv_prefill(l.m, seq, kernel, cache, row);
        else kv_step(l.m, seq.back(), kernel, cache, row);
        const int V = int(row.logits.size());
        float prob = 0;
        const int token = sampler.next(row.logits.data(), V, &prob, &probs);
        const double ms = ms_since(t0);
        run.steps.push_back(generate_step(int(seq.size()), token, row.logits.data(), probs, ms));
        if (a.check) {
            full_last_row(l.m, seq, kernel, full);
            run.max_abs_diff_logits = std::max(*run.max_abs_diff_logits, max_abs_diff(row.logits, full.logits));
        }
        seq.push_back(token);
        run.tokens.push_back(token);
        if (!a.json) stream_token(l, token, i == 0);
    }
    if (a.json) write_generate_json(std::cout, l.m, run, l.tok ? &*l.tok : nullptr);
    return finish_stdout(a.json ? "generation" : "text");
}

int run_generate(const GenerateArgs& a) {
    std::string error;
    SamplingOptions sampling;
    int max_new = 0;
    if (!to_sampling(a, sampling, error) || !to_max_new(a, max_new, error)) return usage_error(error);
    if (a.check && a.no_cache)
        return usage_error("--check compares the cached steps with full forwards, and --no-cache has no cache; leave "
                           "out one of them");
    KernelKind kernel = KernelKind::reference;
    if (!a.kernel.empty() && !parse_kernel(a.kernel, kernel, error)) return usage_error(error);
    Loaded l;
    int block = 0;
    if (!load(a, l, error) || !check_room(l, block, error)) return usage_error(error);
    if (a.kernel.empty() && l.m.config.arch == Arch::gpt)
        kernel = default_gpt_kernel(l.m.config, int(std::min<int64_t>(block, int64_t(l.prompt.size()) + max_new)));
    try {
        return generate(a, l, sampling, max_new, block, kernel);
    } catch (const std::invalid_argument& e) { // the core's own checks, which the above cover
        return usage_error(e.what());
    }
}

} // namespace

void add_generate_command(CLI::App& app) {
    CLI::App* sub = app.add_subcommand("generate", "Let a model write on from a prompt, token by token, with a KV cache");
    sub->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    sub->add_option("--model", args.model,
                    "a GPT-2 directory, a nanoGPT .safetensors file, a Hub id such as gpt2 that attnviz get\n"
                    "downloaded, or a toy model attnviz train --task induction wrote")
        ->type_name("PATH|NAME");
    sub->add_option("--revision", args.revision, "with a Hub id as --model: the cached branch, tag or commit (default main)")
        ->type_name("REV");
    sub->add_option("--n-head", args.n_head, "H for a nanoGPT file that does not say it")->type_name("H");
    sub->add_option("--text", args.text,
                    "the prompt as text (a GPT model needs its tokenizer beside it; a toy model takes words\n"
                    "of its vocabulary, \"a b c a b\", after BOS)")
        ->type_name("TEXT");
    sub->add_option("--tokens", args.tokens, "the prompt as token ids, e.g. 464,3797,3332")->type_name("IDS");
    sub->add_option("--max-new", args.max_new, "how many tokens to write (fewer if the block size is reached first)")
        ->type_name("N");
    sub->add_flag("--greedy", args.greedy, "take the most likely token every time (the default)");
    sub->add_option("--temperature", args.temperature,
                    "sample instead: divide the logits by T first (below 1 surer, above 1 more varied)")
        ->type_name("T");
    sub->add_option("--top-k", args.top_k, "when sampling: keep only the K most likely tokens")->type_name("K");
    sub->add_option("--top-p", args.top_p, "when sampling: keep the most likely tokens, as few as together reach probability P")
        ->type_name("P");
    sub->add_option("--seed", args.seed, "when sampling: the random generator's seed (default 0); same seed, same text")
        ->type_name("S");
    sub->add_flag("--no-cache", args.no_cache, "recompute the whole sequence at every step (the slow way)");
    sub->add_flag("--check", args.check,
                  "also run the full forward at every step and report the largest difference of its\n"
                  "logits from the cached step's");
    sub->add_flag("--json", args.json, "print one JSON object with every step instead of the text");
    sub->add_option("--kernel", args.kernel, "reference (bit-exact with PyTorch) or fast (default: as trace, fast for large models)")
        ->type_name("KERNEL");
    sub->footer("The prompt runs once; after that each new token runs alone, against the keys and values\n"
                "of the earlier tokens kept from before (the KV cache): the causal mask means they never\n"
                "change. Sampling: logits / T, then top-k, then top-p, then softmax and a draw.\n"
                "Without --json the new text is printed as it is written (token ids for a model without\n"
                "a tokenizer). --json: prompt_tokens, tokens, text, steps [{pos, token, text, prob,\n"
                "top5 [{token, logit, prob}], ms}], stop (max_new or block_size), check with --check.");
}

int run_generate_command(const CLI::App& sub) {
    if (sub.get_name() != "generate") return -1;
    return run_generate(args);
}

} // namespace attnviz
