// serve_link.cpp: see serve_link.h.
#include "serve_link.h"
#include "check_questions.h"
#include "follow_gpt.h"
#include "follow_protocol.h"
#include "follow_guard.h"
#include "follow_server.h"
#include "model_io.h"
#include "weights_io.h"
#include "serve_address.h"
#include "session.h"
#include "session_state.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace attnviz {

namespace {

namespace fp = follow_protocol;

// The URL prefix of a published file of `kind` (fp::file_model, ...): /follow/KIND-.
std::string file_prefix(const std::string& kind) { return fp::files_prefix + kind + "-"; }

struct Link {
    FollowServer server;
    ServeConfig config;
    bool configured = false; // config holds --serve's checked options
    bool with_code = true;   // a class code (not --no-code)
    bool just_started = false;
    bool new_run = false;    // a new server: the class's answers start again
    // What the pages fetch (/follow/...): the shown toy model's weights and the weights
    // file's block, each with the object it was written from (immutable, so a new object
    // is a new file) and its URL. A new file gets a new URL: a page never takes an old one.
    const void* model_key = nullptr;
    const void* weights_key = nullptr;
    int files_n = 0;
    std::string model_url, weights_url;
    // A GPT model's parts (follow_gpt.h), each with the key it was made for and its URL.
    std::string gpt_key[gpt_part_count], gpt_url[gpt_part_count];
    std::string gpt_keys; // all three, to tell a frame that changed none
    // follow_message's last: its session text and files, and the message made of them.
    std::string last_text, last_key, last_message;
    std::vector<std::pair<std::string, std::string>> files;
};

// The bytes of the file `write` makes in memory, as save_model or save_weights would write it
// ("" when it cannot, with a line on stderr).
template <class Write> std::string file_bytes(const char* what, Write write) {
    std::string error, bytes;
    if (!write(what, bytes, error)) {
        std::fprintf(stderr, "attnviz: serve: the pages cannot have the %s: %s\n", what, error.c_str());
        bytes.clear();
    }
    return bytes;
}

// The key a GPT part is made for now: "" (none) in another mode, and while no page follows
// (making the shown layer's part at T = 1024 takes a quarter of a second of the frame).
std::string wanted_key(Link& l, const AppState& s, GptPart part) {
    return std::holds_alternative<GptModel>(s.shown.source) && l.server.stats().clients > 0 ? gpt_part_key(s, part) : "";
}

// A GPT model's parts (follow_gpt.h): each made again, under a new URL, when its key changed.
// Never the model's weights file.
template <class Drop> void publish_gpt_parts(Link& l, const AppState& s, Drop drop) {
    for (int p = 0; p < gpt_part_count; ++p) {
        const GptPart part = GptPart(p);
        const std::string key = wanted_key(l, s, part);
        if (key == l.gpt_key[p]) continue;
        const std::string prefix = file_prefix(std::string(fp::file_gpt) + "-" + to_string(part));
        drop(prefix.c_str());
        l.gpt_key[p] = key;
        l.gpt_url[p].clear();
        if (key.empty()) continue;
        std::string bytes, error;
        if (!gpt_part_bytes(s, part, bytes, error)) {
            std::fprintf(stderr, "attnviz: serve: the pages cannot have the GPT model's %s: %s\n", to_string(part), error.c_str());
            continue;
        }
        l.gpt_url[p] = prefix + std::to_string(++l.files_n) + fp::file_suffix;
        l.files.emplace_back(l.gpt_url[p], std::move(bytes));
    }
}

// Publishes the files the state needs when they changed.
void publish_files(Link& l, const AppState& s) {
    const void* model = std::holds_alternative<ToyModel>(s.shown.source) ? shown_model(s).get() : nullptr;
    const void* weights = shown_weights_file(s).get(); // as to_session
    std::string gpt_keys;
    for (int p = 0; p < gpt_part_count; ++p) gpt_keys += wanted_key(l, s, GptPart(p)) + '\n';
    if (model == l.model_key && weights == l.weights_key && gpt_keys == l.gpt_keys) return;
    l.gpt_keys = gpt_keys;
    auto drop = [&](const char* prefix) {
        l.files.erase(std::remove_if(l.files.begin(), l.files.end(),
                                     [&](const auto& f) { return f.first.rfind(prefix, 0) == 0; }),
                      l.files.end());
    };
    if (model != l.model_key) {
        drop(file_prefix(fp::file_model).c_str());
        l.model_url.clear();
        if (model) {
            const Model& m = *shown_model(s)->model;
            l.model_url = file_prefix(fp::file_model) + std::to_string(++l.files_n) + fp::file_suffix;
            l.files.emplace_back(l.model_url, file_bytes("shown model", [&](const char* name, std::string& out, std::string& e) {
                                     return model_bytes(name, m, out, e);
                                 }));
        }
    }
    if (weights != l.weights_key) {
        drop(file_prefix(fp::file_weights).c_str());
        l.weights_url.clear();
        if (weights) {
            // The block the views use, alone (a GPT-2 checkpoint is hundreds of megabytes):
            // the lesson's names, read back bit for bit (weights_io.h).
            const LoadedWeights& w = s.weights.applied->loaded;
            l.weights_url = file_prefix(fp::file_weights) + std::to_string(++l.files_n) + fp::file_suffix;
            l.files.emplace_back(l.weights_url, file_bytes("weights file", [&](const char* name, std::string& out, std::string& e) {
                                     return weights_bytes(name, w.weights, w.n_head, out, e);
                                 }));
        }
    }
    l.model_key = model;
    l.weights_key = weights;
    publish_gpt_parts(l, s, drop);
    l.server.publish_files(l.files);
}

// A file's name without its folders: the teacher's paths (home folder, user name) are not the
// class's business.
std::string base_name(const std::string& path) {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    const size_t slash = p.find_last_of('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

// The session's fields that name files on the teacher's disk, by their base names.
void without_paths(nlohmann::json& j) {
    if (j.contains("weights") && j["weights"].is_string()) j["weights"] = base_name(j["weights"].get<std::string>());
    if (j.contains("model") && j["model"].is_object() && j["model"].contains("source") && j["model"]["source"].is_string())
        j["model"]["source"] = base_name(j["model"]["source"].get<std::string>());
}

// What the pages get: the session JSON the window would save, and the URLs of the files it
// names beside it or on the teacher's disk: follow_model, a trained model's weights;
// follow_weights, the weights file's block (the page reads it as layer 0). A GPT model's
// weights file is never sent (hundreds of megabytes): follow_gpt holds what is on screen
// (gpt_follow_header) and the URLs of its parts, which each page fetches as its view needs.
std::string follow_message(Link& l, const AppState& s) {
    publish_files(l, s);
    const Source& src = s.shown.source;
    std::string text = session_to_json(to_session(s));
    if (std::holds_alternative<LessonBlock>(src)) return text; // no file named
    std::string gpt;
    nlohmann::json header;
    if (std::holds_alternative<GptModel>(src)) {
        header = gpt_follow_header(s);
        for (int p = 0; p < gpt_part_count; ++p) header[fp::gpt_urls][to_string(GptPart(p))] = l.gpt_url[p];
        gpt = header.dump();
    }
    // The same session and files as the frame before: the same message, not parsed again.
    const std::string key = std::to_string(src.index()) + '\n' + l.model_url + '\n' + l.weights_url + '\n' + gpt;
    if (text == l.last_text && key == l.last_key) return l.last_message;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) return text;
    without_paths(j);
    if (std::holds_alternative<ToyModel>(src)) j[fp::state_model] = l.model_url;
    if (std::holds_alternative<WeightsLayer>(src)) j[fp::state_weights] = l.weights_url;
    if (std::holds_alternative<GptModel>(src)) j[fp::state_gpt] = std::move(header);
    l.last_text = std::move(text);
    l.last_key = key;
    l.last_message = j.dump(2);
    return l.last_message;
}

Link& link() {
    static Link l;
    return l;
}

bool start(Link& l, std::string& error) {
    if (l.config.site_dir.empty()) l.config.site_dir = find_site_dir("");
    l.config.choices = check_question_choices();
    l.config.code = l.with_code ? make_class_code() : ""; // a new one on each start
    if (!l.server.start(l.config, error)) return false;
    l.just_started = l.new_run = true;
    l.model_key = l.weights_key = nullptr; // a new server has no file yet
    for (std::string& k : l.gpt_key) k.clear();
    for (std::string& u : l.gpt_url) u.clear();
    l.gpt_keys.clear();
    l.files.clear();
    std::string line = "attnviz: serving the class at";
    for (const std::string& u : serve_urls(l.config)) line += " " + url_with_code(u, l.config.code);
    if (!l.config.code.empty()) line += " (class code " + l.config.code + ")";
    std::printf("%s (pages: at most %d; Ctrl+C or closing the window stops it)\n", line.c_str(), l.config.max_clients);
    std::fflush(stdout);
    return true;
}

} // namespace

bool start_serving(const GuiOptions& o, std::string& error) {
    if (!o.serve) return true;
    Link& l = link();
    if (!parse_serve_options(o.port, o.bind, o.max_clients, l.config, error) ||
        !parse_serve_limits(o.per_address, o.allow_hosts, l.config, error))
        return false;
    l.with_code = !o.no_code;
    l.config.site_dir = find_site_dir(o.site);
    l.configured = true;
    return start(l, error);
}

void serve_after_frame(AppState& s) {
    Link& l = link();
    FollowStatus& f = s.follow;
    f.can_serve = true;
    if (f.toggle_request) {
        f.toggle_request = false;
        f.error.clear();
        if (l.server.running()) {
            l.server.stop();
        } else {
            std::string error;
            if (!start(l, error)) f.error = "Not serving: " + error + ".";
        }
    }
    f.serving = l.server.running();
    if (!f.serving) {
        f.urls.clear();
        f.clients = 0;
        f.answers = {};
        f.clear_request = FollowStatus::no_clear;
        return;
    }
    if (f.new_code_request) { // every page is dropped and asks for the new code
        f.new_code_request = false;
        if (l.with_code) {
            l.config.code = make_class_code();
            l.server.set_code(l.config.code);
            l.just_started = true; // the QR code again
        }
    }
    if (l.just_started) {
        l.just_started = false;
        f.urls = serve_urls(l.config);
        f.code = l.config.code;
        f.per_address = l.config.per_address;
        const QrCode q = make_qr(url_with_code(f.urls.front(), f.code));
        f.qr_size = q.size;
        f.qr = q.modules;
        f.show_large = true; // for the room to scan; the teacher hides it
    }
    const ServeStats st = l.server.stats();
    f.clients = st.clients;
    f.refused_address = st.refused_address;
    if (l.new_run) { // answers of pages that left: at most 3 × --max-clients kept (docs/views.md)
        l.new_run = false;
        f.answers.reset(l.config.choices, size_t(3 * l.config.max_clients));
    }
    if (f.clear_request != FollowStatus::no_clear) {
        l.server.clear_answers(f.clear_request); // after the answers taken before it, in order
        f.clear_request = FollowStatus::no_clear;
    }
    count_answers(l.server, f.answers);
    l.server.publish(follow_message(l, s));
}

void stop_serving() { link().server.stop(); }

void count_answers(FollowServer& server, ClassAnswers& tally) {
    for (const AnswerEvent& e : server.take_answers()) {
        if (e.kind == AnswerEvent::answer) tally.answer(e.conn, e.page, e.question, e.choice);
        else if (e.kind == AnswerEvent::left) tally.dropped(e.conn);
        else tally.clear(e.question);
    }
}

} // namespace attnviz
