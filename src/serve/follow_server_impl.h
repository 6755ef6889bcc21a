// follow_server_impl.h: FollowServer's insides, shared by its two sides: the HTTP side and the
// door (follow_http.cpp) and the pages' WebSocket side (follow_server.cpp). Private to src/serve.
#pragma once
#include "follow_guard.h"
#include "follow_server.h"
#include "serve_address.h"
#include <chrono>
#include <libwebsockets.h>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace attnviz {

using ServeClock = std::chrono::steady_clock;

// One page that follows (service thread only).
struct Client {
    uint64_t id = 0;                  // this connection's number, for the answer events
    std::string address;              // the peer's IPv4 address, for --per-address
    uint64_t sent_gen = 0;
    std::vector<uint64_t> seen_clear; // the clear rounds this page was told of, by question
    std::string page;                 // the page's ID, from its first answer
    std::string rx;
    bool rx_over = false;
    RateLimit rate;
    ServeClock::time_point heard, pinged; // its last message or pong; our last ping
    bool ping_owed = false;
    ServeClock::time_point owed{};    // since when a tick saw it owed the newest state, unwritten ({}: not)
    const char* close_why = nullptr;  // close at the next write, with this reason
    int close_code = 0;
};

// The published file on its way to one request: the bytes (kept alive while the window
// publishes another) and how far it got.
struct FileSend {
    std::shared_ptr<const std::string> bytes;
    size_t sent = 0;
};

struct FollowServer::Impl {
    ServeConfig config;
    std::string site_real; // the site folder's real path, no trailing slash
    lws_context* context = nullptr;
    std::thread thread;
    std::atomic<bool> stopping{false};
    lws_protocols protocols[3] = {};
    struct Tick {
        lws_sorted_usec_list_t sul; // first: the callback gets its address
        Impl* impl;
    } tick_sul{};

    mutable std::mutex mutex; // latest, gen, code and the answer events below
    std::string latest;
    uint64_t gen = 0;
    uint64_t woken_gen = 0;   // service thread only
    uint64_t clear_gen = 0;   // bumped by clear_answers(), under the mutex
    uint64_t woken_clear = 0; // service thread only
    std::string code;         // the class code now ("" for none)
    uint64_t code_gen = 0, woken_code = 0;
    std::vector<AnswerEvent> answer_events; // for take_answers()
    std::vector<uint64_t> clear_round; // by question
    // publish_files', under the mutex: path -> bytes.
    std::unordered_map<std::string, std::shared_ptr<const std::string>> files;

    // Service thread only.
    std::unordered_map<lws*, FileSend> file_sends;
    std::unordered_map<lws*, Client> clients;
    std::unordered_map<std::string, int> per_address; // address -> pages following from it
    std::unordered_map<std::string, uint64_t> page_conn; // page ID -> the connected page answering as it
    uint64_t next_client = 0;
    std::vector<unsigned char> send_buf;
    std::vector<std::string> own_hosts; // what a Host may name
    ServeClock::time_point hosts_at{}, log_tick_at{};
    LogLimiter logs;

    std::atomic<int> n_clients{0};
    std::atomic<uint64_t> connected{0}, refused{0}, refused_address{0}, refused_code{0}, refused_host{0},
        refused_upgrade{0}, timed_out{0}, stuck{0}, throttled{0}, malformed{0}, oversized{0}, ignored{0}, answered{0},
        sent{0}, http_refused{0}, files_sent{0};

    // follow_http.cpp
    int http(lws* wsi, lws_callback_reasons reason, void* user, void* in, size_t len);
    bool host_ok(lws* wsi, std::string& host);
    int confirm_upgrade(lws* wsi);
    std::string resolve(const char* uri) const;
    bool code_ok(lws* wsi);
    void refresh_hosts();

    // follow_server.cpp
    int ws(lws* wsi, lws_callback_reasons reason, void* in, size_t len);
    int established(lws* wsi);
    void closed(lws* wsi);
    int writeable(lws* wsi);
    void receive(lws* wsi, const void* in, size_t len);
    bool take_answer(Client& c, const std::string& text);
    int owed_clear(Client& c);
    void tick();
    void log(const char* kind, const std::string& text) { logs.line(kind, text); }
};

// A header's value ("" when absent or longer than 256 bytes).
std::string header_of(lws* wsi, lws_token_indexes h);
// The HTTP side's per-request memory, for lws_protocols.
size_t http_request_size();

} // namespace attnviz
