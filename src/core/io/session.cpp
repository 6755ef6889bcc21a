// session.cpp: session files; see session.h.
#include "session.h"
#include "atomic_file.h"
#include "text_util.h"
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace attnviz {

using json = nlohmann::json;

const std::vector<std::string>& session_views() {
    static const std::vector<std::string> v = {"walk", "qkv", "scores", "causality", "check", "train", "model", "generate"};
    return v;
}

const std::vector<std::string>& session_themes() {
    static const std::vector<std::string> v = {"dark", "light", "high-contrast"};
    return v;
}

static bool one_of(const std::string& s, const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), s) != names.end();
}

static std::string join(const std::vector<std::string>& names) {
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
    return s;
}

// Each getter leaves `out` alone when the key is absent and fails, with a sentence, when
// the value has the wrong type or range.
namespace {
struct Reader {
    const json& j;
    const std::string& name;
    std::string& error;

    bool fail(const std::string& key, const std::string& what) {
        error = name + ": \"" + key + "\" " + what;
        return false;
    }
    bool get_int(const char* key, int64_t lo, int64_t hi, int64_t& out) {
        if (!j.contains(key)) return true;
        const json& v = j[key];
        if (!v.is_number_integer())
            return fail(key, "must be a whole number");
        int64_t x = v.is_number_unsigned() ? int64_t(std::min<uint64_t>(v.get<uint64_t>(), uint64_t(INT64_MAX)))
                                           : v.get<int64_t>();
        if (x < lo || x > hi)
            return fail(key, "is " + std::to_string(x) + ", outside " + std::to_string(lo) + " to " +
                                 std::to_string(hi));
        out = x;
        return true;
    }
    // The seed: any whole number from 0 to 2^64 - 1, as --seed takes it.
    bool get_seed(const char* key, uint64_t& out) {
        if (!j.contains(key)) return true;
        const json& v = j[key];
        if (!v.is_number_integer()) return fail(key, "must be a whole number");
        if (!v.is_number_unsigned() && v.get<int64_t>() < 0)
            return fail(key, "is " + std::to_string(v.get<int64_t>()) + ", outside 0 to " + std::to_string(UINT64_MAX));
        out = v.get<uint64_t>();
        return true;
    }
    bool get_real(const char* key, double lo, double hi, double& out) {
        if (!j.contains(key)) return true;
        const json& v = j[key];
        if (!v.is_number()) return fail(key, "must be a number");
        double x = v.get<double>();
        if (!(x >= lo && x <= hi)) {
            std::ostringstream o;
            o << "is " << x << ", outside " << lo << " to " << hi;
            return fail(key, o.str());
        }
        out = x;
        return true;
    }
    bool get_string(const char* key, std::string& out) {
        if (!j.contains(key)) return true;
        if (!j[key].is_string()) return fail(key, "must be a string");
        out = j[key].get<std::string>();
        return true;
    }
};
} // namespace

namespace {

// "generate": {"greedy", "temperature", "top_k", "top_p", "seed", "draws", "tokens", "sampled", "probs"}.
bool parse_generate(const json& gj, const std::string& name, SessionGenerate& g, std::string& error) {
    if (!gj.is_object()) {
        error = name + ": \"generate\" must be an object";
        return false;
    }
    g.present = true;
    Reader r{gj, name, error};
    SamplingOptions& o = g.options;
    int64_t top_k = o.top_k, draws = -1;
    if (gj.contains("greedy")) {
        if (!gj["greedy"].is_boolean()) return r.fail("greedy", "must be true or false");
        o.greedy = gj["greedy"].get<bool>();
    }
    if (!r.get_real("temperature", -1e30, 1e30, o.temperature) || !r.get_int("top_k", 0, 1 << 30, top_k) ||
        !r.get_real("top_p", -1e30, 1e30, o.top_p) || !r.get_seed("seed", o.seed) || !r.get_int("draws", 0, max_seq_len, draws))
        return false;
    o.top_k = int(top_k);
    if (std::string why = validate(o); !why.empty()) {
        error = name + ": the generation's options: " + why;
        return false;
    }
    const json t = gj.value("tokens", json::array()), sm = gj.value("sampled", json::array()), p = gj.value("probs", json::array());
    bool ok = t.is_array() && sm.is_array() && p.is_array() && t.size() <= size_t(max_seq_len) && sm.size() == t.size() &&
              p.size() == t.size();
    for (size_t i = 0; ok && i < t.size(); ++i) {
        ok = t[i].is_number_integer() && t[i].get<int64_t>() >= -1 && t[i].get<int64_t>() < (int64_t(1) << 31) &&
             sm[i].is_boolean() && p[i].is_number();
        if (!ok) break;
        g.tokens.push_back(int(t[i].get<int64_t>()));
        g.sampled.push_back(sm[i].get<bool>());
        g.probs.push_back(float(p[i].get<double>()));
    }
    if (!ok) {
        error = name + ": \"generate\" must hold \"tokens\" (ids, -1 for a row of x), \"sampled\" (true or false) and "
                       "\"probs\" (numbers), one each per generated token, at most " + std::to_string(max_seq_len);
        return false;
    }
    if (draws >= 0 && draws != g.draws()) {
        error = name + ": the generation's \"draws\" is " + std::to_string(draws) + " but " + std::to_string(g.draws()) +
                " of its tokens were sampled; they must agree";
        return false;
    }
    return true;
}

json generate_json(const SessionGenerate& g) {
    const SamplingOptions& o = g.options;
    return {{"greedy", o.greedy}, {"temperature", o.temperature}, {"top_k", o.top_k}, {"top_p", o.top_p},
            {"seed", o.seed},     {"draws", g.draws()},           {"tokens", g.tokens}, {"sampled", g.sampled},
            {"probs", g.probs}};
}

} // namespace

namespace {

// The version field: present, whole, and one this attnviz reads.
bool check_version(json& j, const std::string& name, std::string& error) {
    if (!j.is_object() || !j.contains("attnviz_session")) {
        error = name + " is not a session file: it has no \"attnviz_session\" version field";
        return false;
    }
    if (!j["attnviz_session"].is_number_integer()) {
        error = name + ": \"attnviz_session\" must be a whole version number";
        return false;
    }
    int64_t version = j["attnviz_session"].get<int64_t>();
    if (version > session_version) {
        error = name + " was written by a newer attnviz (session version " + std::to_string(version) +
                "); this one reads version " + std::to_string(session_version) + ", so update attnviz";
        return false;
    }
    if (version < 1) {
        error = name + ": session version " + std::to_string(version) + " is not valid";
        return false;
    }
    return true;
}

// The lesson's settings and the window's: sizes, seed, step, perturbation, names.
bool parse_settings(json& j, const std::string& name, Session& s, std::string& error) {
    Reader r{j, name, error};
    int64_t v = 0;
    std::string mask = to_string(s.config.mask), scale = to_string(s.config.scale);
    v = s.config.n_embd;  if (!r.get_int("n_embd", 1, max_n_embd, v)) return false;   s.config.n_embd = int(v);
    v = s.config.n_head;  if (!r.get_int("n_head", 1, max_n_head, v)) return false;   s.config.n_head = int(v);
    v = s.config.seq_len; if (!r.get_int("seq_len", 1, max_seq_len, v)) return false; s.config.seq_len = int(v);
    if (!r.get_seed("seed", s.config.seed)) return false;
    v = s.step;           if (!r.get_int("step", 0, 1000, v)) return false;           s.step = int(v);
    v = s.perturb;        if (!r.get_int("perturb", -1, max_seq_len - 1, v)) return false; s.perturb = int(v);
    v = s.layer;          if (!r.get_int("layer", 0, 10000, v)) return false;         s.layer = int(v);
    if (!r.get_real("strength", 0.0, 1.0, s.strength)) return false;
    if (!r.get_real("font_scale", 1.0, 3.0, s.font_scale)) return false;
    if (!r.get_string("mask", mask) || !r.get_string("scale", scale) || !r.get_string("kernel", s.kernel) ||
        !r.get_string("view", s.view) || !r.get_string("theme", s.theme) ||
        !r.get_string("palette", s.palette) || !r.get_string("weights", s.weights_path))
        return false;
    std::string why;
    if (!parse_mask(mask, s.config.mask, why) || !parse_scale(scale, s.config.scale, why)) {
        error = name + ": " + why;
        return false;
    }
    KernelKind k;
    if (!s.kernel.empty() && !parse_kernel(s.kernel, k, why)) {
        error = name + ": " + why;
        return false;
    }
    if (!one_of(s.view, session_views())) {
        error = name + ": view \"" + escaped(s.view, 60) + "\" is not known; use " + join(session_views());
        return false;
    }
    if (!one_of(s.theme, session_themes())) {
        error = name + ": theme \"" + escaped(s.theme, 60) + "\" is not known; use " + join(session_themes());
        return false;
    }
    return true;
}

// "answers_shown" and "tokens", both optional (sessions saved before them have neither).
bool parse_lists(const json& j, const std::string& name, Session& s, std::string& error) {
    if (j.contains("answers_shown")) {
        const json& a = j["answers_shown"];
        bool ok = a.is_array() && a.size() <= 16;
        for (size_t i = 0; ok && i < a.size(); ++i)
            ok = a[i].is_number_integer() && a[i].get<int64_t>() >= 0 && a[i].get<int64_t>() < 16;
        if (!ok) {
            error = name + ": \"answers_shown\" must be a list of the check view's question numbers, from 0";
            return false;
        }
        for (const json& q : a) s.answers_shown.push_back(int(q.get<int64_t>()));
    }
    if (j.contains("tokens")) {
        const json& t = j["tokens"];
        if (!t.is_array() || t.size() > size_t(max_seq_len)) {
            error = name + ": \"tokens\" must be a list of at most " + std::to_string(max_seq_len) + " words";
            return false;
        }
        for (const json& w : t) {
            if (!w.is_string() || w.get<std::string>().empty()) {
                error = name + ": \"tokens\" must hold non-empty strings";
                return false;
            }
            s.tokens.push_back(w.get<std::string>());
        }
        if (!s.tokens.empty()) s.config.seq_len = int(s.tokens.size());
    }
    return true;
}

// The Train view's run: its settings, and its weights beside the session file.
bool parse_train(const json& tj, const std::string& name, const std::string& path, SessionTrain& t, std::string& error) {
    if (!tj.is_object()) {
        error = name + ": \"train\" must be an object";
        return false;
    }
    t.present = true;
    Reader tr{tj, name, error};
    int64_t x = 0;
    struct IntField {
        const char* key;
        int64_t lo, hi;
        int& field;
    } ints[] = {{"V", 2, 26, t.vocab},         {"T", 1, 64, t.seq_len},      {"C", 1, 256, t.n_embd},
                {"H", 1, 16, t.n_head},        {"L", 1, 4, t.n_layer},       {"batch", 1, 256, t.batch},
                {"speed_index", 0, 6, t.speed_index}};
    for (IntField& f : ints) {
        x = f.field;
        if (!tr.get_int(f.key, f.lo, f.hi, x)) return false;
        f.field = int(x);
    }
    if (!tr.get_int("step", 0, 100'000'000, t.step) || !tr.get_int("scrub", -1, 100'000'000, t.scrub) ||
        !tr.get_seed("seed", t.seed) || !tr.get_real("lr", 1e-30, 1e30, t.lr) || !tr.get_string("task", t.task) ||
        !tr.get_string("probe", t.probe))
        return false;
    t.weights_path = train_weights_path(path);
    return true;
}

// The Model view's model: its letters, source, layer and ablation, its weights beside the file.
bool parse_model(const json& mj, const std::string& name, const std::string& path, SessionModel& m, std::string& error) {
    if (!mj.is_object()) {
        error = name + ": \"model\" must be an object";
        return false;
    }
    m.present = true;
    Reader mr{mj, name, error};
    int64_t layer = 0, replace = -1;
    if (!mr.get_string("letters", m.letters) || !mr.get_string("source", m.source) ||
        !mr.get_int("layer", 0, 63, layer) || !mr.get_int("replace_token", -1, 255, replace) ||
        !mr.get_string("ablate", m.ablate) || !mr.get_string("ablate_mode", m.ablate_mode))
        return false; // "ablate" and "ablate_mode" are optional: sessions saved before them open unablated
    m.layer = int(layer);
    m.replace_token = int(replace);
    m.weights_path = model_weights_path(path);
    return true;
}

} // namespace

bool parse_session(const std::string& text, const std::string& path, Session& out, std::string& error) {
    const std::string name = escaped(path); // the sentences below stay one line
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
        error = name + " is not a session file: it is not valid JSON";
        return false;
    }
    if (!check_version(j, name, error)) return false;
    Session s; // defaults for absent keys
    if (!parse_settings(j, name, s, error) || !parse_lists(j, name, s, error)) return false;
    if (j.contains("train") && !parse_train(j["train"], name, path, s.train, error)) return false;
    if (j.contains("model") && !parse_model(j["model"], name, path, s.model, error)) return false;
    if (j.contains("generate") && !parse_generate(j["generate"], name, s.generate, error)) return false;
    std::string bad = validate(s.config);
    if (!bad.empty()) {
        error = name + ": " + bad;
        return false;
    }
    if (s.perturb >= s.config.seq_len) {
        error = name + ": perturb " + std::to_string(s.perturb) + " is outside 0.." +
                std::to_string(s.config.seq_len - 1);
        return false;
    }
    out = s;
    return true;
}

bool read_session(const std::string& path, Session& out, std::string& error) {
    const std::string name = escaped(path);
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
        error = name + " does not exist; give the path of a session saved by attnviz";
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        error = name + " is a directory, not a session file";
        return false;
    }
    if (st.st_size > (1 << 20)) {
        error = name + " is " + std::to_string(st.st_size) + " bytes, too large for a session file (at most 1 MiB)";
        return false;
    }
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        error = name + " cannot be read; check its permissions";
        return false;
    }
    std::ostringstream text;
    text << f.rdbuf();
    return parse_session(text.str(), path, out, error);
}

std::string session_to_json(const Session& s) {
    json j = json::object();
    j["attnviz_session"] = session_version;
    j["seed"] = s.config.seed;
    j["n_embd"] = s.config.n_embd;
    j["n_head"] = s.config.n_head;
    j["seq_len"] = s.config.seq_len;
    j["mask"] = to_string(s.config.mask);
    j["scale"] = to_string(s.config.scale);
    j["kernel"] = s.kernel;
    j["tokens"] = s.tokens;
    j["view"] = s.view;
    j["step"] = s.step;
    j["perturb"] = s.perturb;
    j["strength"] = s.strength;
    j["theme"] = s.theme;
    j["font_scale"] = s.font_scale;
    j["palette"] = s.palette;
    j["weights"] = s.weights_path;
    j["layer"] = s.layer;
    if (!s.answers_shown.empty()) j["answers_shown"] = s.answers_shown;
    if (s.train.present) {
        const SessionTrain& t = s.train;
        j["train"] = {{"task", t.task}, {"seed", t.seed},   {"V", t.vocab},      {"T", t.seq_len},
                      {"C", t.n_embd},  {"H", t.n_head},    {"L", t.n_layer},    {"lr", t.lr},
                      {"batch", t.batch}, {"step", t.step}, {"scrub", t.scrub}, {"probe", t.probe},
                      {"speed_index", t.speed_index}};
    }
    if (s.model.present) {
        const SessionModel& m = s.model;
        j["model"] = {{"letters", m.letters}, {"layer", m.layer}, {"replace_token", m.replace_token}, {"source", m.source}};
        if (!m.ablate.empty()) j["model"]["ablate"] = m.ablate, j["model"]["ablate_mode"] = m.ablate_mode;
    }
    if (s.generate.present) j["generate"] = generate_json(s.generate);
    return j.dump(2) + "\n";
}

std::string model_weights_path(const std::string& session_path) {
    std::string base = session_path;
    if (ends_with_nocase(base, ".json")) base.resize(base.size() - 5);
    return base + ".model.safetensors";
}

std::string train_weights_path(const std::string& session_path) {
    std::string base = session_path;
    if (ends_with_nocase(base, ".json")) base.resize(base.size() - 5);
    return base + ".train.safetensors";
}

bool write_session(const std::string& path, const Session& s, std::string& error) {
    return write_file_atomically(path, session_to_json(s), error);
}

} // namespace attnviz
