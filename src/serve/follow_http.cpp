// follow_http.cpp: FollowServer's HTTP side (follow_server.h): the site's files, the
// published ones, /follow.json, and the door every request and upgrade passes (Host, Origin,
// path, subprotocol, class code).
#include "follow_protocol.h"
#include "follow_server_impl.h"
#include "serve_address.h"
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace attnviz {

namespace {

namespace fp = follow_protocol;

// /follow.json's body: {"follow":"/follow","protocol":"attnviz-follow"}.
std::string follow_json() {
    return std::string("{\"") + fp::info_follow + "\":\"" + fp::socket_path + "\",\"" + fp::info_protocol + "\":\"" +
           fp::subprotocol + "\"}";
}

// The page's own scripts and WebAssembly ('wasm-unsafe-eval' compiles it), its own
// WebSocket and fetches ('self' covers ws:// to the same host and port), its inline styles;
// nothing from elsewhere, no frames, no plugins.
constexpr const char* csp =
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; img-src 'self' data:; "
    "style-src 'self' 'unsafe-inline'; font-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'";

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

// The HTTP side's per-request memory (zeroed by lws).
struct HttpRequest {
    int follow_json; // the body of /follow.json is still owed
    int file;        // the published file is being sent (Impl::file_sends)
};
constexpr size_t file_chunk = 16384;

bool add_header(lws* wsi, const char* name, const std::string& value, unsigned char** p, unsigned char* end) {
    return lws_add_http_header_by_name(wsi, reinterpret_cast<const unsigned char*>(name),
                                       reinterpret_cast<const unsigned char*>(value.data()), int(value.size()), p,
                                       end) == 0;
}

// The headers of what the window serves from memory: never cached, never sniffed.
bool memory_headers(lws* wsi, const char* mime, size_t size, unsigned char* start, unsigned char** p,
                    unsigned char* end) {
    return lws_add_http_common_headers(wsi, HTTP_STATUS_OK, mime, size, p, end) == 0 &&
           add_header(wsi, "cache-control:", "no-store", p, end) &&
           add_header(wsi, "x-content-type-options:", "nosniff", p, end) &&
           lws_finalize_write_http_header(wsi, start, p, end) == 0;
}

// An HTTP error and the end of the request (lws closes the connection when it must).
int refuse(lws* wsi, unsigned int status) {
    if (lws_return_http_status(wsi, status, nullptr)) return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

} // namespace

std::string header_of(lws* wsi, lws_token_indexes h) {
    const int n = lws_hdr_total_length(wsi, h);
    if (n <= 0 || n > 256) return "";
    char buf[260];
    if (lws_hdr_copy(wsi, buf, int(sizeof buf), h) < 0) return "";
    return buf;
}

void FollowServer::Impl::refresh_hosts() {
    own_hosts = {"127.0.0.1", "localhost"};
    if (config.bind != "0.0.0.0") own_hosts.push_back(config.bind);
    for (const std::string& a : lan_addresses()) own_hosts.push_back(a);
    char name[HOST_NAME_MAX + 1] = {};
    if (::gethostname(name, sizeof name - 1) == 0 && name[0]) {
        own_hosts.emplace_back(name);
        own_hosts.push_back(std::string(name) + ".local"); // its mDNS name
    }
    for (const std::string& h : config.allow_hosts) own_hosts.push_back(h);
    hosts_at = ServeClock::now();
}

// The request's Host is this server's: else 403 and one log line. The machine's addresses are
// listed again (at most once a second) before a refusal: a laptop may have changed networks.
bool FollowServer::Impl::host_ok(lws* wsi, std::string& host) {
    host = header_of(wsi, WSI_TOKEN_HOST);
    if (host_allowed(host, own_hosts)) return true;
    if (ServeClock::now() - hosts_at > std::chrono::seconds(1)) {
        refresh_hosts();
        if (host_allowed(host, own_hosts)) return true;
    }
    ++refused_host;
    log("host", "refused a request for Host " + log_escaped(host, 80) +
                    ": not this machine's address or name (--allow-host NAME adds one)");
    return false;
}

bool FollowServer::Impl::code_ok(lws* wsi) {
    std::string want;
    {
        std::lock_guard<std::mutex> lock(mutex);
        want = code;
    }
    if (want.empty()) return true;
    char buf[64] = {};
    const std::string name = std::string(fp::code_param) + "=";
    const char* given = lws_get_urlarg_by_name(wsi, name.c_str(), buf, int(sizeof buf));
    return given && normalized_code(given) == want;
}

// An upgrade: to /follow, with the subprotocol, from a page of this server (Origin = Host).
// Returns what LWS_CALLBACK_HTTP_CONFIRM_UPGRADE wants: 0 to go on, 1 when refused here.
int FollowServer::Impl::confirm_upgrade(lws* wsi) {
    std::string host;
    if (!host_ok(wsi, host)) return refuse(wsi, HTTP_STATUS_FORBIDDEN) < 0 ? -1 : 1;
    const std::string origin = header_of(wsi, WSI_TOKEN_ORIGIN);
    if (!origin_matches(origin, host)) {
        ++refused_host;
        log("origin", "refused a connection from Origin " + log_escaped(origin.empty() ? "(none)" : origin, 80) +
                          ": not a page of this server");
        return refuse(wsi, HTTP_STATUS_FORBIDDEN) < 0 ? -1 : 1;
    }
    const std::string path = header_of(wsi, WSI_TOKEN_GET_URI), protocol = header_of(wsi, WSI_TOKEN_PROTOCOL);
    bool named = false; // the subprotocol among those the client offers
    for (size_t at = 0; at <= protocol.size();) {
        size_t comma = protocol.find(',', at);
        if (comma == std::string::npos) comma = protocol.size();
        std::string p = protocol.substr(at, comma - at);
        p.erase(0, p.find_first_not_of(' '));
        p.erase(p.find_last_not_of(' ') + 1);
        named = named || p == fp::subprotocol;
        at = comma + 1;
    }
    if (path != fp::socket_path || !named) {
        ++refused_upgrade;
        log("upgrade", "refused a WebSocket to " + log_escaped(path, 80) + " with subprotocol " +
                           log_escaped(protocol.empty() ? "(none)" : protocol, 80) +
                           ": pages follow at " + fp::socket_path + " with " + fp::subprotocol);
        return refuse(wsi, path != fp::socket_path ? HTTP_STATUS_NOT_FOUND : HTTP_STATUS_BAD_REQUEST) < 0 ? -1 : 1;
    }
    return 0;
}

// The real path of the file `uri` asks for, when it is a regular file inside the site
// folder; "" otherwise. lws has URL-decoded the path and removed "/../" already; this
// check does not rely on that, and catches symbolic links that lead out of the folder.
std::string FollowServer::Impl::resolve(const char* uri) const {
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

int FollowServer::Impl::http(lws* wsi, lws_callback_reasons reason, void* user, void* in, size_t len) {
    auto* req = static_cast<HttpRequest*>(user);
    switch (reason) {
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
        return confirm_upgrade(wsi);
    case LWS_CALLBACK_HTTP: {
        const char* uri = static_cast<const char*>(in);
        std::string host;
        if (!host_ok(wsi, host)) return refuse(wsi, HTTP_STATUS_FORBIDDEN);
        unsigned char buf[LWS_PRE + 1024];
        unsigned char *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf - 1;
        if (uri && std::strcmp(uri, fp::info_path) == 0) {
            if (!memory_headers(wsi, "application/json", follow_json().size(), start, &p, end)) return 1;
            req->follow_json = 1;
            lws_callback_on_writable(wsi);
            return 0;
        }
        std::shared_ptr<const std::string> bytes;
        if (uri && std::strncmp(uri, fp::files_prefix, std::strlen(fp::files_prefix)) == 0) {
            if (!code_ok(wsi)) {
                ++refused_code;
                log("code", "refused a file of the window's: no class code, or a wrong one");
                return refuse(wsi, HTTP_STATUS_FORBIDDEN);
            }
            std::lock_guard<std::mutex> lock(mutex);
            if (auto f = files.find(uri); f != files.end()) bytes = f->second;
        }
        if (bytes) {
            if (!memory_headers(wsi, "application/octet-stream", bytes->size(), start, &p, end)) return 1;
            file_sends[wsi] = FileSend{bytes, 0};
            req->file = 1;
            lws_callback_on_writable(wsi);
            return 0;
        }
        const std::string file = resolve(uri);
        if (file.empty()) {
            ++http_refused;
            log("path", "refused " + log_escaped(uri ? uri : "(no path)") + ": not a file of the site folder");
            return refuse(wsi, HTTP_STATUS_NOT_FOUND);
        }
        // x-attnviz-follow: the page knows it was served by the teacher's window (web_follow.h).
        // The page (index.html) is asked again each time; its scripts and WebAssembly are kept
        // an hour (60 laptops would otherwise fetch megabytes each on every reload).
        const bool html = file.size() > 5 && file.compare(file.size() - 5, 5, ".html") == 0;
        const std::string headers = std::string("cache-control: ") + (html ? "no-cache" : "max-age=3600") +
                                    "\x0d\x0a" + fp::mark_header + ": " + fp::subprotocol + "\x0d\x0a"
                                    "x-content-type-options: nosniff\x0d\x0a"
                                    "referrer-policy: no-referrer\x0d\x0a"
                                    "content-security-policy: " + csp + "\x0d\x0a";
        const int n = lws_serve_http_file(wsi, file.c_str(), mime_of(file), headers.c_str(), int(headers.size()));
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
            std::vector<unsigned char> out(LWS_PRE + n);
            std::memcpy(out.data() + LWS_PRE, f.bytes->data() + f.sent, n);
            if (lws_write(wsi, out.data() + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != int(n))
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
        const std::string body = follow_json();
        const size_t n = body.size();
        std::vector<unsigned char> out(LWS_PRE + n);
        std::memcpy(out.data() + LWS_PRE, body.data(), n);
        if (lws_write(wsi, out.data() + LWS_PRE, n, LWS_WRITE_HTTP_FINAL) != int(n)) return 1;
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

size_t http_request_size() { return sizeof(HttpRequest); }

} // namespace attnviz
