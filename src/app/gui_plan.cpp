// gui_plan.cpp: see gui_plan.h.
#include "gui_plan.h"
#include "inputs.h"
#include "model_io.h"
#include "session_state.h"
#include "text_util.h"
#include <cstdint>

namespace attnviz {

void add_gui_options(CLI::App& app, GuiOptions& o) {
    add_config_options(app, o.config, true, true);
    add_input_options(app, o.config);
    add_model_file_options(app, o.config);
    app.add_option("--view", o.view, "walk (default), qkv, scores, causality, check, train, model or generate")->type_name("VIEW");
    app.add_option("--task", o.task, "the Train view's task: prev, dup, both (default) or induction; --seed, --n-embd and --n-head are then its own")
        ->type_name("TASK");
    app.add_option("--train-steps", o.train_steps, "the Train view trains this many steps before the window (or screenshot) shows")
        ->type_name("N");
    app.add_option("--lr", o.lr, "the Train view's learning rate, above 0 (default 5e-3; 3e-3 for induction)")->type_name("X");
    app.add_option("--batch", o.batch, "the Train view's sequences per step, 1 to 256 (default 64)")->type_name("B");
    app.add_option("--n-layer", o.n_layer, "the Train view's attention blocks L, 1 or 2 (default 1; 2 for induction)")->type_name("L");
    app.add_option("--head", o.head, "the first head the per-head views (walk, qkv, scores, causality) show, 0 to H-1")
        ->type_name("N");
    app.add_option("--ablate", o.ablate,
                   "with --weights or --model: ablate these heads of the model (L.H, comma-separated, e.g. 0.1,1.0): each one's "
                   "output is replaced by zero or its mean and the model runs again")
        ->type_name("L.H,...");
    app.add_option("--ablate-mode", o.ablate_mode, "what replaces an ablated head's output: zero (default) or mean")->type_name("MODE");
    app.add_option("--model-panel", o.model_panel, "the Model view's main area: heads (default), lens (the logit lens) or patching")
        ->type_name("PANEL");
    app.add_option("--patch-corrupt", o.patch_corrupt,
                   "with --weights or --model: the Patching panel's corrupted prompt, run once the model is shown")
        ->type_name("TEXT");
    app.add_option("--patch-answer", o.patch_answer, "with --patch-corrupt: the answer token (text or id)")->type_name("TOK");
    app.add_option("--patch-wrong", o.patch_wrong, "with --patch-corrupt: the wrong token (text or id)")->type_name("TOK");
    app.add_option("--step", o.step, "shape-walk step: 0 (the input x) to 11 (proj)")->type_name("N");
    app.add_option("--strength", o.strength, "perturbation strength: 0 (original row) to 1 (the lesson's replacement)")->type_name("A");
    app.add_option("--theme", o.theme, "dark (default), light or high-contrast")->type_name("THEME");
    app.add_option("--font-scale", o.font_scale, "text size, 1 to 3 (default 1)")->type_name("S");
    app.add_option("--palette", o.palette, "colour maps: default (blue-red, viridis) or cb (purple-orange, cividis)")->type_name("NAME");
    app.add_option("--settings", o.settings,
                   "settings file (default $XDG_CONFIG_HOME/attnviz/settings.json; --screenshot runs use none unless given)")
        ->type_name("FILE");
    app.add_flag("--serve", o.serve, "serve the web page and follow this window: students' pages mirror it live");
    app.add_option("--port", o.port, "with --serve: the port (default 8642)")->type_name("N");
    app.add_option("--bind", o.bind, "with --serve: the IPv4 address to listen on (default 0.0.0.0, every network)")
        ->type_name("ADDR");
    app.add_option("--max-clients", o.max_clients, "with --serve: the most pages that follow at once (default 60)")
        ->type_name("N");
    app.add_option("--site", o.site, "with --serve: the web page's folder (default: the one beside attnviz)")
        ->type_name("DIR");
    app.add_option("--per-address", o.per_address,
                   "with --serve: the most pages from one address (default 8; 0 for no limit, as behind one router)")
        ->type_name("N");
    app.add_option("--allow-host", o.allow_hosts,
                   "with --serve: a name pages may reach this machine by besides its addresses (repeatable)")
        ->type_name("NAME");
    app.add_flag("--no-code", o.no_code, "with --serve: no class code (pages join without one)");
    app.add_option("--screenshot", o.screenshot, "render the chosen view into this PNG file and exit")->type_name("FILE");
    app.add_option("--size", o.size, "screenshot size WxH (default 1280x800)")->type_name("WxH");
    app.add_option("--open", o.open, "start from this session file (its state replaces the state options)")->type_name("FILE");
    app.add_option("--save-session", o.save_session, "write the state to this session file (after --screenshot, or when the window closes)")->type_name("FILE");
    app.add_option("--save-weights", o.save_weights,
                   "write the model the window holds (the Train view's run, a trained model in the views, or the lesson's weights) "
                   "to this .safetensors file (after --screenshot, or when the window closes)")
        ->type_name("FILE");
}

namespace {

bool parse_size(const std::string& text, int& w, int& h, std::string& error) {
    const size_t x = text.find_first_of("xX");
    int64_t a = 0, b = 0;
    std::string e1;
    if (x == std::string::npos || !parse_int(text.substr(0, x), "width", 320, 7680, a, e1) ||
        !parse_int(text.substr(x + 1), "height", 240, 4320, b, e1)) {
        error = "--size " + quote(text) + " is not a size from 320x240 to 7680x4320; give it as WIDTHxHEIGHT, e.g. 1280x800";
        return false;
    }
    w = int(a), h = int(b);
    return true;
}

// --weights with a trained model: the model's sizes are its own, so the lesson's options
// that would change them are refused rather than ignored; --text is its letters, --layer
// the block every view shows, --perturb a position after BOS.
bool trained_plan(const GuiOptions& o, GuiPlan& plan, std::string& error) {
    const ConfigOptions& c = o.config;
    const std::string path = *c.weights;
    auto refuse = [&](const std::string& what, const std::string& why) {
        error = what + " does not apply: " + escaped(path) + " is a trained model " + why;
        return false;
    };
    if (c.seed != "0") return refuse("--seed " + escaped(c.seed, 40), "whose weights are in the file; leave out --seed");
    if (c.seq_len)
        return refuse("--seq-len " + escaped(*c.seq_len, 40), "whose positions are BOS and the letters of --text; leave out --seq-len");
    if (c.mask != "causal") return refuse("--mask " + escaped(c.mask, 40), "trained with the causal mask; leave out --mask");
    if (c.scale != "head-dim") return refuse("--scale " + escaped(c.scale, 40), "trained with head_dim ** -0.5; leave out --scale");
    if (c.n_embd) return refuse("--n-embd " + escaped(*c.n_embd, 40), "whose C is in the file; leave out --n-embd");
    if (c.n_head) return refuse("--n-head " + escaped(*c.n_head, 40), "whose H is in the file; leave out --n-head");
    std::string why;
    if (c.text && c.text->find_first_not_of(" \t\r\n") == std::string::npos) {
        error = "--text has no letters; give letters of the model's vocabulary, e.g. --text \"a b c a b d\", or leave "
                "out --text for a b c d a b c d";
        return false;
    }
    if (!read_trained_input(path, c.text.value_or(""), plan.trained, why)) {
        error = c.text && why.find(path) == std::string::npos ? "--text: " + why : why;
        return false;
    }
    const ModelConfig& m = plan.trained->model->config;
    const int N = int(plan.trained->tokens.size());
    int64_t v = 0;
    if (c.layer) {
        if (!parse_int(*c.layer, "--layer", 0, m.n_layer - 1, v, error)) return false;
        plan.layer = int(v);
    }
    if (!c.perturb.empty()) {
        if (!parse_int(c.perturb, "--perturb", 0, N - 1, v, error)) return false;
        if (v == 0) {
            error = "--perturb 0 is BOS (^), which is always the first token and is never replaced; give a position "
                    "from 1 to " + std::to_string(N - 1);
            return false;
        }
        plan.perturb = int(v);
    }
    plan.config.n_embd = m.n_embd;
    plan.config.n_head = m.n_head;
    plan.config.seq_len = N;
    return true;
}

// --model: a toy model goes the --weights way above; a GPT-2 directory or nanoGPT file is
// read whole (gpt_io.h) with its tokenizer, on --text or --tokens; --layer is the layer
// every view shows, --perturb P (with --replace ID) the token the causality view replaces.
bool model_plan(const GuiOptions& o, GuiPlan& plan, std::string& error) {
    const ConfigOptions& c = o.config;
    const std::string path = *c.model;
    if (c.weights) {
        error = "--weights " + quote_path(*c.weights) + " and --model " + quote_path(path) +
                " both give the model; give one of them";
        return false;
    }
    if (is_trained_model_file(path)) {
        if (c.tokens || c.replace) {
            error = std::string(c.tokens ? "--tokens" : "--replace") + " is for a GPT model; " + quote_path(path) +
                    " is a toy model that reads letters: give them with --text";
            return false;
        }
        GuiOptions toy = o;
        toy.config.weights = path;
        toy.config.model.reset();
        return trained_plan(toy, plan, error);
    }
    auto refuse = [&](const std::string& what) {
        error = what + " does not apply to a --model, whose sizes and weights come from its file; leave it out";
        return false;
    };
    if (c.seed != "0") return refuse("--seed " + quote(c.seed, 40));
    if (c.n_embd) return refuse("--n-embd " + quote(*c.n_embd, 40));
    if (c.seq_len) return refuse("--seq-len " + quote(*c.seq_len, 40) + " (T is the number of tokens)");
    if (c.mask != "causal") return refuse("--mask " + quote(c.mask, 40));
    if (c.scale != "head-dim") return refuse("--scale " + quote(c.scale, 40));
    std::optional<int> n_head;
    int64_t v = 0;
    if (c.n_head) {
        if (!parse_int(*c.n_head, "--n-head", 1, max_n_head, v, error)) return false;
        n_head = int(v);
    }
    if (c.text && c.text->empty()) {
        error = "--text is empty; give at least one character of text, or leave out --text for a default sentence";
        return false;
    }
    if (!read_gpt_input(path, n_head, c.text.value_or(""), c.tokens.value_or(""), plan.trained, error)) return false;
    const Model& m = *plan.trained->model;
    const int T = int(plan.trained->tokens.size());
    if (std::string why = check_model(plan.trained, gui_memory_cap, gui_gpt_memory_cap); !why.empty()) {
        error = "--model " + quote_path(path) + ": " + why + " (the window's limit)";
        return false;
    }
    if (c.layer) {
        if (!parse_int(*c.layer, "--layer", 0, m.config.n_layer - 1, v, error)) return false;
        plan.layer = int(v);
    }
    if (!c.perturb.empty()) {
        if (!parse_int(c.perturb, "--perturb", 0, T - 1, v, error)) return false;
        plan.perturb = int(v);
    }
    if (c.replace) {
        if (c.perturb.empty()) {
            error = "--replace " + quote(*c.replace, 40) + " needs --perturb P, the position whose token it replaces";
            return false;
        }
        if (!parse_int(*c.replace, "--replace", 0, m.config.vocab - 1, v, error)) return false;
        plan.replace_token = int(v);
    }
    plan.config = block_config(m.config, T);
    return true;
}

} // namespace

// --task and its options: the Train view's run, checked as `attnviz train` checks them.
bool make_train_plan(const GuiOptions& o, GuiPlan& plan, std::string& error) {
    const bool any = !o.task.empty() || !o.train_steps.empty() || !o.lr.empty() || !o.batch.empty() || !o.n_layer.empty();
    if (!any) return true;
    Task task = Task::both;
    if (!o.task.empty() && !parse_task(o.task, task, error)) return false;
    TrainSettings t = default_train_settings(task);
    int64_t v = 0;
    if (!o.task.empty()) {
        if (!parse_int(o.config.seed, "--seed", 0, INT64_MAX - 1, v, error)) return false;
        t.seed = uint64_t(v);
        if (o.config.n_embd) {
            if (!parse_int(*o.config.n_embd, "--n-embd", 1, max_train_n_embd, v, error)) return false;
            t.model.n_embd = int(v);
        }
        if (o.config.n_head) {
            if (!parse_int(*o.config.n_head, "--n-head", 1, max_train_n_head, v, error)) return false;
            t.model.n_head = int(v);
        }
    }
    if (!o.n_layer.empty()) {
        if (!parse_int(o.n_layer, "--n-layer", 1, 2, v, error)) return false;
        t.model.n_layer = int(v);
    }
    if (!o.batch.empty()) {
        if (!parse_int(o.batch, "--batch", 1, max_train_batch, v, error)) return false;
        t.batch = int(v);
    }
    if (!o.lr.empty()) {
        double d = 0;
        if (!parse_real(o.lr, "--lr", -1e300, 1e300, d, error)) return false;
        if (!(d > 0)) {
            error = "--lr " + quote(o.lr) + " is not positive; give a learning rate above 0, e.g. 5e-3";
            return false;
        }
        t.lr = d;
    }
    if (!o.train_steps.empty()) {
        if (!parse_int(o.train_steps, "--train-steps", 0, 1'000'000, v, error)) return false;
        plan.train_steps = v;
    }
    if (std::string bad = validate(t); !bad.empty()) {
        error = bad;
        return false;
    }
    plan.train = t;
    return true;
}

namespace {

// --model-panel and the Patching panel's options (checked again by the panel's Run).
bool model_panel_plan(const GuiOptions& o, GuiPlan& plan, std::string& error) {
    if (o.model_panel == "lens") plan.model_panel = ModelPanel::lens;
    else if (o.model_panel == "patching") plan.model_panel = ModelPanel::patching;
    else if (!o.model_panel.empty() && o.model_panel != "heads") {
        error = "--model-panel " + escaped(o.model_panel, 40) + " is not a panel; use heads, lens or patching";
        return false;
    }
    const bool answers = !o.patch_answer.empty() || !o.patch_wrong.empty();
    if (o.patch_corrupt.empty() && answers) {
        error = "--patch-answer and --patch-wrong need --patch-corrupt, the corrupted prompt to patch into";
        return false;
    }
    if (!o.patch_corrupt.empty()) {
        if (!plan.trained) {
            error = "--patch-corrupt needs a model to patch: give --model or --weights with a GPT or induction model";
            return false;
        }
        plan.patch_corrupt = o.patch_corrupt;
        plan.patch_answer = o.patch_answer;
        plan.patch_wrong = o.patch_wrong;
        if (o.model_panel.empty()) plan.model_panel = ModelPanel::patching;
    }
    return true;
}

// The server's options need --serve.
bool serve_options_plan(const GuiOptions& o, std::string& error) {
    if (!o.serve) {
        const char* given = !o.port.empty() ? "--port" : !o.bind.empty() ? "--bind" : !o.max_clients.empty() ? "--max-clients"
                            : !o.site.empty() ? "--site" : !o.per_address.empty() ? "--per-address"
                            : !o.allow_hosts.empty() ? "--allow-host" : o.no_code ? "--no-code" : nullptr;
        if (given) {
            error = std::string(given) + " needs --serve; add --serve to serve the web page to the class";
            return false;
        }
    }
    return true;
}

// What the window shows: a GPT or trained model, or the lesson's module (its config, words
// and weights file), within the window's memory cap. `trained` says which.
bool source_plan(const GuiOptions& o, GuiPlan& plan, bool& trained, std::string& error) {
    Inputs in;
    if ((o.config.tokens || o.config.replace) && !o.config.model) {
        error = std::string(o.config.tokens ? "--tokens" : "--replace") + " needs --model, a GPT-2 directory or nanoGPT file";
        return false;
    }
    trained = o.config.model || (o.config.weights && is_trained_model_file(*o.config.weights));
    if (o.config.model && !model_plan(o, plan, error)) return false;
    if (!o.config.model && trained && !trained_plan(o, plan, error)) return false;
    if (!trained) {
        ConfigOptions lesson = o.config;
        if (!o.task.empty()) { // the run's options, not the lesson's
            lesson.seed = "0";
            lesson.n_embd.reset();
            lesson.n_head.reset();
        }
        if (!to_inputs(lesson, in, error)) return false;
        plan.config = in.config;
    }
    plan.tokens = in.tokens;
    if (in.weights) {
        auto w = std::make_shared<WeightsFile>();
        w->path = in.weights_path;
        w->layer = in.weights->layer;
        w->loaded = std::move(*in.weights);
        plan.weights = std::move(w);
    }
    // The window keeps textures besides the trace: a tighter cap than the commands' (app_state.h).
    if (std::string why = validate_window(plan.config, gui_memory_cap); !why.empty()) {
        error = why + " (the window's limit)";
        if (!plan.tokens.empty()) {
            // Too many words: say how many the window takes at this C and H.
            AppState probe;
            probe.config.edit = plan.config;
            std::string words;
            if (!set_text(probe, *o.config.text, words)) error = "--text: " + words;
        }
        return false;
    }
    return true;
}

// The kernel, the view, the step, the strength and the window's look.
bool screen_plan(const GuiOptions& o, GuiPlan& plan, bool trained, std::string& error) {
    if (!o.config.kernel.empty()) {
        KernelKind k;
        if (!parse_kernel(o.config.kernel, k, error)) return false;
        plan.kernel = k == KernelKind::reference ? KernelChoice::reference : KernelChoice::fast;
    }
    if (!trained && !to_perturb(o.config, plan.config, plan.perturb, error)) return false;
    if (!o.view.empty() && !parse_view(o.view, plan.view, error)) return false;
    int64_t v = 0;
    if (!o.step.empty()) {
        if (!parse_int(o.step, "--step", 0, walk_last_step, v, error)) return false;
        plan.step = int(v);
    }
    double d = 0;
    if (!o.strength.empty()) {
        if (!parse_real(o.strength, "--strength", 0, 1, d, error)) return false;
        plan.strength = float(d);
    }
    if (!o.theme.empty() && !parse_theme(o.theme, plan.theme, error)) return false;
    plan.theme_given = !o.theme.empty();
    if (!o.palette.empty()) {
        PaletteKind k;
        if (!parse_palette(o.palette, k, error)) return false;
        plan.palette = k;
    }
    if (!o.font_scale.empty()) {
        if (!parse_real(o.font_scale, "--font-scale", 1, 3, d, error)) return false;
        plan.font_scale = float(d);
    }
    return true;
}

// --open: the session replaces the state options; checked here, before any window opens.
bool session_plan(const GuiOptions& o, GuiPlan& plan, std::string& error) {
    if (o.open.empty()) return true;
    Session ss;
    AppState probe;
    probe.memory_cap = gui_memory_cap;
    if (!read_session(o.open, ss, error) || !apply_session(probe, ss, error)) return false;
    plan.config = probe.config.edit;
    plan.kernel = probe.kernel_choice.edit;
    plan.view = probe.screen.view;
    plan.step = probe.screen.step;
    plan.perturb = probe.p;
    plan.strength = probe.strength;
    plan.theme = probe.screen.theme;
    plan.theme_given = true;
    plan.font_scale = probe.screen.font_scale;
    plan.palette = probe.screen.palette;
    plan.tokens = probe.tokens.edit;
    plan.weights = probe.weights.edit;
    plan.train_state = probe.train;
    plan.trained = probe.edit_trained; // a trained model the session showed in the views
    plan.layer = probe.edit_layer;
    plan.replace_token = probe.shown.replace_token;
    plan.ablate = probe.ablation.edit.heads;
    plan.ablate_mode = probe.ablation.edit.mode;
    plan.generate = probe.generate.restore;
    return true;
}

// --ablate and --ablate-mode, on the model the window will show.
bool ablation_plan(const GuiOptions& o, GuiPlan& plan, std::string& error) {
    if (!o.ablate_mode.empty()) {
        if (!parse_ablation_mode(o.ablate_mode, plan.ablate_mode, error)) {
            error = "--ablate-mode " + escaped(o.ablate_mode, 40) + ": " + error;
            return false;
        }
        if (o.ablate.empty() && plan.ablate.empty()) {
            error = "--ablate-mode needs --ablate: name the heads to ablate, e.g. --ablate 0.1";
            return false;
        }
    }
    if (!o.ablate.empty()) {
        if (!plan.trained) {
            error = "--ablate " + escaped(o.ablate, 40) + " needs a model to ablate: give --weights TRAINED.safetensors or --model with it";
            return false;
        }
        std::string why;
        if (!parse_heads(o.ablate, plan.trained->model->config, plan.ablate, why)) {
            error = "--ablate " + escaped(o.ablate, 40) + ": " + why;
            return false;
        }
    }
    return true;
}

// --head, after --open: the heads are those of the model or the config the window will show.
bool head_plan(const GuiOptions& o, GuiPlan& plan, std::string& error) {
    int64_t v = 0;
    if (!o.head.empty()) {
        const int H = plan.trained ? plan.trained->model->config.n_head : plan.config.n_head;
        if (!parse_int(o.head, "--head", 0, H - 1, v, error)) {
            if (error.find("out of range") != std::string::npos)
                error = "--head " + escaped(o.head, 40) + " is not a head here: there are H = " + std::to_string(H) +
                        " heads; give one from 0 to " + std::to_string(H - 1);
            return false;
        }
        plan.head = int(v);
    }
    return true;
}

} // namespace

bool make_plan(const GuiOptions& o, GuiPlan& plan, std::string& error) {
    if (!serve_options_plan(o, error)) return false;
    if (!o.save_weights.empty() && !ends_with_nocase(o.save_weights, ".safetensors")) {
        error = "--save-weights " + quote_path(o.save_weights) + " does not end in .safetensors; give a name like model.safetensors";
        return false;
    }
    if (!make_train_plan(o, plan, error)) return false;
    bool trained = false;
    if (!source_plan(o, plan, trained, error) || !screen_plan(o, plan, trained, error) || !session_plan(o, plan, error) ||
        !ablation_plan(o, plan, error) || !head_plan(o, plan, error) || !model_panel_plan(o, plan, error))
        return false;
    if (!o.size.empty() && !parse_size(o.size, plan.width, plan.height, error)) return false;
    plan.headless = !o.screenshot.empty();
    return true;
}

} // namespace attnviz
