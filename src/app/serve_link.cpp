// serve_link.cpp: see serve_link.h.
#include "serve_link.h"
#include "check_questions.h"
#include "follow_server.h"
#include "serve_address.h"
#include "session.h"
#include "session_state.h"
#include <cstdio>

namespace attnviz {

namespace {

struct Link {
    FollowServer server;
    ServeConfig config;
    bool configured = false; // config holds --serve's checked options
    bool just_started = false;
};

Link& link() {
    static Link l;
    return l;
}

bool start(Link& l, std::string& error) {
    if (l.config.site_dir.empty()) l.config.site_dir = find_site_dir("");
    l.config.choices = check_question_choices();
    if (!l.server.start(l.config, error)) return false;
    l.just_started = true;
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
    l.server.publish(session_to_json(to_session(s)));
}

void stop_serving() { link().server.stop(); }

} // namespace attnviz
