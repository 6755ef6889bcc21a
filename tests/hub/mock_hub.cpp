// mock_hub.cpp: the tests' Hugging Face Hub on 127.0.0.1; see mock_hub.h.
#include "mock_hub.h"
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace attnviz_test {

namespace fs = std::filesystem;

namespace {

std::string hex_digest(const EVP_MD* md, const std::string& prefix, const std::string& path) {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, md, nullptr);
    EVP_DigestUpdate(ctx, prefix.data(), prefix.size());
    std::ifstream in(path, std::ios::binary);
    std::vector<char> buf(1 << 20);
    while (in) {
        in.read(buf.data(), std::streamsize(buf.size()));
        if (in.gcount() > 0) EVP_DigestUpdate(ctx, buf.data(), size_t(in.gcount()));
    }
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx, out, &n);
    EVP_MD_CTX_free(ctx);
    std::string s;
    char two[3];
    for (unsigned int i = 0; i < n; ++i) {
        std::snprintf(two, sizeof two, "%02x", out[i]);
        s += two;
    }
    return s;
}

std::string sha1_of_text(const std::string& text) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_Digest(text.data(), text.size(), out, &n, EVP_sha1(), nullptr);
    std::string s;
    char two[3];
    for (unsigned int i = 0; i < n; ++i) {
        std::snprintf(two, sizeof two, "%02x", out[i]);
        s += two;
    }
    return s;
}

bool send_all(int fd, const char* p, size_t n) {
    while (n > 0) {
        const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0) return false;
        p += k;
        n -= size_t(k);
    }
    return true;
}

bool send_text(int fd, const std::string& s) { return send_all(fd, s.data(), s.size()); }

std::string status_text(int status) {
    switch (status) {
    case 200: return "200 OK";
    case 206: return "206 Partial Content";
    case 302: return "302 Found";
    case 307: return "307 Temporary Redirect";
    case 401: return "401 Unauthorized";
    case 404: return "404 Not Found";
    case 416: return "416 Range Not Satisfiable";
    default: return std::to_string(status) + " Error";
    }
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

int listen_on_loopback(int& port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        ::close(fd);
        return -1;
    }
    port = ntohs(addr.sin_port);
    return fd;
}

} // namespace

struct MockHub::Request {
    std::string method, target, body;
    std::map<std::string, std::string> headers; // names lower-cased
    std::string header(const std::string& name) const {
        auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
};

MockHub::~MockHub() { stop(); }

std::string MockHub::commit(const std::string& id) const { return sha1_of_text("mock-hub-commit " + id); }

bool MockHub::add_repo(const std::string& id, const std::string& dir, std::string& error) {
    Repo repo{id, commit(id), {}};
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (!entry.is_regular_file(ec)) continue; // follows symlinks
        File f;
        f.name = entry.path().filename().string();
        f.path = fs::canonical(entry.path(), ec).string();
        f.size = int64_t(entry.file_size(ec));
        f.lfs = entry.path().extension() == ".safetensors";
        if (f.lfs) f.sha256 = hex_digest(EVP_sha256(), "", f.path);
        else f.git_sha1 = hex_digest(EVP_sha1(), "blob " + std::to_string(f.size) + std::string(1, '\0'), f.path);
        repo.files.push_back(f);
    }
    if (ec || repo.files.empty()) {
        error = "mock_hub: no files in " + dir;
        return false;
    }
    std::sort(repo.files.begin(), repo.files.end(), [](const File& a, const File& b) { return a.name < b.name; });
    repos_[id] = repo;
    return true;
}

void MockHub::add_alias(const std::string& old_id, const std::string& new_id) { aliases_[old_id] = new_id; }

bool MockHub::start(std::string& error) {
    hub_fd_ = listen_on_loopback(hub_port_);
    storage_fd_ = listen_on_loopback(storage_port_);
    if (hub_fd_ < 0 || storage_fd_ < 0 || pipe(wake_) != 0) {
        error = std::string("mock_hub: cannot listen on 127.0.0.1 (") + std::strerror(errno) + ")";
        return false;
    }
    acceptor_ = std::thread([this] { accept_loop(); });
    return true;
}

void MockHub::stop() {
    if (!acceptor_.joinable()) return;
    stopping_ = true;
    const char byte = 0;
    if (::write(wake_[1], &byte, 1) < 0) {}
    acceptor_.join();
    std::vector<std::thread> workers;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        workers.swap(workers_);
    }
    for (std::thread& t : workers) t.join();
    for (int fd : {hub_fd_, storage_fd_, wake_[0], wake_[1]})
        if (fd >= 0) ::close(fd);
}

void MockHub::accept_loop() {
    while (!stopping_) {
        pollfd fds[3] = {{hub_fd_, POLLIN, 0}, {storage_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
        if (poll(fds, 3, 1000) <= 0) continue;
        for (int i = 0; i < 2; ++i) {
            if (!(fds[i].revents & POLLIN)) continue;
            const int fd = ::accept4(fds[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) continue;
            timeval tv{10, 0}; // a silent client cannot hold a worker for long
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
            std::lock_guard<std::mutex> lock(mutex_);
            workers_.emplace_back([this, fd, i] { serve_connection(fd, i == 1); });
        }
    }
}

void MockHub::serve_connection(int fd, bool storage) {
    // One request per connection ("Connection: close"): the head, then the answer.
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536 && !stopping_) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        head.append(buf, size_t(n));
    }
    Request req;
    const size_t line_end = head.find("\r\n");
    if (line_end != std::string::npos) {
        const std::string line = head.substr(0, line_end);
        const size_t a = line.find(' '), b = line.rfind(' ');
        if (a != std::string::npos && b > a) {
            req.method = line.substr(0, a);
            req.target = line.substr(a + 1, b - a - 1);
        }
        size_t pos = line_end + 2;
        while (pos < head.size()) {
            const size_t end = head.find("\r\n", pos);
            if (end == std::string::npos || end == pos) break;
            const std::string h = head.substr(pos, end - pos);
            const size_t colon = h.find(':');
            if (colon != std::string::npos) {
                std::string name = h.substr(0, colon), value = h.substr(colon + 1);
                std::transform(name.begin(), name.end(), name.begin(), ::tolower);
                value.erase(0, value.find_first_not_of(' '));
                req.headers[name] = value;
            }
            pos = end + 2;
        }
        // A body (paths-info's JSON) of at most 64 KiB: what came with the head, then the rest.
        const size_t body_at = head.find("\r\n\r\n");
        const int64_t want = std::min<int64_t>(std::atoll(req.header("content-length").c_str()), 65536);
        if (body_at != std::string::npos && want > 0) {
            req.body = head.substr(body_at + 4);
            while (int64_t(req.body.size()) < want && !stopping_) {
                const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
                if (n <= 0) break;
                req.body.append(buf, size_t(n));
            }
        }
    }
    if (!req.method.empty()) {
        ++requests_;
        answer(fd, req, storage);
    }
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
}

void MockHub::note(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back(line);
}

std::vector<std::string> MockHub::log() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return log_;
}

void MockHub::cut_after_once(const std::string& file, int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    cut_[file] = bytes;
}

void MockHub::corrupt(const std::string& file, bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    corrupt_[file] = on;
}

const MockHub::Repo* MockHub::find_repo(const std::string& id) const {
    auto it = repos_.find(id);
    return it == repos_.end() ? nullptr : &it->second;
}

const MockHub::File* MockHub::find_lfs(const std::string& sha) const {
    for (const auto& [id, repo] : repos_)
        for (const File& f : repo.files)
            if (f.lfs && f.sha256 == sha) return &f;
    return nullptr;
}

static void reply(int fd, int status, const std::string& headers, const std::string& body, bool head_only) {
    send_text(fd, "HTTP/1.1 " + status_text(status) + "\r\nConnection: close\r\n" + headers +
                      "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + (head_only ? "" : body));
}

void MockHub::answer(int fd, const Request& req, bool storage) {
    const std::string path = req.target.substr(0, req.target.find('?'));
    if (storage) {
        if (!req.header("authorization").empty()) storage_auth_ = true;
        const File* f = starts_with(path, "/lfs/") ? find_lfs(path.substr(5)) : nullptr;
        note(req.method + " storage " + path);
        if (!f) return reply(fd, 404, "", "no such object", req.method == "HEAD");
        return send_file(fd, req, *f, "");
    }
    if (!token_.empty() && req.header("authorization") != "Bearer " + token_) {
        note(req.method + " " + path + " 401");
        return reply(fd, 401, "X-Error-Message: Invalid credentials in Authorization header\r\n", "unauthorized",
                     req.method == "HEAD");
    }
    if (path == "/__mock/stats") // for tests in other languages: what mock_hub sent so far
        return reply(fd, 200, "Content-Type: application/json\r\n",
                     nlohmann::json{{"body_bytes", body_bytes_.load()}, {"gets", gets_.load()}, {"heads", heads_.load()}}.dump(),
                     req.method == "HEAD");
    if (starts_with(path, "/api/")) return answer_api(fd, req, path);
    answer_resolve(fd, req, path);
}

void MockHub::answer_resolve(int fd, const Request& req, const std::string& path) {
    const bool head_only = req.method == "HEAD";
    if (head_only) ++heads_;
    std::string repo_id, rev, name;
    if (starts_with(path, "/api/") == false) {
        const size_t r = path.find("/resolve/");
        if (r == std::string::npos) return reply(fd, 404, "", "not found", head_only);
        repo_id = path.substr(1, r - 1);
        const std::string rest = path.substr(r + 9);
        const size_t slash = rest.find('/');
        rev = rest.substr(0, slash);
        name = slash == std::string::npos ? "" : rest.substr(slash + 1);
    }
    if (auto alias = aliases_.find(repo_id); alias != aliases_.end()) {
        note(req.method + " " + path + " 307");
        return reply(fd, 307, "Location: /" + alias->second + "/resolve/" + rev + "/" + name + "\r\n", "", head_only);
    }
    const Repo* repo = find_repo(repo_id);
    if (!repo) {
        note(req.method + " " + path + " 404");
        return reply(fd, 404, "X-Error-Code: RepoNotFound\r\n", "Repository not found", head_only);
    }
    if (rev != "main" && rev != repo->commit) {
        note(req.method + " " + path + " 404");
        return reply(fd, 404, "X-Error-Code: RevisionNotFound\r\n", "Revision not found", head_only);
    }
    const auto f = std::find_if(repo->files.begin(), repo->files.end(), [&](const File& x) { return x.name == name; });
    if (f == repo->files.end()) {
        note(req.method + " " + path + " 404");
        return reply(fd, 404, "X-Error-Code: EntryNotFound\r\nX-Repo-Commit: " + repo->commit + "\r\n", "Entry not found",
                     head_only);
    }
    const std::string commit_header = "X-Repo-Commit: " + repo->commit + "\r\n";
    if (f->lfs) {
        note(req.method + " " + path + " 302");
        return reply(fd, 302,
                     "Location: http://127.0.0.1:" + std::to_string(storage_port_) + "/lfs/" + f->sha256 + "\r\n" +
                         commit_header + "X-Linked-Etag: \"" + f->sha256 + "\"\r\nX-Linked-Size: " +
                         std::to_string(f->size) + "\r\n",
                     "Found. Redirecting", head_only);
    }
    note(req.method + " " + path + " 307");
    reply(fd, 307, "Location: /api/resolve-cache/models/" + repo->id + "/" + repo->commit + "/" + name + "\r\n" + commit_header,
          "", head_only);
}

void MockHub::answer_api(int fd, const Request& req, const std::string& path) {
    const bool head_only = req.method == "HEAD";
    // /api/resolve-cache/models/{repo}/{commit}/{file}: a small file's bytes.
    if (starts_with(path, "/api/resolve-cache/models/")) {
        const std::string rest = path.substr(26);
        for (const auto& [id, repo] : repos_) {
            const std::string prefix = id + "/" + repo.commit + "/";
            if (!starts_with(rest, prefix)) continue;
            const std::string name = rest.substr(prefix.size());
            for (const File& f : repo.files)
                if (f.name == name && !f.lfs) {
                    note(req.method + " " + path + " 200");
                    if (head_only) ++heads_;
                    return send_file(fd, req, f, "X-Repo-Commit: " + repo.commit + "\r\n");
                }
        }
        return reply(fd, 404, "X-Error-Code: EntryNotFound\r\n", "Entry not found", head_only);
    }
    // /api/models/{repo}/revision/{rev}, /api/models/{repo}/tree/{rev} and (POST, a JSON body
    // {"paths": [...]}) /api/models/{repo}/paths-info/{rev}, as @huggingface/hub reads them.
    note(req.method + " " + path);
    for (const char* kind : {"/revision/", "/tree/", "/paths-info/"}) {
        const size_t k = path.find(kind);
        if (!starts_with(path, "/api/models/") || k == std::string::npos) continue;
        std::string id = path.substr(12, k - 12);
        if (auto alias = aliases_.find(id); alias != aliases_.end()) id = alias->second;
        const Repo* repo = find_repo(id);
        if (!repo) return reply(fd, 404, "X-Error-Code: RepoNotFound\r\n", "{\"error\":\"Repository not found\"}", head_only);
        nlohmann::json out;
        if (std::string(kind) == "/revision/") {
            out = {{"id", repo->id}, {"modelId", repo->id}, {"sha", repo->commit}, {"siblings", nlohmann::json::array()}};
            for (const File& f : repo->files) out["siblings"].push_back({{"rfilename", f.name}});
        } else {
            const bool paths_info = std::string(kind) == "/paths-info/";
            const nlohmann::json asked = paths_info ? nlohmann::json::parse(req.body, nullptr, false) : nlohmann::json();
            if (paths_info && !(asked.is_object() && asked.contains("paths") && asked["paths"].is_array()))
                return reply(fd, 400, "", "{\"error\":\"paths-info needs a JSON body with paths\"}", head_only);
            out = nlohmann::json::array();
            for (const File& f : repo->files) {
                if (paths_info && std::find(asked["paths"].begin(), asked["paths"].end(), f.name) == asked["paths"].end())
                    continue;
                nlohmann::json e = {{"type", "file"}, {"path", f.name}, {"size", f.size},
                                    {"oid", f.lfs ? sha1_of_text(f.sha256) : f.git_sha1}};
                if (f.lfs) e["lfs"] = {{"oid", f.sha256}, {"size", f.size}, {"pointerSize", 134}};
                if (paths_info)
                    e["lastCommit"] = {{"id", repo->commit}, {"title", "mock"}, {"date", "2026-01-01T00:00:00.000Z"}};
                out.push_back(e);
            }
        }
        return reply(fd, 200, "Content-Type: application/json\r\n", out.dump(), head_only);
    }
    reply(fd, 404, "", "not found", head_only);
}

void MockHub::send_file(int fd, const Request& req, const File& f, const std::string& extra_headers) {
    const bool head_only = req.method == "HEAD";
    int64_t from = 0, last = f.size - 1; // bytes from..last are sent
    const std::string range = req.header("range");
    if (!head_only) {
        ++gets_;
        if (!range.empty()) ++range_gets_;
    }
    if (starts_with(range, "bytes=")) {
        from = std::atoll(range.c_str() + 6);
        if (from >= f.size) return reply(fd, 416, "Content-Range: bytes */" + std::to_string(f.size) + "\r\n", "", head_only);
        const size_t dash = range.find('-');
        if (dash != std::string::npos && dash + 1 < range.size()) // bytes=A-B (the JS client's probe is 0-0)
            last = std::clamp<int64_t>(std::atoll(range.c_str() + dash + 1), from, f.size - 1);
    }
    const bool partial = !range.empty() && (from > 0 || last < f.size - 1);
    std::string headers = "HTTP/1.1 " + status_text(partial ? 206 : 200) + "\r\nConnection: close\r\n" + extra_headers +
                          "Content-Length: " + std::to_string(last + 1 - from) + "\r\n";
    if (!f.lfs) headers += "ETag: \"" + f.git_sha1 + "\"\r\n";
    else headers += "ETag: \"" + f.sha256 + "\"\r\n";
    if (partial) headers += "Content-Range: bytes " + std::to_string(from) + "-" + std::to_string(last) + "/" +
                             std::to_string(f.size) + "\r\n";
    headers += "Accept-Ranges: bytes\r\n\r\n";
    if (!send_text(fd, headers) || head_only) return;
    int64_t cut = -1;
    bool bad = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = cut_.find(f.name); it != cut_.end()) {
            cut = it->second;
            cut_.erase(it);
        }
        bad = corrupt_.count(f.name) && corrupt_[f.name];
    }
    std::ifstream in(f.path, std::ios::binary);
    in.seekg(from);
    std::vector<char> buf(size_t(slow_ ? 16 * 1024 : 256 * 1024));
    int64_t sent = 0, left = last + 1 - from;
    while (left > 0 && !stopping_) {
        int64_t n = std::min<int64_t>(left, int64_t(buf.size()));
        if (cut >= 0) n = std::min<int64_t>(n, cut - sent);
        if (n <= 0) return; // the cut: close with bytes still announced
        in.read(buf.data(), std::streamsize(n));
        if (bad)
            for (int64_t i = 0; i < n; ++i) buf[size_t(i)] = char(buf[size_t(i)] ^ 0x5a);
        if (!send_all(fd, buf.data(), size_t(n))) return;
        body_bytes_ += n;
        sent += n;
        left -= n;
        if (slow_) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

} // namespace attnviz_test
