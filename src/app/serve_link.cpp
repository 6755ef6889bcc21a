// serve_link.cpp: see serve_link.h.
#include "serve_link.h"
#include "check_questions.h"
#include "follow_server.h"
#include "model_io.h"
#include "serve_address.h"
#include "session.h"
#include "session_state.h"
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace attnviz {

namespace {

struct Link {
    FollowServer server;
    ServeConfig config;
    bool configured = false; // config holds --serve's checked options
    bool just_started = false;
    const TrainedInput* model = nullptr; // the shown toy model whose weights are published
    int model_n = 0;
    std::string model_url;               // where the pages fetch them, /follow/model-N.safetensors
};

// A model's weights as the bytes of the safetensors file save_model writes ("" when they
// cannot be written): written to a private temporary folder, read back and removed.
std::string model_bytes(const Model& m) {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/attnviz-follow-XXXXXX";
    if (!::mkdtemp(dir.data())) return "";
    const std::string path = dir + "/model.safetensors";
    std::string error, bytes;
    if (save_model(path, m, error)) {
        std::ifstream f(path, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    } else {
        std::fprintf(stderr, "attnviz: serve: the pages cannot have the shown model: %s\n", error.c_str());
    }
    std::remove(path.c_str());
    ::rmdir(dir.c_str());
    return bytes;
}

// What the pages get: the session JSON the window would save, and, when a trained model
// is shown, follow_model: the URL of its weights (the session file keeps them beside it;
// a page fetches them). A GPT model is not sent (hundreds of megabytes, and opened from
// its own files): follow_gpt names it, and the pages keep their own state.
std::string follow_message(Link& l, const AppState& s) {
    const Mode m = mode(s);
    if (m == Mode::toy_model && s.shown.input.get() != l.model) {
        l.model = s.shown.input.get();
        l.model_url = "/follow/model-" + std::to_string(++l.model_n) + ".safetensors";
        l.server.publish_file(l.model_url, model_bytes(*s.shown.input->model));
    } else if (m != Mode::toy_model && l.model) {
        l.model = nullptr;
        l.model_url.clear();
        l.server.publish_file("", "");
    }
    std::string text = session_to_json(to_session(s));
    if (m == Mode::lesson) return text;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) return text;
    if (m == Mode::toy_model) j["follow_model"] = l.model_url;
    if (m == Mode::gpt_model) { // its folder's or file's name: the teacher's paths are not the class's business
        std::string name = s.shown.input->source;
        while (name.size() > 1 && name.back() == '/') name.pop_back();
        name = name.substr(name.find_last_of('/') + 1);
        j["follow_gpt"] = s.shown.input->layout + " " + name + ", layer " + std::to_string(s.shown.layer);
    }
    return j.dump(2);
}

Link& link() {
    static Link l;
    return l;
}

bool start(Link& l, std::string& error) {
    if (l.config.site_dir.empty()) l.config.site_dir = find_site_dir("");
    l.config.choices = check_question_choices();
    if (!l.server.start(l.config, error)) return false;
    l.just_started = true;
    l.model = nullptr; // a new server has no file yet
    std::string line = "attnviz: serving the class at";
    for (const std::string& u : serve_urls(l.config)) line += " " + u;
    std::printf("%s (pages: at most %d; Ctrl+C or closing the window stops it)\n", line.c_str(), l.config.max_clients);
    std::fflush(stdout);
    return true;
}

} // namespace

bool start_serving(const GuiOptions& o, std::string& error) {
    if (!o.serve) return true;
    Link& l = link();
    if (!parse_serve_options(o.port, o.bind, o.max_clients, l.config, error)) return false;
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
        f.answer_counts.clear();
        f.clear_request = FollowStatus::no_clear;
        return;
    }
    if (l.just_started) {
        l.just_started = false;
        f.urls = serve_urls(l.config);
        const QrCode q = make_qr(f.urls.front());
        f.qr_size = q.size;
        f.qr = q.modules;
        f.show_large = true; // for the room to scan; the teacher hides it
    }
    f.clients = l.server.stats().clients;
    if (f.clear_request != FollowStatus::no_clear) {
        l.server.clear_answers(f.clear_request);
        f.clear_request = FollowStatus::no_clear;
    }
    f.answer_counts = l.server.answer_counts();
    l.server.publish(follow_message(l, s));
}

void stop_serving() { link().server.stop(); }

} // namespace attnviz
