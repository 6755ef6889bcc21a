// hub_download.h: `attnviz get` and the window's Get GPT-2 button. Fetches a GPT-2 family
// repository from the Hugging Face Hub (or HF_ENDPOINT, a mock Hub in the tests) into the
// cache hub_cache.h reads, speaking the Hub's protocol with libcurl: a HEAD of
// {endpoint}/{repo}/resolve/{revision}/{file} for X-Repo-Commit, the etag and the size
// (X-Linked-* on an LFS file's 302), then a GET that follows the redirect to the storage host,
// which never receives the token. Resumes blobs/<etag>.incomplete with Range, hashes LFS files
// with SHA-256 while the bytes arrive, and links a file into snapshots/ only when complete
// and verified; a lock file keeps two gets of one repository apart.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace attnviz {

struct HubGetOptions {
    std::string repo;                 // "gpt2", "openai-community/gpt2"
    std::string revision = "main";
    std::string endpoint;             // HF_ENDPOINT, else https://huggingface.co (no trailing /)
    std::optional<std::string> token; // HF_TOKEN: a bearer token for the Hub only; never printed
    bool offline = false;             // HF_HUB_OFFLINE=1: the cache only
    std::string cache_dir;            // hub_cache_dir()
};

// The environment's endpoint, token, offline switch and cache folder, for `repo`/`revision`.
HubGetOptions hub_options_from_env(const std::string& repo, const std::string& revision);

struct HubProgress {
    std::string file;          // the file being fetched, e.g. "model.safetensors"
    int file_index = 0;        // 0-based among `files`
    int files = 0;
    int64_t file_done = 0;     // bytes of this file on disk (a resumed part counts)
    int64_t file_total = -1;   // its announced size, -1 before the HEAD
    int64_t all_done = 0;      // over every file of the model
    int64_t all_total = -1;    // -1 until every size is known
    double bytes_per_second = 0; // over the last few seconds of this get
};

struct HubGetResult {
    bool ok = false;
    bool cancelled = false;
    std::string snapshot;      // the snapshot folder, when ok
    std::string commit;        // the 40-hex commit
    std::string error;         // one sentence, when not ok (never the token)
    int64_t downloaded = 0;    // bytes that came over the network in this get (0 when cached)
};

// Fetches the model. `progress` is called from the calling thread, at most a few times a
// second and once at each file's end; `cancel`, when set, stops the transfer within a
// fraction of a second and leaves the .incomplete file for a later get to resume. Blocks:
// the window calls it on a worker thread.
HubGetResult hub_get(const HubGetOptions& options, const std::function<void(const HubProgress&)>& progress = {},
                     const std::atomic<bool>* cancel = nullptr);

} // namespace attnviz
