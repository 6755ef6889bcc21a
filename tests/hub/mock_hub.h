// mock_hub.h: a Hugging Face Hub on 127.0.0.1 for the tests (no network). Two listeners on
// ports the system picks: the Hub itself and a separate "storage host", as the real Hub
// sends large files to a CDN on another host.
//
//   HEAD/GET /{repo}/resolve/{rev}/{file}
//     *.safetensors (LFS)  302, absolute Location http://127.0.0.1:{storage}/lfs/{sha256},
//                          X-Repo-Commit, X-Linked-Etag "sha256", X-Linked-Size
//     other files          307, relative Location /api/resolve-cache/models/{repo}/{commit}/{file},
//                          which answers 200 with X-Repo-Commit, ETag "git blob sha1", Content-Length
//     an alias (OLD=NEW)   307, relative Location /{NEW}/resolve/{rev}/{file}
//     errors               404 + X-Error-Code RepoNotFound / RevisionNotFound / EntryNotFound;
//                          401 without "Authorization: Bearer T" when a token is required
//   GET /api/models/{repo}/revision/{rev}  {"id", "sha", "siblings": [{"rfilename"}]}
//   GET /api/models/{repo}/tree/{rev}      [{"type": "file", "path", "size", "oid", "lfs"?}]
//   POST /api/models/{repo}/paths-info/{rev}  {"paths": [...]}: those entries, with lastCommit
//   Range: bytes=N- and bytes=N-M are answered 206 on the storage host and on resolve-cache.
//   GET /__mock/stats                      {"body_bytes", "gets", "heads"} (tests in node)
// A repository's commit is fixed: the SHA-1 of its id in hex. {rev} may be main or that commit.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace attnviz_test {

class MockHub {
public:
    MockHub() = default;
    ~MockHub();
    MockHub(const MockHub&) = delete;
    MockHub& operator=(const MockHub&) = delete;

    // Before start(): a repository from the files of `dir` (symlinks followed, no subfolders).
    bool add_repo(const std::string& id, const std::string& dir, std::string& error);
    void add_alias(const std::string& old_id, const std::string& new_id);
    void require_token(const std::string& token) { token_ = token; }

    bool start(std::string& error); // binds both listeners on 127.0.0.1, port 0
    void stop();
    int port() const { return hub_port_; }
    int storage_port() const { return storage_port_; }
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(hub_port_); }
    std::string commit(const std::string& id) const;

    // Fault switches (thread-safe, any time).
    void cut_after_once(const std::string& file, int64_t bytes); // the next GET of `file` stops after `bytes`
    void corrupt(const std::string& file, bool on);              // right size, wrong bytes
    void set_slow(bool on) { slow_ = on; }                       // 16 KiB chunks, 100 ms apart (cancel and lock tests)

    // What the mock saw.
    int heads() const { return heads_; }
    int gets() const { return gets_; }              // GETs of file bytes (resolve-cache and storage)
    int range_gets() const { return range_gets_; }  // of which with a Range header
    int requests() const { return requests_; }      // every request on both listeners
    bool storage_saw_authorization() const { return storage_auth_; }
    std::vector<std::string> log() const;           // "HEAD /gpt2/resolve/main/config.json 307", ...

private:
    struct File {
        std::string name, path, sha256, git_sha1;
        int64_t size = 0;
        bool lfs = false;
    };
    struct Repo {
        std::string id, commit;
        std::vector<File> files;
    };
    struct Request;

    void accept_loop();
    void serve_connection(int fd, bool storage);
    void answer(int fd, const Request& req, bool storage);
    void answer_resolve(int fd, const Request& req, const std::string& path);
    void answer_api(int fd, const Request& req, const std::string& path);
    void send_file(int fd, const Request& req, const File& f, const std::string& extra_headers);
    const Repo* find_repo(const std::string& id) const;
    const File* find_lfs(const std::string& sha) const;
    void note(const std::string& line);

    std::map<std::string, Repo> repos_;
    std::map<std::string, std::string> aliases_;
    std::string token_;
    int hub_fd_ = -1, storage_fd_ = -1, hub_port_ = 0, storage_port_ = 0;
    int wake_[2] = {-1, -1};
    std::thread acceptor_;
    std::vector<std::thread> workers_;
    std::atomic<bool> stopping_{false};
    std::atomic<bool> slow_{false};
    std::atomic<int> heads_{0}, gets_{0}, range_gets_{0}, requests_{0};
    std::atomic<int64_t> body_bytes_{0}; // file bytes sent, both listeners
    std::atomic<bool> storage_auth_{false};
    mutable std::mutex mutex_; // cut_, corrupt_, log_, workers_
    std::map<std::string, int64_t> cut_;
    std::map<std::string, bool> corrupt_;
    std::vector<std::string> log_;
};

} // namespace attnviz_test
