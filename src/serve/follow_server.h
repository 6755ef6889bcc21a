// follow_server.h: "Follow the teacher" (attnviz --serve). One port, one thread:
//
//   GET /...            a file of the site folder (the web page), never one outside it, with
//                       the header x-attnviz-follow: the page knows it came from a teacher's window
//   GET /follow.json    {"follow":"/follow","protocol":"attnviz-follow"}, for scripts and tests
//   GET /follow/...     the files the window publishes (publish_files: the shown trained
//                       model's weights, the weights file's block), from memory
//   ws://HOST:PORT/follow (subprotocol attnviz-follow)
//                       every page gets the latest state message on connecting and each new
//                       one when the window publishes it
//
// Only the window writes the state: publish() is the one way in. What a page sends is never
// applied. The one message a page may send is its answer to a check-yourself question,
//
//   {"answer":{"page":"ID","question":Q,"choice":C}}    Q from 0, C from 0 (below the
//                                                        question's number of choices)
//
// which only counts in answer_counts(): a page (ID: 1 to 40 letters, digits, - or _, and one
// ID per connection) has one answer per question, its latest; answers outlive the page's
// connection (a laptop that sleeps still counts) until cleared, for at most 4 × max_clients
// pages. clear_answers() forgets a question's answers and tells every connected page
// {"answers_cleared":Q}, one such message per question cleared. Any
// other message is dropped and logged: malformed (not JSON, or binary), oversized, or
// well-formed but not an answer to one of the questions (ignored). At
// most `max_clients` pages follow at once; one more is closed with status 1008 and a reason.
// libwebsockets (Debian's libwebsockets17) does HTTP and WebSocket on its own service loop,
// run here on a thread of the server's own; publish() only stores the text and wakes it.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attnviz {

struct ServeConfig {
    std::string bind = "0.0.0.0"; // an IPv4 address of this machine, or 0.0.0.0 for all of them
    int port = 8642;
    int max_clients = 60;
    std::string site_dir;          // the web page's folder (index.html, attnviz.js, ...)
    size_t max_message = 4096;     // the largest message a page may send (bytes)
    bool quiet = false;            // no log lines on stderr (the tests)
    std::vector<int> choices;      // each check-yourself question's number of choices
};

// What the server has seen, for the side panel and the tests.
struct ServeStats {
    int clients = 0;           // pages following now
    uint64_t connected = 0;    // pages that ever connected (refused ones not counted)
    uint64_t refused = 0;      // over max_clients
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

    // How many pages chose each choice: [question][choice], sized as config.choices.
    std::vector<std::vector<int>> answer_counts() const;
    // Forgets question q's answers (every question's for q = -1) and tells every page.
    void clear_answers(int q);

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

} // namespace attnviz
