// follow_server.cpp: see follow_server.h. The pages' WebSocket side, the liveness tick and the
// server's life; the HTTP side and the door are follow_http.cpp.
#include "follow_server_impl.h"
#include "follow_protocol.h"
#include <arpa/inet.h>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnviz {

namespace {

namespace fp = follow_protocol;
// A page's socket send buffer (Linux doubles it), then lws holds the rest of one message: a
// slow page has at most this much of old states ahead of the newest, never a long queue.
constexpr int send_buffer = 16 * 1024;

// lws's own lines (errors and warnings only) go to stderr with the app's prefix, escaped.
void lws_line(int level, const char* line) {
    (void)level;
    std::string l = line ? line : "";
    while (!l.empty() && l.back() == '\n') l.pop_back();
    std::fprintf(stderr, "attnviz: serve: %s\n", log_escaped(l, 300).c_str());
}

bool valid_page_id(const std::string& id) {
    if (id.empty() || id.size() > fp::page_id_max) return false;
    for (char ch : id)
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
            return false;
    return true;
}

bool write_text(lws* wsi, std::vector<unsigned char>& buf, const std::string& m, lws_write_protocol kind) {
    buf.resize(LWS_PRE + m.size());
    std::memcpy(buf.data() + LWS_PRE, m.data(), m.size());
    return lws_write(wsi, buf.data() + LWS_PRE, m.size(), kind) >= int(m.size());
}

// Closes at once with a status and a reason (in ESTABLISHED: the page gets the close frame).
int close_with(lws* wsi, int status, const char* why) {
    lws_close_reason(wsi, lws_close_status(status), reinterpret_cast<unsigned char*>(const_cast<char*>(why)),
                     std::strlen(why));
    return -1;
}

int tick_ms(const ServeConfig& c) { return std::clamp(std::min(c.ping_ms, c.idle_ms) / 4, 20, 1000); }

} // namespace

// A page's answer message (see follow_server.h), counted; false when it is none.
bool FollowServer::Impl::take_answer(Client& c, const std::string& text) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object() || j.size() != 1 || !j.contains(fp::answer)) return false;
    const nlohmann::json& a = j[fp::answer];
    if (!a.is_object() || a.size() != 3 || !a.contains(fp::answer_page) || !a.contains(fp::answer_question) ||
        !a.contains(fp::answer_choice))
        return false;
    const nlohmann::json &page = a[fp::answer_page], &q = a[fp::answer_question], &ch = a[fp::answer_choice];
    if (!page.is_string() || !q.is_number_integer() || !ch.is_number_integer()) return false;
    const std::string id = page.get<std::string>();
    const long long qi = q.get<long long>(), ci = ch.get<long long>();
    if (!valid_page_id(id) || qi < 0 || qi > INT_MAX || ci < 0 || ci > INT_MAX) return false;
    if (!c.page.empty() && c.page != id) return false; // one page per connection
    if (size_t(qi) >= config.choices.size() || ci >= config.choices[size_t(qi)]) return false;
    if (auto p = page_conn.find(id); p != page_conn.end() && p->second != c.id) return false; // another's
    bool full = false;
    {
        std::lock_guard<std::mutex> lock(mutex);
        full = answer_events.size() >= max_answer_events;
        if (!full) answer_events.push_back({AnswerEvent::answer, c.id, id, int(qi), int(ci)});
    }
    if (full) {
        log("unread", "ignored a page's answer: the window has not taken the answers before it");
        return false;
    }
    c.page = id;
    page_conn[id] = c.id;
    return true;
}

// The first question whose clear this page was not told of, or -1.
int FollowServer::Impl::owed_clear(Client& c) {
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t q = 0; q < clear_round.size(); ++q)
        if (c.seen_clear[q] != clear_round[q]) {
            c.seen_clear[q] = clear_round[q];
            return int(q);
        }
    return -1;
}

// A new page: the class code, then --max-clients, then --per-address.
int FollowServer::Impl::established(lws* wsi) {
    if (!code_ok(wsi)) {
        ++refused_code;
        log("code", "refused a page: no class code, or a wrong one");
        return close_with(wsi, fp::close_code, "the class code is missing or wrong");
    }
    if (int(clients.size()) >= config.max_clients) {
        ++refused;
        log("full", "refused a page: " + std::to_string(config.max_clients) + " pages follow already (--max-clients)");
        return close_with(wsi, fp::close_full, "the class is full");
    }
    char peer[64] = {};
    lws_get_peer_simple(wsi, peer, sizeof peer);
    const std::string address = peer;
    if (config.per_address > 0 && per_address[address] >= config.per_address) {
        ++refused_address;
        log("address", "refused a page: " + std::to_string(config.per_address) + " pages follow from " +
                           log_escaped(address, 64) + " already (--per-address)");
        return close_with(wsi, fp::close_full, "the class is full for this address");
    }
    Client c;
    c.id = ++next_client;
    c.address = address;
    c.heard = c.pinged = ServeClock::now();
    c.rate = RateLimit(config.rate, config.burst);
    {
        std::lock_guard<std::mutex> lock(mutex);
        c.seen_clear = clear_round; // a new page has nothing to forget
    }
    // A page that reads nothing fills this, then lws's one held message, then is dropped (tick).
    const int fd = lws_get_socket_fd(wsi);
    if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer);
    ++per_address[address];
    clients[wsi] = std::move(c);
    n_clients = int(clients.size());
    ++connected;
    lws_callback_on_writable(wsi);
    return 0;
}

void FollowServer::Impl::closed(lws* wsi) {
    auto it = clients.find(wsi);
    if (it == clients.end()) return;
    if (const Client& c = it->second; !c.page.empty()) { // its answers are kept, as a page that left
        if (auto p = page_conn.find(c.page); p != page_conn.end() && p->second == c.id) page_conn.erase(p);
        std::lock_guard<std::mutex> lock(mutex);
        answer_events.push_back({AnswerEvent::left, c.id, {}, 0, 0});
    }
    if (auto a = per_address.find(it->second.address); a != per_address.end() && --a->second <= 0) per_address.erase(a);
    clients.erase(it);
    n_clients = int(clients.size());
}

// What a page is owed, one message a call: a close, a ping, a clear, the newest state.
int FollowServer::Impl::writeable(lws* wsi) {
    auto it = clients.find(wsi);
    if (it == clients.end()) return 0;
    Client& c = it->second;
    if (c.close_why) return close_with(wsi, c.close_code, c.close_why);
    if (c.ping_owed) {
        c.ping_owed = false;
        c.pinged = ServeClock::now();
        if (!write_text(wsi, send_buf, "attnviz", LWS_WRITE_PING)) return -1;
        lws_callback_on_writable(wsi);
        return 0;
    }
    if (const int q = owed_clear(c); q >= 0) {
        const std::string m = nlohmann::json{{fp::answers_cleared, q}}.dump();
        if (!write_text(wsi, send_buf, m, LWS_WRITE_TEXT)) return -1;
        lws_callback_on_writable(wsi); // more clears, or the state, next
        return 0;
    }
    size_t n = 0;
    uint64_t g = 0;
    {
        std::lock_guard<std::mutex> lock(mutex);
        g = gen;
        if (g == 0 || c.sent_gen == g) return 0;
        n = latest.size();
        send_buf.resize(LWS_PRE + n);
        std::memcpy(send_buf.data() + LWS_PRE, latest.data(), n);
    }
    if (lws_write(wsi, send_buf.data() + LWS_PRE, n, LWS_WRITE_TEXT) < int(n)) return -1;
    c.sent_gen = g;
    c.owed = {};
    ++sent;
    return 0;
}

void FollowServer::Impl::receive(lws* wsi, const void* in, size_t len) {
    auto it = clients.find(wsi);
    if (it == clients.end()) return;
    Client& c = it->second;
    c.heard = ServeClock::now();
    if (!c.rx_over && c.rx.size() + len > config.max_message) {
        c.rx_over = true;
        c.rx.clear();
        c.rx.shrink_to_fit();
    }
    if (!c.rx_over) c.rx.append(static_cast<const char*>(in), len);
    if (!lws_is_final_fragment(wsi)) return;
    if (!c.rate.take(c.heard)) {
        ++throttled;
        log("rate", "dropped a page's message: more than " + std::to_string(int(config.rate)) + " a second");
    } else if (c.rx_over) {
        ++oversized;
        log("oversized", "dropped a page's message over " + std::to_string(config.max_message) + " bytes");
    } else if (lws_frame_is_binary(wsi) || !nlohmann::json::accept(c.rx)) {
        ++malformed;
        log("malformed", "dropped a page's malformed message (" + std::to_string(c.rx.size()) + " bytes, not JSON text)");
    } else if (take_answer(c, c.rx)) {
        ++answered;
    } else {
        ++ignored; // well-formed, no answer; pages cannot change the state
        log("ignored", "ignored a page's message: not an answer to one of the " + std::to_string(config.choices.size()) +
                           " questions, or another page's");
    }
    c.rx.clear();
    c.rx_over = false;
}

// Every tick: pings to quiet pages, silent and stuck ones dropped (their slots free at once),
// and once a second the log's held-back counts. A page is stuck when a tick saw it owed the
// newest state and nothing could be written to it since, for stuck_s: its buffer stayed full.
void FollowServer::Impl::tick() {
    const auto now = ServeClock::now();
    const auto idle = std::chrono::milliseconds(config.idle_ms), ping = std::chrono::milliseconds(config.ping_ms);
    uint64_t g = 0;
    {
        std::lock_guard<std::mutex> lock(mutex);
        g = gen;
    }
    for (auto& [wsi, c] : clients) {
        if (now - c.heard > idle) {
            ++timed_out;
            log("idle", "dropped a page silent for " + std::to_string(config.idle_ms / 1000) + " s");
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
        } else if (c.sent_gen != g && c.owed != ServeClock::time_point{} &&
                   now - c.owed > std::chrono::seconds(config.stuck_s)) {
            ++stuck;
            log("stuck", "dropped a page that reads nothing (its send buffer stayed full)");
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
        } else {
            if (c.sent_gen == g) c.owed = {};
            else if (c.owed == ServeClock::time_point{}) c.owed = now;
            if (now - c.heard >= ping && now - c.pinged >= ping && !c.ping_owed) {
                c.ping_owed = true;
                lws_callback_on_writable(wsi);
            }
        }
    }
    if (now - log_tick_at >= std::chrono::seconds(1)) {
        log_tick_at = now;
        logs.tick();
    }
}

int FollowServer::Impl::ws(lws* wsi, lws_callback_reasons reason, void* in, size_t len) {
    switch (reason) {
    case LWS_CALLBACK_ESTABLISHED:
        return established(wsi);
    case LWS_CALLBACK_CLOSED:
        closed(wsi);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return writeable(wsi);
    case LWS_CALLBACK_RECEIVE:
        receive(wsi, in, len);
        return 0;
    case LWS_CALLBACK_RECEIVE_PONG:
        if (auto it = clients.find(wsi); it != clients.end()) it->second.heard = ServeClock::now();
        return 0;
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED: {
        uint64_t g = 0, cg = 0, kg = 0;
        {
            std::lock_guard<std::mutex> lock(mutex);
            g = gen;
            cg = clear_gen;
            kg = code_gen;
        }
        if (kg != woken_code) { // a new class code: every page goes, and asks for it
            woken_code = kg;
            for (auto& [w, c] : clients) {
                c.close_why = "the class code changed";
                c.close_code = fp::close_code;
                lws_set_timeout(w, PENDING_TIMEOUT_USER_OK, 2); // one that reads nothing goes anyway
                lws_callback_on_writable(w);
            }
        }
        if (g != woken_gen || cg != woken_clear) {
            woken_gen = g;
            woken_clear = cg;
            lws_callback_on_writable_all_protocol(context, &protocols[1]);
        }
        return 0;
    }
    default:
        return 0;
    }
}

namespace {

int http_callback(lws* wsi, lws_callback_reasons reason, void* user, void* in, size_t len) {
    auto* impl = static_cast<FollowServer::Impl*>(lws_context_user(lws_get_context(wsi)));
    if (!impl) return lws_callback_http_dummy(wsi, reason, user, in, len);
    return impl->http(wsi, reason, user, in, len);
}

int ws_callback(lws* wsi, lws_callback_reasons reason, void* user, void* in, size_t len) {
    (void)user;
    auto* impl = static_cast<FollowServer::Impl*>(lws_context_user(lws_get_context(wsi)));
    if (!impl) return 0;
    return impl->ws(wsi, reason, in, len);
}

void tick_callback(lws_sorted_usec_list_t* sul) {
    auto* t = reinterpret_cast<FollowServer::Impl::Tick*>(sul);
    t->impl->tick();
    lws_sul_schedule(t->impl->context, 0, &t->sul, tick_callback, lws_usec_t(tick_ms(t->impl->config)) * 1000);
}

} // namespace

FollowServer::FollowServer() : impl_(std::make_unique<Impl>()) {}
FollowServer::~FollowServer() { stop(); }

bool FollowServer::running() const { return impl_->context != nullptr; }

bool FollowServer::start(const ServeConfig& c, std::string& error) {
    if (running()) stop();
    Impl& m = *impl_;
    if (c.port < 1 || c.port > 65535) {
        error = "--port " + std::to_string(c.port) + " is not a port; use a number from 1024 to 65535, such as 8642";
        return false;
    }
    char real[PATH_MAX];
    struct stat st {};
    if (c.site_dir.empty() || !::realpath(c.site_dir.c_str(), real) ||
        ::stat((std::string(real) + "/index.html").c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        error = c.site_dir.empty()
                    ? std::string("there is no web page to serve (no site folder beside attnviz); run make web, or name "
                                  "the folder with --site DIR")
                    : "--site " + c.site_dir + " holds no index.html; name the folder make web writes (build-web/site)";
        return false;
    }
    if (!check_bind(c, error)) return false;
    m.config = c;
    m.site_real = real;
    m.stopping = false;
    m.clients.clear();
    m.per_address.clear();
    m.page_conn.clear();
    m.refresh_hosts();
    {
        std::lock_guard<std::mutex> lock(m.mutex);
        m.answer_events.clear();
        m.clear_round.assign(c.choices.size(), 0);
        m.code = normalized_code(c.code);
        m.woken_code = m.code_gen;
    }
    if (c.quiet) m.logs.set_sink({});
    else if (c.log) m.logs.set_sink(c.log);
    else m.logs.set_sink([](const std::string& l) { std::fprintf(stderr, "attnviz: serve: %s\n", l.c_str()); });
    m.protocols[0] = {"http", http_callback, http_request_size(), 0, 0, nullptr, 0};
    m.protocols[1] = {fp::subprotocol, ws_callback, 0, 4096, 0, nullptr, 0};
    m.protocols[2] = {nullptr, nullptr, 0, 0, 0, nullptr, 0};

    lws_set_log_level(c.quiet ? 0 : (LLL_ERR | LLL_WARN), lws_line);
    lws_context_creation_info info;
    std::memset(&info, 0, sizeof info);
    info.port = c.port;
    info.iface = c.bind == "0.0.0.0" ? nullptr : c.bind.c_str();
    info.protocols = m.protocols;
    info.gid = -1;
    info.uid = -1;
    info.user = &m;
    info.options = LWS_SERVER_OPTION_DISABLE_IPV6 | LWS_SERVER_OPTION_VALIDATE_UTF8;
    info.server_string = "attnviz";
    info.timeout_secs = unsigned(std::max(1, c.handshake_s)); // a request (the upgrade too) whole within this
    info.keepalive_timeout = std::max(1, c.handshake_s);     // an idle HTTP connection, likewise
    info.timeout_secs_ah_idle = std::max(1, c.handshake_s);  // headers begun and never ended
    m.context = lws_create_context(&info);
    if (!m.context) {
        error = "cannot listen on " + c.bind + ":" + std::to_string(c.port) + "; choose another --port or --bind";
        return false;
    }
    m.tick_sul = {};
    m.tick_sul.impl = &m;
    m.thread = std::thread([&m] {
        lws_sul_schedule(m.context, 0, &m.tick_sul.sul, tick_callback, lws_usec_t(tick_ms(m.config)) * 1000);
        while (!m.stopping) lws_service(m.context, 0);
    });
    return true;
}

void FollowServer::stop() {
    Impl& m = *impl_;
    if (!m.context) return;
    m.stopping = true;
    lws_cancel_service(m.context);
    if (m.thread.joinable()) m.thread.join();
    lws_context_destroy(m.context);
    m.context = nullptr;
    m.clients.clear();
    m.file_sends.clear();
    m.n_clients = 0;
}

void FollowServer::publish(const std::string& message) {
    Impl& m = *impl_;
    {
        std::lock_guard<std::mutex> lock(m.mutex);
        if (m.gen > 0 && message == m.latest) return;
        m.latest = message;
        ++m.gen;
    }
    if (m.context) lws_cancel_service(m.context);
}

ServeStats FollowServer::stats() const {
    const Impl& m = *impl_;
    ServeStats s;
    s.clients = m.n_clients;
    s.connected = m.connected;
    s.refused = m.refused;
    s.refused_address = m.refused_address;
    s.refused_code = m.refused_code;
    s.refused_host = m.refused_host;
    s.refused_upgrade = m.refused_upgrade;
    s.timed_out = m.timed_out;
    s.stuck = m.stuck;
    s.throttled = m.throttled;
    s.malformed = m.malformed;
    s.oversized = m.oversized;
    s.ignored = m.ignored;
    s.answers = m.answered;
    s.sent = m.sent;
    s.http_refused = m.http_refused;
    s.files_sent = m.files_sent;
    return s;
}

} // namespace attnviz

namespace attnviz {

void FollowServer::publish_files(std::vector<std::pair<std::string, std::string>> files) {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> lock(m.mutex);
    m.files.clear();
    for (auto& [path, bytes] : files)
        if (path.rfind(fp::files_prefix, 0) == 0 && path.size() > std::strlen(fp::files_prefix) && m.files.size() < 4)
            m.files[path] = std::make_shared<const std::string>(std::move(bytes));
}

std::vector<AnswerEvent> FollowServer::take_answers() {
    std::vector<AnswerEvent> out;
    std::lock_guard<std::mutex> lock(impl_->mutex);
    out.swap(impl_->answer_events);
    return out;
}

void FollowServer::clear_answers(int q) {
    Impl& m = *impl_;
    {
        std::lock_guard<std::mutex> lock(m.mutex);
        const size_t nq = m.clear_round.size();
        if (q < -1 || q >= int(nq)) return;
        m.answer_events.push_back({AnswerEvent::clear, 0, {}, q, 0});
        for (size_t i = 0; i < nq; ++i)
            if (q == -1 || int(i) == q) ++m.clear_round[i];
        ++m.clear_gen;
    }
    if (m.context) lws_cancel_service(m.context);
}

void FollowServer::set_code(const std::string& code) {
    Impl& m = *impl_;
    {
        std::lock_guard<std::mutex> lock(m.mutex);
        m.code = normalized_code(code);
        ++m.code_gen;
    }
    if (m.context) lws_cancel_service(m.context);
}

} // namespace attnviz
