// follow_server.cpp: see follow_server.h.
#include "follow_server.h"
#include <arpa/inet.h>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <libwebsockets.h>
#include <algorithm>
#include <mutex>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace attnviz {

namespace {

constexpr const char* follow_protocol = "attnviz-follow";
constexpr const char* follow_json = "{\"follow\":\"/follow\",\"protocol\":\"attnviz-follow\"}";

// lws's own lines (errors and warnings only) go to stderr with the app's prefix.
void lws_line(int level, const char* line) {
    (void)level;
    std::fprintf(stderr, "attnviz: serve: %s", line);
}

const char* mime_of(const std::string& path) {
    const size_t dot = path.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
    if (ext == "html") return "text/html; charset=utf-8";
    if (ext == "js" || ext == "mjs") return "text/javascript";
    if (ext == "wasm") return "application/wasm";
    if (ext == "json") return "application/json";
    if (ext == "css") return "text/css";
    if (ext == "png") return "image/png";
    if (ext == "svg") return "image/svg+xml";
    if (ext == "ico") return "image/x-icon";
    return "application/octet-stream";
}

struct Client {
    uint64_t sent_gen = 0;
    std::vector<uint64_t> seen_clear; // the clear rounds this page was told of, by question
    std::string page;                 // the page's ID, from its first answer
    std::string rx;
    bool rx_over = false;
};

bool valid_page_id(const std::string& id) {
    if (id.empty() || id.size() > 40) return false;
    for (char ch : id)
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
            return false;
    return true;
}

// The HTTP side's per-request memory (zeroed by lws).
struct HttpRequest {
    int follow_json; // the body of /follow.json is still owed
    int file;        // the published file is being sent (Impl::file_sends)
};

// The published file on its way to one request: the bytes (kept alive while the window
// publishes another) and how far it got.
struct FileSend {
    std::shared_ptr<const std::string> bytes;
    size_t sent = 0;
};
constexpr size_t file_chunk = 16384;

} // namespace

struct FollowServer::Impl {
    ServeConfig config;
    std::string site_real; // the site folder's real path, no trailing slash
    lws_context* context = nullptr;
    std::thread thread;
    std::atomic<bool> stopping{false};
    lws_protocols protocols[3] = {};

    mutable std::mutex mutex; // latest, gen, and the answers below
    std::string latest;
    uint64_t gen = 0;
    uint64_t woken_gen = 0; // service thread only
    uint64_t clear_gen = 0; // bumped by clear_answers(), under the mutex
    uint64_t woken_clear = 0; // service thread only
    // The answers, by page ID: each question's choice, -1 for none. At most 4 × max_clients
    // pages (pages that left keep their answers until cleared); counts is their tally.
    std::unordered_map<std::string, std::vector<int>> answers;
    std::vector<std::vector<int>> counts;
    std::vector<uint64_t> clear_round; // by question
    // publish_files', under the mutex: path -> bytes.
    std::unordered_map<std::string, std::shared_ptr<const std::string>> files;
    std::unordered_map<lws*, FileSend> file_sends; // service thread only

    // Service thread only.
    std::unordered_map<lws*, Client> clients;
    std::vector<unsigned char> send_buf;
    uint64_t logged = 0;

    std::atomic<int> n_clients{0};
    std::atomic<uint64_t> connected{0}, refused{0}, malformed{0}, oversized{0}, ignored{0}, answered{0}, sent{0},
        http_refused{0}, files_sent{0};

    // A page's answer message (see follow_server.h), counted; false when it is none.
    bool take_answer(Client& c, const std::string& text) {
        const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
        if (!j.is_object() || j.size() != 1 || !j.contains("answer")) return false;
        const nlohmann::json& a = j["answer"];
        if (!a.is_object() || a.size() != 3 || !a.contains("page") || !a.contains("question") || !a.contains("choice"))
            return false;
        const nlohmann::json &page = a["page"], &q = a["question"], &ch = a["choice"];
        if (!page.is_string() || !q.is_number_integer() || !ch.is_number_integer()) return false;
        const std::string id = page.get<std::string>();
        const long long qi = q.get<long long>(), ci = ch.get<long long>();
        const size_t nq = config.choices.size();
        if (!valid_page_id(id) || qi < 0 || size_t(qi) >= nq || ci < 0 || ci >= config.choices[size_t(qi)]) return false;
        if (!c.page.empty() && c.page != id) return false; // one page per connection
        std::lock_guard<std::mutex> lock(mutex);
        auto it = answers.find(id);
        if (it == answers.end()) {
            if (answers.size() >= size_t(4 * config.max_clients)) return false;
            it = answers.emplace(id, std::vector<int>(nq, -1)).first;
        }
        int& mine = it->second[size_t(qi)];
        if (mine >= 0) --counts[size_t(qi)][size_t(mine)];
        mine = int(ci);
        ++counts[size_t(qi)][size_t(mine)];
        c.page = id;
        return true;
    }

    // The first question whose clear this page was not told of, or -1.
    int owed_clear(Client& c) {
        std::lock_guard<std::mutex> lock(mutex);
        for (size_t q = 0; q < clear_round.size(); ++q)
            if (c.seen_clear[q] != clear_round[q]) {
                c.seen_clear[q] = clear_round[q];
                return int(q);
            }
        return -1;
    }

    // At most the first 20 of these lines, then one in 1000: a page cannot flood stderr.
    void log(const char* fmt, ...) {
        ++logged;
        if (config.quiet || (logged > 20 && logged % 1000 != 0)) return;
        std::va_list ap;
        va_start(ap, fmt);
        std::fprintf(stderr, "attnviz: serve: ");
        std::vfprintf(stderr, fmt, ap);
        std::fprintf(stderr, "\n");
        va_end(ap);
    }

    // The real path of the file `uri` asks for, when it is a regular file inside the site
    // folder; "" otherwise. lws has URL-decoded the path and removed "/../" already; this
    // check does not rely on that, and catches symbolic links that lead out of the folder.
    std::string resolve(const char* uri) const {
        std::string u = uri ? uri : "";
        if (u.empty() || u[0] != '/' || u.size() > 1024) return "";
        if (const size_t q = u.find('?'); q != std::string::npos) u.resize(q);
        for (char ch : u)
            if (ch == '\\' || static_cast<unsigned char>(ch) < 0x20) return "";
        if (u.find("/..") != std::string::npos || u.find("%") != std::string::npos) return "";
        if (u.back() == '/') u += "index.html";
        const std::string path = site_real + u;
        char real[PATH_MAX];
        if (!::realpath(path.c_str(), real)) return "";
        const std::string r = real;
        if (r.compare(0, site_real.size() + 1, site_real + "/") != 0) return "";
        struct stat st {};
        if (::stat(r.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
        return r;
    }

    int http(lws* wsi, lws_callback_reasons reason, void* user, void* in, size_t len) {
        auto* req = static_cast<HttpRequest*>(user);
        switch (reason) {
        case LWS_CALLBACK_HTTP: {
            const char* uri = static_cast<const char*>(in);
            if (uri && std::strcmp(uri, "/follow.json") == 0) {
                unsigned char buf[LWS_PRE + 512];
                unsigned char *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf - 1;
                if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, "application/json", std::strlen(follow_json), &p,
                                                end) ||
                    lws_add_http_header_by_name(wsi, reinterpret_cast<const unsigned char*>("cache-control:"),
                                                reinterpret_cast<const unsigned char*>("no-store"), 8, &p, end) ||
                    lws_finalize_write_http_header(wsi, start, &p, end))
                    return 1;
                req->follow_json = 1;
                lws_callback_on_writable(wsi);
                return 0;
            }
            std::shared_ptr<const std::string> bytes;
            if (uri && std::strncmp(uri, "/follow/", 8) == 0) {
                std::lock_guard<std::mutex> lock(mutex);
                if (auto f = files.find(uri); f != files.end()) bytes = f->second;
            }
            if (bytes) {
                unsigned char buf[LWS_PRE + 512];
                unsigned char *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf - 1;
                if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, "application/octet-stream", bytes->size(), &p,
                                                end) ||
                    lws_add_http_header_by_name(wsi, reinterpret_cast<const unsigned char*>("cache-control:"),
                                                reinterpret_cast<const unsigned char*>("no-store"), 8, &p, end) ||
                    lws_finalize_write_http_header(wsi, start, &p, end))
                    return 1;
                file_sends[wsi] = FileSend{bytes, 0};
                req->file = 1;
                lws_callback_on_writable(wsi);
                return 0;
            }
            const std::string file = resolve(uri);
            if (file.empty()) {
                ++http_refused;
                log("refused %s: not a file of the site folder", uri ? uri : "(no path)");
                if (lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, nullptr)) return -1;
                return lws_http_transaction_completed(wsi) ? -1 : 0;
            }
            // x-attnviz-follow: the page knows it was served by the teacher's window (web_follow.h).
            static const char headers[] = "cache-control: no-cache\x0d\x0ax-attnviz-follow: attnviz-follow\x0d\x0a";
            const int n = lws_serve_http_file(wsi, file.c_str(), mime_of(file), headers, int(sizeof headers - 1));
            if (n < 0 || (n > 0 && lws_http_transaction_completed(wsi))) return -1;
            return 0;
        }
        case LWS_CALLBACK_HTTP_WRITEABLE: {
            if (req && req->file) {
                auto it = file_sends.find(wsi);
                if (it == file_sends.end()) return -1;
                FileSend& f = it->second;
                const size_t n = std::min(file_chunk, f.bytes->size() - f.sent);
                const bool last = f.sent + n == f.bytes->size();
                std::vector<unsigned char> buf(LWS_PRE + n);
                std::memcpy(buf.data() + LWS_PRE, f.bytes->data() + f.sent, n);
                if (lws_write(wsi, buf.data() + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != int(n))
                    return -1;
                f.sent += n;
                if (!last) {
                    lws_callback_on_writable(wsi);
                    return 0;
                }
                file_sends.erase(it);
                req->file = 0;
                ++files_sent;
                return lws_http_transaction_completed(wsi) ? -1 : 0;
            }
            if (!req || !req->follow_json) break;
            req->follow_json = 0;
            const size_t n = std::strlen(follow_json);
            std::vector<unsigned char> buf(LWS_PRE + n);
            std::memcpy(buf.data() + LWS_PRE, follow_json, n);
            if (lws_write(wsi, buf.data() + LWS_PRE, n, LWS_WRITE_HTTP_FINAL) != int(n)) return 1;
            return lws_http_transaction_completed(wsi) ? -1 : 0;
        }
        case LWS_CALLBACK_CLOSED_HTTP:
            file_sends.erase(wsi); // a page that left half way
            break;
        default:
            break;
        }
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }

    int ws(lws* wsi, lws_callback_reasons reason, void* in, size_t len) {
        switch (reason) {
        case LWS_CALLBACK_ESTABLISHED: {
            if (int(clients.size()) >= config.max_clients) {
                ++refused;
                log("refused a page: %d pages follow already (--max-clients)", config.max_clients);
                static const char why[] = "the class is full";
                lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char*)why, sizeof why - 1);
                return -1;
            }
            Client c;
            {
                std::lock_guard<std::mutex> lock(mutex);
                c.seen_clear = clear_round; // a new page has nothing to forget
            }
            clients[wsi] = std::move(c);
            n_clients = int(clients.size());
            ++connected;
            lws_callback_on_writable(wsi);
            return 0;
        }
        case LWS_CALLBACK_CLOSED:
            clients.erase(wsi);
            n_clients = int(clients.size());
            return 0;
        case LWS_CALLBACK_SERVER_WRITEABLE: {
            auto it = clients.find(wsi);
            if (it == clients.end()) return 0;
            if (const int q = owed_clear(it->second); q >= 0) {
                const std::string m = "{\"answers_cleared\":" + std::to_string(q) + "}";
                send_buf.resize(LWS_PRE + m.size());
                std::memcpy(send_buf.data() + LWS_PRE, m.data(), m.size());
                if (lws_write(wsi, send_buf.data() + LWS_PRE, m.size(), LWS_WRITE_TEXT) < int(m.size())) return -1;
                lws_callback_on_writable(wsi); // more clears, or the state, next
                return 0;
            }
            size_t n = 0;
            uint64_t g = 0;
            {
                std::lock_guard<std::mutex> lock(mutex);
                g = gen;
                if (g == 0 || it->second.sent_gen == g) return 0;
                n = latest.size();
                send_buf.resize(LWS_PRE + n);
                std::memcpy(send_buf.data() + LWS_PRE, latest.data(), n);
            }
            if (lws_write(wsi, send_buf.data() + LWS_PRE, n, LWS_WRITE_TEXT) < int(n)) return -1;
            it->second.sent_gen = g;
            ++sent;
            return 0;
        }
        case LWS_CALLBACK_RECEIVE: {
            auto it = clients.find(wsi);
            if (it == clients.end()) return 0;
            Client& c = it->second;
            if (!c.rx_over && c.rx.size() + len > config.max_message) {
                c.rx_over = true;
                c.rx.clear();
                c.rx.shrink_to_fit();
            }
            if (!c.rx_over) c.rx.append(static_cast<const char*>(in), len);
            if (!lws_is_final_fragment(wsi)) return 0;
            if (c.rx_over) {
                ++oversized;
                log("dropped a page's message over %zu bytes", config.max_message);
            } else if (lws_frame_is_binary(wsi) || !nlohmann::json::accept(c.rx)) {
                ++malformed;
                log("dropped a page's malformed message (%zu bytes, not JSON text)", c.rx.size());
            } else if (take_answer(c, c.rx)) {
                ++answered;
            } else {
                ++ignored; // well-formed, no answer; pages cannot change the state
                log("ignored a page's message: not an answer to one of the %zu questions", config.choices.size());
            }
            c.rx.clear();
            c.rx_over = false;
            return 0;
        }
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED: {
            uint64_t g = 0, cg = 0;
            {
                std::lock_guard<std::mutex> lock(mutex);
                g = gen;
                cg = clear_gen;
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
};

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

// Binds a plain socket to the address and port once, to name what is wrong in one sentence
// before libwebsockets tries (it only logs a line).
bool check_bind(const ServeConfig& c, std::string& error) {
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(c.port));
    if (::inet_pton(AF_INET, c.bind.c_str(), &a.sin_addr) != 1) {
        error = "--bind " + c.bind + " is not an IPv4 address; use one of this machine's addresses or 0.0.0.0";
        return false;
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        error = std::string("cannot open a socket (") + std::strerror(errno) + ")";
        return false;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const int r = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    const int e = errno;
    ::close(fd);
    if (r == 0) return true;
    const std::string port = std::to_string(c.port);
    if (e == EADDRINUSE)
        error = "port " + port + " is in use on " + c.bind + "; choose another with --port, such as " +
                std::to_string(c.port == 65535 ? 8642 : c.port + 1);
    else if (e == EADDRNOTAVAIL)
        error = "--bind " + c.bind + " is not an address of this machine; use one that ip -4 addr lists, or 0.0.0.0";
    else if (e == EACCES)
        error = "port " + port + " needs root; use a port from 1024 to 65535, such as 8642";
    else
        error = "cannot listen on " + c.bind + ":" + port + " (" + std::strerror(e) + "); choose another --port or --bind";
    return false;
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
    {
        std::lock_guard<std::mutex> lock(m.mutex);
        m.answers.clear();
        m.counts.assign(c.choices.size(), {});
        for (size_t q = 0; q < c.choices.size(); ++q) m.counts[q].assign(size_t(std::max(c.choices[q], 0)), 0);
        m.clear_round.assign(c.choices.size(), 0);
    }
    m.protocols[0] = {"http", http_callback, sizeof(HttpRequest), 0, 0, nullptr, 0};
    m.protocols[1] = {follow_protocol, ws_callback, 0, 4096, 0, nullptr, 0};
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
    m.context = lws_create_context(&info);
    if (!m.context) {
        error = "cannot listen on " + c.bind + ":" + std::to_string(c.port) + "; choose another --port or --bind";
        return false;
    }
    m.thread = std::thread([&m] {
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
        if (path.rfind("/follow/", 0) == 0 && path.size() > 8 && m.files.size() < 4)
            m.files[path] = std::make_shared<const std::string>(std::move(bytes));
}

std::vector<std::vector<int>> FollowServer::answer_counts() const {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    return impl_->counts;
}

void FollowServer::clear_answers(int q) {
    Impl& m = *impl_;
    {
        std::lock_guard<std::mutex> lock(m.mutex);
        const size_t nq = m.counts.size();
        if (q < -1 || q >= int(nq)) return;
        for (size_t i = 0; i < nq; ++i) {
            if (q != -1 && int(i) != q) continue;
            for (int& n : m.counts[i]) n = 0;
            for (auto& [id, mine] : m.answers) mine[i] = -1;
            ++m.clear_round[i];
        }
        ++m.clear_gen;
    }
    if (m.context) lws_cancel_service(m.context);
}

} // namespace attnviz
