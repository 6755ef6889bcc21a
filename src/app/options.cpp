// options.cpp: config options shared by the commands and the GUI; see options.h.
#include "options.h"
#include "hub_cache.h" // resolve_model_arg
#include "formats.h"
#include "text_input.h"
#include <cstdio>

namespace attnviz {

void add_model_options(CLI::App& app, ConfigOptions& o) {
    // An option given twice takes its last value, as most command lines do.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--seed", o.seed, "torch.manual_seed value, 0 or more (default 0)")->type_name("N");
    app.add_option("--n-embd", o.n_embd,
                   "C, the embedding width, 1 to " + std::to_string(max_n_embd) + " (default 8, or the --weights file's)")
        ->type_name("C");
    app.add_option("--n-head", o.n_head,
                   "H, the number of heads; must divide C (default 2, or the --weights file's n_head)")
        ->type_name("H");
}

void add_config_options(CLI::App& app, ConfigOptions& o, bool with_kernel, bool with_perturb) {
    add_model_options(app, o);
    app.add_option("--seq-len", o.seq_len,
                   "T, the number of positions, 1 to " + std::to_string(max_seq_len) +
                       " (default 4, or the number of words of --text)")
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

void add_weights_options(CLI::App& app, ConfigOptions& o) {
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--weights", o.weights,
                   "use the attention weights in this .safetensors file (lesson, nanoGPT or GPT-2 names)\n"
                   "instead of the seeded ones; x still comes from --seed")
        ->type_name("FILE");
    app.add_option("--layer", o.layer, "with --weights: the layer N of a multi-layer file (h.N.attn, default 0);\n"
                                       "with --model: only layer N in the output")
        ->type_name("N");
}

void add_model_file_options(CLI::App& app, ConfigOptions& o) {
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--model", o.model,
                   "a whole model: a GPT-2 directory (model.safetensors, config.json), a nanoGPT\n"
                   ".safetensors file, a toy model that attnviz train wrote, or a Hub id such as gpt2\n"
                   "that attnviz get downloaded (read from the Hugging Face cache, never the network)")
        ->type_name("PATH|NAME");
    app.add_option("--revision", o.revision, "with a Hub id as --model: the cached branch, tag or commit (default main)")
        ->type_name("REV");
    app.add_option("--tokens", o.tokens, "with a GPT --model: the input as token ids, e.g. 464,3797,3332")
        ->type_name("IDS");
    app.add_option("--replace", o.replace, "with --model and --perturb P: the id token P becomes (default: the next id)")
        ->type_name("ID");
}

void add_input_options(CLI::App& app, ConfigOptions& o) {
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--text", o.text,
                   "words as input, e.g. \"the cat saw the cat\": one position per word, a repeated\n"
                   "word repeats its input row (T follows the number of words)")
        ->type_name("TEXT");
    add_weights_options(app, o);
}

namespace {

// An optional size option: parsed when given, else `fallback`.
bool parse_size(const std::optional<std::string>& text, const char* what, int64_t hi, int fallback, int& out,
                std::string& error) {
    if (!text) {
        out = fallback;
        return true;
    }
    int64_t v = 0;
    if (!parse_int(*text, what, 1, hi, v, error)) return false;
    out = int(v);
    return true;
}

} // namespace

bool to_inputs(const ConfigOptions& o, Inputs& in, std::string& error) {
    in = Inputs{};
    Config& c = in.config;
    int64_t v = 0;
    if (!parse_int(o.seed, "--seed", 0, INT64_MAX, v, error)) return false;
    c.seed = uint64_t(v);
    if (!parse_size(o.n_embd, "--n-embd", max_n_embd, 8, c.n_embd, error)) return false;
    if (!parse_size(o.n_head, "--n-head", max_n_head, 2, c.n_head, error)) return false;
    if (!parse_size(o.seq_len, "--seq-len", max_seq_len, 4, c.seq_len, error)) return false;
    if (!parse_mask(o.mask, c.mask, error)) return false;
    if (!parse_scale(o.scale, c.scale, error)) return false;

    // Words: T is their number.
    if (o.text) {
        if (size_t at = invalid_utf8_at(*o.text); at != std::string::npos) {
            char byte[8];
            std::snprintf(byte, sizeof byte, "0x%02x", unsigned((unsigned char)(*o.text)[at]));
            error = "--text is not valid UTF-8 (byte " + std::string(byte) + " at offset " + std::to_string(at) +
                    "); give the words as UTF-8 text";
            return false;
        }
        in.tokens = tokenize(*o.text);
        if (in.tokens.empty() || in.tokens.size() > size_t(max_seq_len)) {
            // make_text_experiment's own sentence; it checks the count before any work.
            Experiment unused;
            make_text_experiment(c, in.tokens, nullptr, unused, error);
            return false;
        }
        const int words = int(in.tokens.size());
        if (o.seq_len && c.seq_len != words) {
            error = "--seq-len " + std::to_string(c.seq_len) + " does not match --text, which has " +
                    std::to_string(words) + (words == 1 ? " word" : " words") +
                    " (one position each); leave out --seq-len or give --seq-len " + std::to_string(words);
            return false;
        }
        c.seq_len = words;
    }

    // Weights from a file: C from its shapes, H from --n-head or its metadata.
    if (o.layer && !o.weights) {
        error = "--layer " + escaped(*o.layer, 40) + " needs --weights FILE: it picks a layer of a weights file";
        return false;
    }
    if (o.weights) {
        int layer = 0;
        if (o.layer) {
            if (!parse_int(*o.layer, "--layer", 0, 999999, v, error)) return false;
            layer = int(v);
        }
        std::optional<int> n_head;
        if (o.n_head) n_head = c.n_head;
        LoadedWeights w;
        if (!load_weights(*o.weights, n_head, layer, w, error)) return false;
        if (o.n_embd && c.n_embd != w.n_embd) {
            error = "--n-embd " + std::to_string(c.n_embd) + " does not match the weights in " + escaped(*o.weights) +
                    ", whose n_embd is " + std::to_string(w.n_embd) + "; leave out --n-embd (C comes from the file)";
            return false;
        }
        c.n_embd = w.n_embd;
        c.n_head = w.n_head;
        in.weights = std::move(w);
        in.weights_path = *o.weights;
    }

    error = validate(c);
    return error.empty();
}

bool to_config(const ConfigOptions& o, Config& c, std::string& error) {
    Inputs in;
    if (!to_inputs(o, in, error)) return false;
    c = in.config;
    return true;
}

bool to_experiment(const Inputs& in, Experiment& e, std::string& error) {
    const Weights* w = in.weights ? &in.weights->weights : nullptr;
    if (!in.tokens.empty()) return make_text_experiment(in.config, in.tokens, w, e, error);
    e = w ? make_experiment(in.config, *w) : make_experiment(in.config);
    return true;
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

bool resolve_model_option(ConfigOptions& o, std::string& error) {
    if (!o.model) {
        if (!o.revision) return true;
        error = "--revision " + quote(*o.revision, 40) + " needs --model with a Hub id, e.g. --model gpt2 --revision main";
        return false;
    }
    std::string path, name;
    if (!resolve_model_arg(*o.model, o.revision.value_or(""), path, name, error)) return false;
    o.model = path;
    o.model_name = name;
    return true;
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
            return quote(extras) + " is not a command or option; use one of " + commands + see;
        }
        return where + " does not take " + quote(extras) + see;
    }
    if (dynamic_cast<const CLI::RequiredError*>(&e)) {
        // "--tensor is required", "FILE is required"
        const std::string tail = " is required";
        if (what.size() > tail.size() && what.compare(what.size() - tail.size(), tail.size(), tail) == 0 &&
            what.find(' ') == what.size() - tail.size())
            return where + " needs " + what.substr(0, what.size() - tail.size()) + see;
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
            return rest.substr(0, eq) + " is a switch and takes no value, not " + quote(rest.substr(eq + 3)) + see;
    }
    return escaped(what) + see;
}

} // namespace attnviz
