// hub_http.h: the two HTTP exchanges of a Hub download, over libcurl (internal to src/hub).
//
//   hub_head   HEAD {endpoint}/{repo}/resolve/{revision}/{file}, redirects read by hand: a
//              302 carrying X-Linked-Etag is an LFS file (its Location, on the storage host,
//              is where the bytes are); a relative 307 (a renamed repository, a small file) is
//              followed to the 200 that carries X-Repo-Commit, ETag and Content-Length.
//   hub_fetch  GET of that URL into an open file from byte `offset` (Range), each chunk
//              hashed as it arrives (SHA-256 of an LFS file), with the progress and cancel
//              callback. The token goes only to the endpoint's own scheme, host and port.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace attnviz::hub {

void global_init_once(); // curl_global_init, once per process, thread-safe

struct Endpoint {
    std::string base;                 // "https://huggingface.co", no trailing '/'
    std::optional<std::string> token; // sent as Authorization: Bearer to `base`'s origin only
};

struct FileMeta {
    std::string commit;      // X-Repo-Commit
    std::string etag;        // X-Linked-Etag or ETag, without quotes and W/
    int64_t size = -1;       // X-Linked-Size or Content-Length
    bool lfs = false;        // the etag is the file's SHA-256
    std::string url;         // where the GET goes: the storage host's Location, or the final resolve URL
};

enum class HeadStatus { ok, not_found_entry, failed };

// On failed: `error` is one sentence (never the token), `network` says whether the Hub could
// not be reached at all (then a cached copy may stand in).
HeadStatus hub_head(const Endpoint& ep, const std::string& repo, const std::string& revision, const std::string& file,
                    FileMeta& meta, std::string& error, bool& network);

struct FetchResult {
    bool ok = false;
    bool cancelled = false;
    bool restart = false;    // the server ignored Range (200) or refused it (416): the file was truncated to 0
    std::string error;
};

// GET `url` appending to `out` (already at `offset` bytes, which `hash_chunk` has seen).
// `on_bytes(n)` gets each chunk and returns false to stop (write failure); `on_tick()` runs a
// few times a second and returns false to cancel.
FetchResult hub_fetch(const Endpoint& ep, const std::string& url, int64_t offset, const std::string& file,
                      const std::function<bool(const char*, size_t)>& on_bytes, const std::function<bool()>& on_tick);

} // namespace attnviz::hub
