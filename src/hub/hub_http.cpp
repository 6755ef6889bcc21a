// hub_http.cpp: HEAD and GET against the Hub with libcurl; see hub_http.h.
#include "hub_http.h"
#include <curl/curl.h>
#include <memory>
#include <mutex>

namespace attnviz::hub {

void global_init_once() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

namespace {

struct CurlDeleter {
    void operator()(CURL* c) const { curl_easy_cleanup(c); }
    void operator()(curl_slist* l) const { curl_slist_free_all(l); }
    void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using CurlPtr = std::unique_ptr<CURL, CurlDeleter>;
using ListPtr = std::unique_ptr<curl_slist, CurlDeleter>;
using UrlPtr = std::unique_ptr<CURLU, CurlDeleter>;

// scheme://host:port of a URL, the port made explicit, for "is this the Hub?".
std::string origin_of(const std::string& url) {
    UrlPtr u(curl_url());
    if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return {};
    std::string out;
    for (CURLUPart part : {CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT}) {
        char* v = nullptr;
        if (curl_url_get(u.get(), part, &v, part == CURLUPART_PORT ? CURLU_DEFAULT_PORT : 0) != CURLUE_OK) return {};
        out += std::string(v) + "|";
        curl_free(v);
    }
    return out;
}

// The request headers: the token only when `url` is on the endpoint's own origin.
ListPtr request_headers(const Endpoint& ep, const std::string& url) {
    curl_slist* list = curl_slist_append(nullptr, "User-Agent: attnviz (+huggingface_hub cache layout)");
    if (ep.token && !ep.token->empty() && origin_of(url) == origin_of(ep.base))
        list = curl_slist_append(list, ("Authorization: Bearer " + *ep.token).c_str());
    return ListPtr(list);
}

std::string header_value(CURL* c, const char* name) {
    curl_header* h = nullptr;
    if (curl_easy_header(c, name, 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h) return {};
    return h->value;
}

// An etag as the Hub sends it, "W/\"abc\"" or "\"abc\"", made bare.
std::string bare_etag(std::string e) {
    if (e.rfind("W/", 0) == 0) e.erase(0, 2);
    if (e.size() >= 2 && e.front() == '"' && e.back() == '"') e = e.substr(1, e.size() - 2);
    return e;
}

int64_t parse_size(const std::string& s) {
    if (s.empty() || s.size() > 18) return -1;
    int64_t v = 0;
    for (char ch : s) {
        if (ch < '0' || ch > '9') return -1;
        v = v * 10 + (ch - '0');
    }
    return v;
}

void common_options(CURL* c, const std::string& url, curl_slist* headers) {
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);        // worker threads: no SIGALRM for timeouts
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L); // a stalled transfer ends after a minute
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
}

std::string unreachable(const Endpoint& ep, CURLcode rc) {
    return "cannot reach the Hub at " + ep.base + " (" + curl_easy_strerror(rc) +
           "); check the network, or set HF_HUB_OFFLINE=1 to use only the cache";
}

// One sentence for an HTTP error of a resolve URL, from its status and X-Error-Code.
std::string http_error(long status, const std::string& code, const std::string& repo, const std::string& revision,
                       const std::string& file) {
    if (code == "RepoNotFound")
        return "the Hub has no model " + repo + " (or it is private: then set HF_TOKEN to a token that may read it)";
    if (code == "GatedRepo") return repo + " is gated: accept its terms on the Hub, then set HF_TOKEN to your access token";
    if (code == "RevisionNotFound") return repo + " has no revision " + revision + "; give --revision main or a commit";
    if (code == "EntryNotFound") return repo + " has no file " + file + "; a GPT-2 model needs it";
    if (status == 401 || status == 403)
        return "the Hub refused " + repo + " (HTTP " + std::to_string(status) +
               "): set HF_TOKEN to an access token that may read it";
    if (status == 404) return "the Hub has no " + file + " in " + repo + " at " + revision + " (HTTP 404)";
    return "the Hub answered HTTP " + std::to_string(status) + " for " + repo + "/" + file + "; try again later";
}

} // namespace

HeadStatus hub_head(const Endpoint& ep, const std::string& repo, const std::string& revision, const std::string& file,
                    FileMeta& meta, std::string& error, bool& network) {
    network = false;
    std::string url = ep.base + "/" + repo + "/resolve/" + revision + "/" + file;
    for (int hop = 0; hop < 6; ++hop) {
        CurlPtr c(curl_easy_init());
        ListPtr headers = request_headers(ep, url);
        common_options(c.get(), url, headers.get());
        curl_easy_setopt(c.get(), CURLOPT_NOBODY, 1L);
        curl_easy_setopt(c.get(), CURLOPT_TIMEOUT, 60L);
        const CURLcode rc = curl_easy_perform(c.get());
        if (rc != CURLE_OK) {
            network = true;
            error = unreachable(ep, rc);
            return HeadStatus::failed;
        }
        long status = 0;
        curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &status);
        const std::string linked_etag = header_value(c.get(), "X-Linked-Etag");
        if (status >= 300 && status < 400) {
            char* next = nullptr;
            curl_easy_getinfo(c.get(), CURLINFO_REDIRECT_URL, &next);
            if (!next) break;
            if (!linked_etag.empty()) { // an LFS file: everything is on the redirect itself
                meta.commit = header_value(c.get(), "X-Repo-Commit");
                meta.etag = bare_etag(linked_etag);
                meta.size = parse_size(header_value(c.get(), "X-Linked-Size"));
                meta.lfs = true;
                meta.url = next;
                break;
            }
            url = next; // a renamed repository or a small file: follow to the 200
            continue;
        }
        if (status == 200) {
            meta.commit = header_value(c.get(), "X-Repo-Commit");
            meta.etag = bare_etag(!linked_etag.empty() ? linked_etag : header_value(c.get(), "ETag"));
            const std::string linked_size = header_value(c.get(), "X-Linked-Size");
            meta.size = parse_size(!linked_size.empty() ? linked_size : header_value(c.get(), "Content-Length"));
            meta.lfs = !linked_etag.empty();
            meta.url = url;
            break;
        }
        const std::string code = header_value(c.get(), "X-Error-Code");
        if (status == 404 && code == "EntryNotFound") return HeadStatus::not_found_entry;
        error = http_error(status, code, repo, revision, file);
        return HeadStatus::failed;
    }
    if (meta.commit.empty() || meta.etag.empty() || meta.size < 0 || meta.url.empty()) {
        error = "the Hub's answer for " + repo + "/" + file + " lacks its commit, etag or size (is " + ep.base +
                " a Hugging Face Hub?)";
        return HeadStatus::failed;
    }
    return HeadStatus::ok;
}

namespace {

struct FetchState {
    const std::function<bool(const char*, size_t)>* on_bytes;
    const std::function<bool()>* on_tick;
    CURL* curl;
    bool checked_status = false;
    bool write_failed = false;
    bool cancelled = false;
    bool bad_status = false;
    long status = 0;
    int64_t offset = 0;
};

size_t on_write(char* data, size_t size, size_t n, void* user) {
    auto* s = static_cast<FetchState*>(user);
    if (!s->checked_status) { // the first body byte: is this the part we asked for?
        s->checked_status = true;
        curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &s->status);
        if (s->status != (s->offset > 0 ? 206 : 200)) {
            s->bad_status = true;
            return 0;
        }
    }
    if (!(*s->on_bytes)(data, size * n)) {
        s->write_failed = true;
        return 0;
    }
    return size * n;
}

int on_xfer(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto* s = static_cast<FetchState*>(user);
    if (*s->on_tick && !(*s->on_tick)()) {
        s->cancelled = true;
        return 1;
    }
    return 0;
}

} // namespace

FetchResult hub_fetch(const Endpoint& ep, const std::string& url, int64_t offset, const std::string& file,
                      const std::function<bool(const char*, size_t)>& on_bytes, const std::function<bool()>& on_tick) {
    FetchResult r;
    CurlPtr c(curl_easy_init());
    ListPtr headers = request_headers(ep, url);
    common_options(c.get(), url, headers.get());
    FetchState s{&on_bytes, &on_tick, c.get()};
    s.offset = offset;
    // Redirects: curl drops a custom Authorization header when a redirect leaves the origin
    // (host or port); the token is only on `url` when it is the Hub's own.
    curl_easy_setopt(c.get(), CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c.get(), CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(c.get(), CURLOPT_UNRESTRICTED_AUTH, 0L);
    curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(c.get(), CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c.get(), CURLOPT_XFERINFOFUNCTION, on_xfer);
    curl_easy_setopt(c.get(), CURLOPT_XFERINFODATA, &s);
    curl_easy_setopt(c.get(), CURLOPT_BUFFERSIZE, 512L * 1024L);
    const std::string range = std::to_string(offset) + "-";
    if (offset > 0) curl_easy_setopt(c.get(), CURLOPT_RANGE, range.c_str());
    const CURLcode rc = curl_easy_perform(c.get());
    long status = s.status;
    if (!s.checked_status) curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &status);
    if (s.cancelled) {
        r.cancelled = true;
        r.error = "the download of " + file + " was cancelled; run attnviz get again to resume it";
    } else if (s.write_failed) {
        r.error = "write"; // the caller knows which file and why (errno)
    } else if ((s.bad_status && offset > 0 && (status == 200 || status == 416)) || (offset > 0 && status == 416)) {
        r.restart = true;
    } else if (s.bad_status || (rc == CURLE_OK && status != (offset > 0 ? 206 : 200) && !(status == 200 && offset == 0))) {
        r.error = "the download of " + file + " answered HTTP " + std::to_string(status) + "; try again later";
    } else if (rc != CURLE_OK) {
        r.error = "the download of " + file + " stopped (" + curl_easy_strerror(rc) +
                  "); run attnviz get again to resume it";
    } else {
        r.ok = true;
    }
    return r;
}

} // namespace attnviz::hub
