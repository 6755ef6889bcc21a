// web_follow.cpp: see web_follow.h.
#include "web_follow.h"
#include "follow_gpt.h"
#include "follow_protocol.h"
#include "session.h"
#include "session_state.h"
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <emscripten.h>
#include <emscripten/websocket.h>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace attnviz {

namespace {

namespace fp = follow_protocol;

struct Follow {
    bool enabled = false;   // served by a teacher's window
    EMSCRIPTEN_WEBSOCKET_T ws = 0;
    bool open = false;
    bool full = false;      // refused: the class is full (no retry)
    std::string code;       // the class code ("" for none yet), from the address or typed
    bool need_code = false; // waiting for the code to be typed (page.js's prompt)
    int failures = 0;       // drops since the last open: the next try waits 1, 2, 4 ... 30 s
    std::string latest;     // the teacher's latest state
    bool fresh = false;     // not applied yet
    double retry_at = 0;    // emscripten_get_now() of the next try after a drop
    double applied_at = 0;  // Date.now() when the teacher's state was last applied
    double received_at = 0; // Date.now() when the latest arrived
    std::string note;
    std::string page_id;       // this page's ID for its answers (kept over a reload)
    std::set<std::string> fetching; // the files being fetched (their URLs, also their paths here)
    std::set<std::string> have;     // fetched, in the page's file system at the same path
    std::set<std::string> failed;   // could not be fetched (not tried again)
    // A teacher's GPT layer (follow_gpt.h): the URL of each part the state shows ("": none).
    std::string gpt_applied[gpt_part_count];
    AppState* state = nullptr; // the page's, for the life of the page
} the_follow;

// This tab's ID for its answers: random, kept in sessionStorage so that a reload answers as
// the same page (its new answer replaces the old one in the teacher's count).
EM_JS(void, follow_page_id, (char* buf, int max), {
    var id = "";
    try {
        id = sessionStorage.getItem('attnviz-page') || "";
    } catch (e) {
    }
    if (!/^[A-Za-z0-9_-]{1,40}$/.test(id)) { // follow_protocol.h's page ID
        var a = new Uint8Array(12);
        crypto.getRandomValues(a);
        id = Array.from(a, function(b) { return ('0' + b.toString(16)).slice(-2); }).join("");
        try {
            sessionStorage.setItem('attnviz-page', id);
        } catch (e) {
        }
    }
    stringToUTF8(id, buf, max);
});

// The teacher cleared question q's answers (-1: every question's): this page's mark goes.
bool take_clear(AppState& s, const std::string& text) {
    if (text.rfind(std::string("{\"") + fp::answers_cleared + "\":", 0) != 0) return false;
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object() || !j.contains(fp::answers_cleared) || !j[fp::answers_cleared].is_number_integer()) return true;
    const long long q = j[fp::answers_cleared].get<long long>();
    for (int i = 0; i < check_question_count; ++i)
        if (q == -1 || q == i) {
            s.follow.my_answer[i] = -1;
            s.follow.answer_pending[i] = false;
        }
    return true;
}

// Each answer not sent yet, when the connection is open.
void send_answers(AppState& s) {
    Follow& f = the_follow;
    if (!f.open || !f.ws) return;
    for (int q = 0; q < check_question_count; ++q) {
        if (!s.follow.answer_pending[q] || s.follow.my_answer[q] < 0) continue;
        const nlohmann::json m = {{fp::answer,
                                   {{fp::answer_page, f.page_id}, {fp::answer_question, q}, {fp::answer_choice, s.follow.my_answer[q]}}}};
        if (emscripten_websocket_send_utf8_text(f.ws, m.dump().c_str()) == EMSCRIPTEN_RESULT_SUCCESS)
            s.follow.answer_pending[q] = false;
    }
}

// fetch(url) into the page's file system (Emscripten's, in memory) at the same path, then
// attnviz_follow_fetched(url, ok). The window's files want the class code too.
EM_JS(void, follow_fetch, (const char* url, const char* param, const char* code), {
    var u = UTF8ToString(url);
    var c = UTF8ToString(code);
    fetch(c ? u + '?' + UTF8ToString(param) + '=' + encodeURIComponent(c) : u, {cache : 'no-store'})
        .then(function(r) {
            if (!r.ok) throw new Error('HTTP ' + r.status);
            return r.arrayBuffer();
        })
        .then(function(b) {
            try {
                FS.mkdir(u.slice(0, u.lastIndexOf('/')));
            } catch (e) {
            }
            FS.writeFile(u, new Uint8Array(b));
            Module.ccall('attnviz_follow_fetched', null, [ 'string', 'number' ], [ u, 1 ]);
        })
        .catch(function(e) { Module.ccall('attnviz_follow_fetched', null, [ 'string', 'number' ], [ u, 0 ]); });
});

EM_JS(void, follow_unlink, (const char* path), {
    try {
        FS.unlink(UTF8ToString(path));
    } catch (e) {
    }
});

// /follow/KIND-N.safetensors, as serve_link.cpp names the files it publishes.
bool file_url_ok(const std::string& u, const std::string& kind) {
    if (u.rfind(fp::files_prefix + kind + "-", 0) != 0 || u.size() > 64) return false;
    for (char ch : u)
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '/' || ch == '-' || ch == '.')) return false;
    return true;
}

void apply_latest(AppState& s);

} // namespace

// A file the state waits for arrived (ok = 1) or could not be fetched: the state is applied,
// or the page says why it kept its own. The file it replaces (same kind) is removed.
extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_follow_fetched(const char* url, int ok) {
    Follow& f = the_follow;
    if (!url || !f.fetching.erase(url)) return;
    if (ok) {
        const std::string u = url, kind = u.substr(0, u.rfind('-') + 1); // "/follow/model-", "/follow/gpt-layer-"
        for (auto it = f.have.begin(); it != f.have.end();)
            if (it->rfind(kind, 0) == 0) {
                follow_unlink(it->c_str());
                it = f.have.erase(it);
            } else {
                ++it;
            }
        f.have.insert(u);
    } else {
        f.failed.insert(url);
    }
    f.fresh = true;
    if (f.state) apply_latest(*f.state);
}

namespace {

// The file the page fetched to `path` (its URL), whole; "" when it cannot be read.
std::string fetched_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A teacher's GPT layer (follow_gpt, follow_gpt.h): the parts the teacher's view draws from
// are fetched (the layer always, the weights for the walk and QKV views, the grid for the
// Model view), then shown with the session's screen settings. A part already shown is kept.
void apply_gpt(AppState& s, const nlohmann::json& extra, const Session& ss) {
    Follow& f = the_follow;
    const nlohmann::json& h = extra[fp::state_gpt];
    View view = View::walk;
    std::string error;
    if (!parse_view(ss.view, view, error)) {
        f.fresh = false;
        f.note = "Kept this page's state: " + error + ".";
        return;
    }
    std::string url[gpt_part_count];
    bool needed[gpt_part_count], waiting = false;
    for (int p = 0; p < gpt_part_count; ++p) {
        const char* kind = to_string(GptPart(p));
        const nlohmann::json u = h.contains(fp::gpt_urls) && h[fp::gpt_urls].is_object() ? h[fp::gpt_urls].value(kind, nlohmann::json())
                                                                                          : nlohmann::json();
        url[p] = u.is_string() ? u.get<std::string>() : "";
        needed[p] = gpt_part_needed(GptPart(p), view) && (GptPart(p) != GptPart::grid || h.value(fp::gpt_grid, false));
        if (!needed[p] || (url[p] == f.gpt_applied[p] && received_gpt(s))) continue;
        if (!file_url_ok(url[p], std::string(fp::file_gpt) + "-" + kind) || f.failed.count(url[p])) {
            f.fresh = false;
            f.note = std::string("Kept this page's state: the teacher's GPT ") + kind + " could not be fetched.";
            return;
        }
        if (f.have.count(url[p])) continue;
        waiting = true;
        if (f.fetching.insert(url[p]).second) follow_fetch(url[p].c_str(), fp::code_param, f.code.c_str());
    }
    if (waiting) {
        f.note = "Fetching the teacher's GPT layer.";
        return; // fresh: applied when the parts are here
    }
    std::string bytes[gpt_part_count];
    const std::string* parts[gpt_part_count] = {};
    for (int p = 0; p < gpt_part_count; ++p) {
        if (received_gpt(s) && url[p] == f.gpt_applied[p]) continue; // shown already: kept
        if (needed[p]) bytes[p] = fetched_bytes(url[p]);
        parts[p] = &bytes[p]; // empty when not needed: not shown (NaN weights, no grid)
    }
    f.fresh = false;
    if (!show_received_gpt(s, h, parts, error) || !apply_session_screen(s, ss, error)) {
        f.note = "Kept this page's state: " + error + ".";
        return;
    }
    for (int p = 0; p < gpt_part_count; ++p)
        if (parts[p]) f.gpt_applied[p] = needed[p] ? url[p] : "";
    f.note = "Following the teacher's window (its GPT model's layer " + std::to_string(s.shown.layer) + ").";
    f.applied_at = EM_ASM_DOUBLE({ return Date.now(); });
}

// The latest state, applied when the page follows (on arrival, and by Back to the teacher):
// the frame after draws it. The files it names on the teacher's disk come as URLs the
// window serves (follow_model: a trained model's weights; follow_weights: the weights
// file's block, read as layer 0): the state waits until they are fetched. A GPT model
// (follow_gpt) is shown from what the window sends of it (apply_gpt).
void apply_latest(AppState& s) {
    Follow& f = the_follow;
    if (s.follow.mode != FollowMode::follow || !f.fresh) return;
    Session ss;
    std::string error;
    const nlohmann::json extra = nlohmann::json::parse(f.latest, nullptr, false);
    auto extra_text = [&](const char* key) {
        return extra.is_object() && extra.contains(key) && extra[key].is_string() ? extra[key].get<std::string>() : "";
    };
    if (extra.is_object() && extra.contains(fp::state_gpt) && extra[fp::state_gpt].is_object()) {
        if (parse_session(f.latest, "the teacher's state", ss, error)) {
            apply_gpt(s, extra, ss);
        } else {
            f.fresh = false;
            f.note = "Kept this page's state: " + error + ".";
        }
        return;
    }
    const bool parsed = parse_session(f.latest, "the teacher's state", ss, error);
    if (parsed) {
        // The files the state needs: (the URL, what it is for the note).
        std::vector<std::pair<std::string, const char*>> need;
        if (ss.model.present) need.emplace_back(extra_text(fp::state_model), fp::file_model);
        if (!ss.weights_path.empty()) need.emplace_back(extra_text(fp::state_weights), fp::file_weights);
        bool waiting = false;
        for (const auto& [url, kind] : need) {
            if (!file_url_ok(url, kind) || f.failed.count(url)) {
                f.fresh = false;
                f.note = std::string("Kept this page's state: the teacher's ") + kind + " could not be fetched.";
                return;
            }
            if (f.have.count(url)) continue;
            waiting = true;
            if (f.fetching.insert(url).second) follow_fetch(url.c_str(), fp::code_param, f.code.c_str());
        }
        if (waiting) {
            f.note = "Fetching the teacher's weights.";
            return; // fresh: applied when they are here
        }
        if (ss.model.present) ss.model.weights_path = extra_text(fp::state_model);
        if (!ss.weights_path.empty()) {
            ss.weights_path = extra_text(fp::state_weights);
            ss.layer = 0; // the block alone
        }
    }
    f.fresh = false;
    if (parsed && apply_session(s, ss, error)) {
        f.note = "Following the teacher's window.";
        f.applied_at = EM_ASM_DOUBLE({ return Date.now(); });
    } else {
        f.note = "Kept this page's state: " + error + ".";
    }
}

// The page itself asked again, synchronously, once at start (it is small and cached): the
// teacher's window marks every file it serves with x-attnviz-follow. Any other server does
// not, and the page asks nothing that could fail there (a 404 would be a console error).
EM_JS(int, follow_probe, (const char* header, const char* value), {
    if (typeof location === 'undefined' || (location.protocol !== 'http:' && location.protocol !== 'https:')) return 0;
    try {
        var x = new XMLHttpRequest();
        x.open('GET', location.pathname, false);
        x.send(null);
        return x.status === 200 && x.getResponseHeader(UTF8ToString(header)) === UTF8ToString(value) ? 1 : 0;
    } catch (e) {
        return 0;
    }
});

// ws://HOST/follow?code=CODE (wss:// behind https) into buf.
EM_JS(void, follow_url, (const char* path, const char* param, const char* code, char* buf, int max), {
    var c = UTF8ToString(code);
    var u = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + UTF8ToString(path) +
            (c ? '?' + UTF8ToString(param) + '=' + encodeURIComponent(c) : "");
    stringToUTF8(u, buf, max);
});

// The class code the page was given (page.js: the address's ?code=, or typed before).
EM_JS(void, follow_code, (char* buf, int max), {
    stringToUTF8(typeof attnvizCode === 'function' ? attnvizCode() : "", buf, max);
});

// page.js's prompt for the code, saying why.
EM_JS(void, follow_ask_code, (const char* why), {
    if (typeof attnvizAskCode === 'function') attnvizAskCode(UTF8ToString(why));
});

void ask_code(const char* why) {
    Follow& f = the_follow;
    f.need_code = true;
    f.note = "Waiting for the class code.";
    follow_ask_code(why);
}

EM_BOOL on_open(int, const EmscriptenWebSocketOpenEvent*, void*) {
    the_follow.open = true;
    the_follow.failures = 0;
    the_follow.note = "Connected to the teacher's window.";
    std::printf("attnviz: following the teacher's window\n");
    return EM_TRUE;
}

EM_BOOL on_message(int, const EmscriptenWebSocketMessageEvent* e, void*) {
    if (!e->isText || !e->data) return EM_TRUE; // the teacher's window sends text only
    const std::string text(reinterpret_cast<const char*>(e->data), strnlen(reinterpret_cast<const char*>(e->data), e->numBytes));
    if (the_follow.state && take_clear(*the_follow.state, text)) return EM_TRUE;
    the_follow.latest = text;
    the_follow.fresh = true;
    the_follow.received_at = EM_ASM_DOUBLE({ return Date.now(); });
    if (the_follow.state) apply_latest(*the_follow.state); // between frames, on the page's one thread
    return EM_TRUE;
}

EM_BOOL on_close(int, const EmscriptenWebSocketCloseEvent* e, void*) {
    Follow& f = the_follow;
    f.open = false;
    emscripten_websocket_delete(f.ws);
    f.ws = 0;
    if (e->code == fp::close_full) {
        f.full = true;
        f.note = "The teacher's window follows as many pages as it takes; this page explores on its own.";
    } else if (e->code == fp::close_code) { // no code, a wrong one, or the teacher made a new one
        ask_code(f.code.empty() ? "Type the code shown with the address on the teacher's screen."
                                : "The teacher's window did not take this code (a new one may be on the teacher's "
                                  "screen). Type the code shown with the address.");
    } else {
        // Back off (1, 2, 4 ... 30 s, give or take a quarter): a class whose window restarts
        // does not all knock at once.
        const double wait = std::min(30000.0, 1000.0 * double(1 << std::min(f.failures, 5)));
        const double jitter = 0.75 + 0.5 * EM_ASM_DOUBLE({ return Math.random(); });
        ++f.failures;
        f.note = "The teacher's window is not reachable; trying again.";
        f.retry_at = emscripten_get_now() + wait * jitter;
    }
    std::printf("attnviz: the teacher's window closed the connection (%d)\n", int(e->code));
    return EM_TRUE;
}

void connect() {
    Follow& f = the_follow;
    char url[512] = {};
    follow_url(fp::socket_path, fp::code_param, f.code.c_str(), url, int(sizeof url));
    EmscriptenWebSocketCreateAttributes attr;
    emscripten_websocket_init_create_attributes(&attr);
    attr.url = url;
    attr.protocols = fp::subprotocol;
    attr.createOnMainThread = EM_TRUE;
    const EMSCRIPTEN_WEBSOCKET_T ws = emscripten_websocket_new(&attr);
    if (ws <= 0) {
        f.note = "This browser cannot open the connection to the teacher's window.";
        f.retry_at = emscripten_get_now() + 5000;
        return;
    }
    f.ws = ws;
    emscripten_websocket_set_onopen_callback(ws, nullptr, on_open);
    emscripten_websocket_set_onmessage_callback(ws, nullptr, on_message);
    emscripten_websocket_set_onclose_callback(ws, nullptr, on_close);
}

} // namespace

void web_follow_start(AppState& s) {
    Follow& f = the_follow;
    f.state = &s;
    f.enabled = follow_probe(fp::mark_header, fp::subprotocol) == 1;
    if (!f.enabled) return;
    f.note = "Connecting to the teacher's window.";
    char id[48] = {};
    follow_page_id(id, int(sizeof id));
    f.page_id = id;
    char code[32] = {};
    follow_code(code, int(sizeof code));
    f.code = code;
    connect(); // without a code too: a window started with --no-code takes it; else 4401 asks for one
}

// The code typed in page.js's prompt: the page connects with it at once.
extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_follow_code(const char* code) {
    Follow& f = the_follow;
    if (!f.enabled || !code) return;
    f.code = code;
    f.need_code = false;
    f.failures = 0;
    f.retry_at = 0;
    f.note = "Connecting to the teacher's window.";
}

void web_follow_frame(AppState& s) {
    Follow& f = the_follow;
    if (!f.enabled) return;
    FollowStatus& fs = s.follow;
    fs.page = true;
    fs.connected = f.open;
    if (!f.ws && !f.full && !f.need_code && emscripten_get_now() >= f.retry_at) connect();
    if (fs.back_request) {
        fs.back_request = false;
        fs.mode = FollowMode::follow;
        f.fresh = !f.latest.empty();
    }
    apply_latest(s);
    send_answers(s);
    if (fs.mode == FollowMode::explore && received_gpt(s)) fs.note = gpt_lives_on_teacher;
    else if (fs.mode == FollowMode::explore && f.open) fs.note = "Exploring on your own; Back to the teacher returns.";
    else fs.note = f.note;
}

double web_follow_applied_ms() { return the_follow.applied_at; }
double web_follow_received_ms() { return the_follow.received_at; }

} // namespace attnviz
