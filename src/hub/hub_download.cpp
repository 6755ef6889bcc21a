// hub_download.cpp: hub_get, the cache filled as huggingface_hub fills it; see hub_download.h.
//
// Order: a HEAD of every file (commit, etag, size: the whole total is known before a byte
// comes), then config.json (refused unless model_type is gpt2, before the large file), then
// the others. Each blob is fetched into blobs/<etag>.incomplete under a lock
// (.locks/models--ORG--NAME/<etag>.lock, the file huggingface_hub locks too), hashed while it
// arrives, checked, renamed to blobs/<etag>; only then does snapshots/<commit>/<file> point
// at it, and refs/<revision> is written last.
#include "hub_download.h"
#include "hub_cache.h"
#include "hub_http.h"
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace attnviz {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

HubGetOptions hub_options_from_env(const std::string& repo, const std::string& revision) {
    HubGetOptions o;
    o.repo = repo;
    o.revision = revision.empty() ? "main" : revision;
    const char* endpoint = std::getenv("HF_ENDPOINT");
    o.endpoint = endpoint && *endpoint ? endpoint : "https://huggingface.co";
    while (!o.endpoint.empty() && o.endpoint.back() == '/') o.endpoint.pop_back();
    if (const char* t = std::getenv("HF_TOKEN"); t && *t) o.token = std::string(t);
    if (const char* off = std::getenv("HF_HUB_OFFLINE"); off) {
        const std::string v = off;
        o.offline = v == "1" || v == "ON" || v == "on" || v == "YES" || v == "yes" || v == "true" || v == "TRUE";
    }
    o.cache_dir = hub_cache_dir();
    return o;
}

namespace {

// A lock file held with flock for the lifetime of the object (released on close).
class FileLock {
public:
    ~FileLock() {
        if (fd_ >= 0) close(fd_);
    }
    // Waits for the lock, checking `cancel` every 50 ms.
    bool acquire(const fs::path& path, const std::atomic<bool>* cancel, std::string& error) {
        std::error_code ec;
        fs::create_directories(path.parent_path(), ec);
        fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) {
            error = "cannot create the lock file " + path.string() + " (" + std::strerror(errno) + ")";
            return false;
        }
        while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK && errno != EINTR) {
                error = "cannot lock " + path.string() + " (" + std::strerror(errno) + ")";
                return false;
            }
            if (cancel && cancel->load()) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return true;
    }

private:
    int fd_ = -1;
};

struct Digest {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    Digest() { EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr); }
    ~Digest() { EVP_MD_CTX_free(ctx); }
    Digest(const Digest&) = delete;
    Digest& operator=(const Digest&) = delete;
    void reset() { EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr); }
    void update(const char* p, size_t n) { EVP_DigestUpdate(ctx, p, n); }
    std::string hex() {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int n = 0;
        EVP_DigestFinal_ex(ctx, md, &n);
        static const char* digits = "0123456789abcdef";
        std::string s;
        for (unsigned int i = 0; i < n; ++i) {
            s += digits[md[i] >> 4];
            s += digits[md[i] & 15];
        }
        return s;
    }
};

// Progress over the whole get: bytes and a rate over the last few seconds.
struct Meter {
    HubProgress p;
    const std::function<void(const HubProgress&)>* callback = nullptr;
    std::deque<std::pair<Clock::time_point, int64_t>> window; // (time, all_done)
    Clock::time_point last_call{};
    int64_t base_done = 0; // all_done before this file

    void report(bool force) {
        const Clock::time_point now = Clock::now();
        window.emplace_back(now, p.all_done);
        while (window.size() > 2 && now - window.front().first > std::chrono::seconds(5)) window.pop_front();
        const double dt = std::chrono::duration<double>(now - window.front().first).count();
        if (dt > 0.2) p.bytes_per_second = double(p.all_done - window.front().second) / dt;
        if (!callback || !*callback) return;
        if (!force && now - last_call < std::chrono::milliseconds(250)) return;
        last_call = now;
        (*callback)(p);
    }
};

struct Fetched {
    std::string file;
    hub::FileMeta meta;
};

bool is_commit(const std::string& s) {
    if (s.size() != 40) return false;
    for (char ch : s)
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
    return true;
}

bool etag_is_safe(const std::string& etag) {
    if (etag.empty() || etag.size() > 128) return false;
    for (char ch : etag)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') return false;
    return true;
}

// Writes `text` to `path` through a temporary file and a rename.
bool write_atomically(const fs::path& path, const std::string& text, std::string& error) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    const fs::path tmp = path.string() + ".tmp" + std::to_string(getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        if (!out.flush()) {
            error = "cannot write " + path.string() + " (" + std::strerror(errno) + ")";
            fs::remove(tmp, ec);
            return false;
        }
    }
    fs::rename(tmp, path, ec);
    if (ec) error = "cannot write " + path.string() + " (" + ec.message() + ")";
    return !ec;
}

// snapshots/<commit>/<file> -> ../../blobs/<etag> (deeper for a file in a folder).
bool link_snapshot(const fs::path& repo_dir, const std::string& commit, const Fetched& f, std::string& error) {
    const fs::path link = repo_dir / "snapshots" / commit / f.file;
    std::string target = "../../blobs/" + f.meta.etag;
    for (char ch : f.file)
        if (ch == '/') target = "../" + target;
    std::error_code ec;
    fs::create_directories(link.parent_path(), ec);
    const fs::path tmp = link.string() + ".tmp" + std::to_string(getpid());
    fs::remove(tmp, ec);
    fs::create_symlink(target, tmp, ec);
    if (!ec) fs::rename(tmp, link, ec);
    if (ec) {
        error = "cannot link " + link.string() + " (" + ec.message() + ")";
        fs::remove(tmp, ec);
        return false;
    }
    return true;
}

struct Getter {
    const HubGetOptions& o;
    hub::Endpoint ep;
    fs::path repo_dir, locks_dir;
    Meter meter;
    const std::atomic<bool>* cancel;
    HubGetResult result;

    Getter(const HubGetOptions& options, const std::function<void(const HubProgress&)>& progress,
           const std::atomic<bool>* c)
        : o(options), cancel(c) {
        ep.base = o.endpoint;
        ep.token = o.token;
        repo_dir = fs::path(o.cache_dir) / hub_repo_folder(o.repo);
        locks_dir = fs::path(o.cache_dir) / ".locks" / hub_repo_folder(o.repo);
        meter.callback = &progress;
    }

    bool fail(const std::string& sentence) {
        result.error = sentence;
        return false;
    }
    bool cancelled() const { return cancel && cancel->load(); }

    bool fetch_blob(const Fetched& f, int index);
    bool run();
};

// One blob into blobs/<etag>, resumed from .incomplete, verified; under its lock.
bool Getter::fetch_blob(const Fetched& f, int index) {
    const fs::path blob = repo_dir / "blobs" / f.meta.etag;
    const fs::path part = blob.string() + ".incomplete";
    meter.p.file = f.file;
    meter.p.file_index = index;
    meter.p.file_total = f.meta.size;
    std::error_code ec;
    FileLock lock;
    if (!lock.acquire(locks_dir / (f.meta.etag + ".lock"), cancel, result.error)) {
        result.cancelled = result.error.empty();
        if (result.cancelled) result.error = "the download was cancelled";
        return false;
    }
    if (fs::is_regular_file(blob, ec) && int64_t(fs::file_size(blob, ec)) == f.meta.size) { // cached, or another get's
        meter.p.file_done = f.meta.size;
        meter.p.all_done = meter.base_done + f.meta.size;
        meter.report(true);
        return true;
    }
    fs::create_directories(blob.parent_path(), ec);
    Digest sha;
    int64_t have = fs::is_regular_file(part, ec) ? int64_t(fs::file_size(part, ec)) : 0;
    if (ec || have > f.meta.size) have = 0;
    FILE* out = std::fopen(part.c_str(), have > 0 ? "r+b" : "wb");
    if (!out) return fail("cannot write " + part.string() + " (" + std::strerror(errno) + ")");
    if (have > 0 && f.meta.lfs) { // the part already there counts in the hash
        std::vector<char> buf(1 << 20);
        int64_t left = have;
        while (left > 0) {
            const size_t n = std::fread(buf.data(), 1, size_t(std::min<int64_t>(left, int64_t(buf.size()))), out);
            if (n == 0) break;
            sha.update(buf.data(), n);
            left -= int64_t(n);
        }
        if (left > 0) have = 0, sha.reset();
    }
    std::fseek(out, long(have), SEEK_SET);
    if (have == 0 && ftruncate(fileno(out), 0) != 0) {}
    int write_errno = 0;
    auto on_bytes = [&](const char* p, size_t n) {
        if (std::fwrite(p, 1, n, out) != n) {
            write_errno = errno ? errno : EIO;
            return false;
        }
        if (f.meta.lfs) sha.update(p, n);
        have += int64_t(n);
        meter.p.file_done = have;
        meter.p.all_done = meter.base_done + have;
        return true;
    };
    auto on_tick = [&] {
        meter.report(false);
        return !cancelled();
    };
    meter.p.file_done = have;
    hub::FetchResult r;
    r.ok = have == f.meta.size; // a part left whole (a get stopped before its rename): checked below
    for (int attempt = 0; attempt < 2 && !r.ok; ++attempt) {
        r = hub::hub_fetch(ep, f.meta.url, have, f.file, on_bytes, on_tick);
        if (!r.restart) break;
        have = 0; // the server would not resume: start over
        sha.reset();
        std::fseek(out, 0, SEEK_SET);
        if (ftruncate(fileno(out), 0) != 0) {}
    }
    if (std::fflush(out) != 0 && r.ok) r.ok = false, write_errno = errno;
    std::fclose(out);
    if (write_errno || r.error == "write") {
        const bool full = write_errno == ENOSPC || write_errno == EDQUOT;
        fs::remove(part, ec);
        return fail(full ? "the disk is full: " + f.file + " needs " + std::to_string(f.meta.size) + " bytes in " +
                               o.cache_dir + "; free some space or set HF_HUB_CACHE to another disk"
                         : "cannot write " + part.string() + " (" + std::strerror(write_errno) + ")");
    }
    if (!r.ok) {
        result.cancelled = r.cancelled;
        return fail(r.error); // .incomplete stays, for the next get to resume
    }
    if (have != f.meta.size) {
        fs::remove(part, ec);
        return fail(f.file + " came with " + std::to_string(have) + " bytes where the Hub announced " +
                    std::to_string(f.meta.size) + "; it was deleted, run attnviz get again");
    }
    if (f.meta.lfs) {
        const std::string got = sha.hex();
        if (got != f.meta.etag) {
            fs::remove(part, ec);
            return fail(f.file + " failed its checksum (SHA-256 " + got.substr(0, 12) + "... where the Hub announced " +
                        f.meta.etag.substr(0, 12) + "...); it was deleted, run attnviz get again");
        }
    }
    fs::rename(part, blob, ec);
    if (ec) return fail("cannot rename " + part.string() + " (" + ec.message() + ")");
    result.downloaded += have;
    meter.report(true);
    return true;
}

bool Getter::run() {
    // Metadata of every file first: the commit, and the total for the progress bar.
    std::vector<Fetched> files;
    std::string revision = o.revision;
    std::vector<std::string> names = hub_required_files();
    names.push_back("tokenizer.json");
    for (const std::string& name : names) {
        if (cancelled()) return result.cancelled = true, fail("the download was cancelled");
        Fetched f{name, {}};
        bool network = false;
        const hub::HeadStatus s = hub::hub_head(ep, o.repo, revision, name, f.meta, result.error, network);
        if (s == hub::HeadStatus::not_found_entry && name == "tokenizer.json") continue; // optional
        if (s == hub::HeadStatus::not_found_entry)
            return fail(o.repo + " has no " + name + " at " + o.revision + ", so it is not a GPT-2 model attnviz can open");
        if (s == hub::HeadStatus::failed) {
            if (network && files.empty()) { // no Hub: a cached copy still serves, as huggingface_hub's does
                if (auto snap = hub_cached_snapshot(o.cache_dir, o.repo, o.revision)) {
                    result.snapshot = *snap;
                    result.ok = true;
                }
            }
            return result.ok;
        }
        if (!is_commit(f.meta.commit)) return fail("the Hub's commit for " + o.repo + " is not 40 hex digits");
        if (!etag_is_safe(f.meta.etag)) return fail("the Hub's etag for " + name + " is not a plain hash");
        if (f.meta.lfs && f.meta.etag.size() != 64) return fail("the Hub's etag for " + name + " is not a SHA-256");
        if (files.empty()) revision = f.meta.commit; // every other file from the same commit
        files.push_back(f);
    }
    result.commit = files.front().meta.commit;
    meter.p.files = int(files.size());
    meter.p.all_total = 0;
    for (const Fetched& f : files) meter.p.all_total += f.meta.size;

    // config.json first: a model that is not GPT-2 stops before the large file.
    for (size_t i = 0; i < files.size(); ++i) {
        if (!fetch_blob(files[i], int(i))) return false;
        meter.base_done += files[i].meta.size;
        if (i == 0) {
            std::ifstream in(repo_dir / "blobs" / files[0].meta.etag, std::ios::binary);
            const nlohmann::json config = nlohmann::json::parse(in, nullptr, false);
            const bool gpt2 = config.is_object() && config.value("model_type", std::string()) == "gpt2";
            if (!gpt2) {
                const std::string type = config.is_object() && config.contains("model_type") &&
                                                 config["model_type"].is_string()
                                             ? config["model_type"].get<std::string>()
                                             : std::string("none");
                return fail(o.repo + " is not a GPT-2 model (its config.json says model_type " + type +
                            "); attnviz runs the GPT-2 family, e.g. gpt2, distilgpt2, gpt2-medium");
            }
        }
    }
    // Every file is complete and verified: link the snapshot, then the ref.
    for (const Fetched& f : files)
        if (!link_snapshot(repo_dir, result.commit, f, result.error)) return false;
    if (!is_commit(o.revision) && !write_atomically(repo_dir / "refs" / o.revision, result.commit, result.error))
        return false;
    result.snapshot = (repo_dir / "snapshots" / result.commit).string();
    result.ok = true;
    return true;
}

} // namespace

HubGetResult hub_get(const HubGetOptions& options, const std::function<void(const HubProgress&)>& progress,
                     const std::atomic<bool>* cancel) {
    HubGetResult result;
    if (!valid_hub_repo_id(options.repo, result.error) || !valid_hub_revision(options.revision, result.error))
        return result;
    if (options.offline) {
        std::string why;
        if (auto snap = hub_cached_snapshot(options.cache_dir, options.repo, options.revision, &why)) {
            result.ok = true;
            result.snapshot = *snap;
        } else {
            result.error = "HF_HUB_OFFLINE is set and " + options.repo + " is not usable from the cache: " + why +
                           "; unset HF_HUB_OFFLINE to download it";
        }
        return result;
    }
    hub::global_init_once();
    Getter g(options, progress, cancel);
    g.run();
    if (g.result.ok) g.result.error.clear();
    return g.result;
}

} // namespace attnviz
