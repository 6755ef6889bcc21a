// follow_server.h: "Follow the teacher" (attnviz --serve). One port, one thread:
//
//   GET /...            a file of the site folder (the web page), never one outside it, with
//                       the header x-attnviz-follow: the page knows it came from a teacher's window
//   GET /follow.json    {"follow":"/follow","protocol":"attnviz-follow"}, for scripts and tests
//   GET /follow/...     the files the window publishes (publish_files: the shown trained
//                       model's weights, the weights file's block), from memory; with the
//                       class code (?code=) when there is one
//   ws://HOST:PORT/follow?code=CODE (subprotocol attnviz-follow)
//                       every page gets the latest state message on connecting and the newest
//                       one when the window publishes (a slow page skips the ones between)
//
// The door (docs/views.md, "On a school network"): every request names a Host that is this
// server's (its addresses, localhost, its host name, --allow-host names), else 403; an
// upgrade must be to /follow with the subprotocol, with an Origin equal to its Host, else an
// HTTP error; then the class code (a wrong or missing one: closed with 4401 and a reason),
// --max-clients and --per-address (closed with 1008 and a reason). A page that says nothing
// (no pong, no message) for idle_ms is dropped; pings go every ping_ms; a connection that has
// not finished its request within handshake_s is closed. The page's files carry nosniff, a
// Content-Security-Policy (its own scripts, WebAssembly and its own WebSocket) and a
// Cache-Control that caches the files but not the state. Log lines escape every byte that is
// not printable ASCII and are limited per kind ("N more like this", follow_guard.h).
//
// Only the window writes the state: publish() is the one way in. What a page sends is never
// applied. The one message a page may send is its answer to a check-yourself question,
//
//   {"answer":{"page":"ID","question":Q,"choice":C}}    Q from 0, C from 0 (below the
//                                                        question's number of choices)
//
// which the server only takes off the socket and hands on (take_answers()): ID is 1 to 40
// letters, digits, - or _, fixed for the connection by its first answer, and not one another
// connected page answers as; Q and C within config.choices. The window counts them
// (src/state/class_answers.h). At most `rate` messages a second per page (a burst of `burst`):
// more are dropped and counted. clear_answers() tells every connected page
// {"answers_cleared":Q}. Any other message is dropped and counted: malformed (not JSON, or
// binary), oversized, or well-formed but not an answer.
// libwebsockets (Debian's libwebsockets17) does HTTP and WebSocket on its own service loop,
// run here on a thread of the server's own; publish() only stores the text and wakes it.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attnviz {

struct ServeConfig {
    std::string bind = "0.0.0.0"; // an IPv4 address of this machine, or 0.0.0.0 for all of them
    int port = 8642;
    int max_clients = 60;
    int per_address = 8;           // the most pages from one address (0: no limit)
    std::vector<std::string> allow_hosts; // names a request's Host may give besides this machine's
    std::string code;              // the class code pages must give ("": none, --no-code)
    std::string site_dir;          // the web page's folder (index.html, attnviz.js, ...)
    size_t max_message = 4096;     // the largest message a page may send (bytes)
    bool quiet = false;            // no log lines (the tests)
    std::function<void(const std::string&)> log; // where log lines go (default: stderr)
    std::vector<int> choices;      // each check-yourself question's number of choices
    int ping_ms = 10000;           // a ping to a page silent this long
    int idle_ms = 30000;           // a page silent this long (no pong, no message) is dropped
    int handshake_s = 5;           // a connection's request must be whole within this
    int stuck_s = 10;              // a page whose send buffer stays full this long is dropped
    double rate = 5, burst = 10;   // a page's messages: per second, and at once
};

// What came off the socket about answers, in order, for the window's tally (class_answers.h):
// a page's answer, a connection that had answered and left, or the teacher's Clear.
struct AnswerEvent {
    enum Kind { answer, left, clear } kind = answer;
    uint64_t conn = 0;     // the connection (answer, left)
    std::string page;      // the page's ID (answer)
    int question = 0;      // answer; clear: the question, -1 for every one
    int choice = 0;        // answer
};

// What the server has seen, for the side panel and the tests.
struct ServeStats {
    int clients = 0;           // pages following now
    uint64_t connected = 0;    // pages that ever connected (refused ones not counted)
    uint64_t refused = 0;      // over max_clients
    uint64_t refused_address = 0; // over per_address
    uint64_t refused_code = 0; // without the class code, or with a wrong one
    uint64_t refused_host = 0; // a Host or Origin not this server's (403)
    uint64_t refused_upgrade = 0; // an upgrade to another path or without the subprotocol
    uint64_t timed_out = 0;    // dropped: silent for idle_ms
    uint64_t stuck = 0;        // dropped: its send buffer stayed full for stuck_s
    uint64_t throttled = 0;    // messages dropped: over the rate
    uint64_t malformed = 0;    // dropped: not JSON, or binary
    uint64_t oversized = 0;    // dropped: longer than max_message
    uint64_t ignored = 0;      // well-formed messages that are no answer (pages cannot change the state)
    uint64_t answers = 0;      // answers counted (a page's later answer replaces its earlier one)
    uint64_t sent = 0;         // state messages written to pages
    uint64_t http_refused = 0; // requests for a path outside the site folder or not a file
    uint64_t files_sent = 0;   // the published file, sent whole
};

class FollowServer {
public:
    FollowServer();
    ~FollowServer(); // stops
    FollowServer(const FollowServer&) = delete;
    FollowServer& operator=(const FollowServer&) = delete;

    // Checks the config (the site folder has index.html; the address is this machine's; the
    // port is free), binds and starts the thread. On failure `error` is one sentence naming
    // the value and what to do instead, and nothing runs.
    bool start(const ServeConfig& c, std::string& error);
    void stop();
    bool running() const;

    // The latest state message (the session JSON): kept, and sent to every page.
    void publish(const std::string& message);
    // The files pages may fetch besides the site's: each (path, bytes), its path under
    // /follow/ (others are left out, and more than 4), kept in memory. Replaces every file
    // published before; an empty list removes them all.
    void publish_files(std::vector<std::pair<std::string, std::string>> files);
    ServeStats stats() const;

    // The answers, connections that left and clears since the last call, oldest first (at most
    // max_answer_events waiting: more answers are refused and counted as ignored).
    std::vector<AnswerEvent> take_answers();
    static constexpr size_t max_answer_events = 65536;
    // Question q's answers are forgotten (every question's for q = -1): a clear event for the
    // tally, and every page is told.
    void clear_answers(int q);
    // A new class code ("" for none): every page that follows is dropped (closed with 4401),
    // and pages must give the new one.
    void set_code(const std::string& code);

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

} // namespace attnviz
