// follow_guard.h: the small rules the classroom server keeps at its door, apart from
// libwebsockets so that each is tested alone: what a log line may contain, how often a kind of
// line is written, which Host and Origin a request may name, the class code, and how many
// messages a page may send a second.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace attnviz {

// `text` with every byte that is not printable ASCII (and the backslash) written as \xNN, at
// most `max` bytes of it (then "..."): a page's path cannot move the teacher's cursor.
std::string log_escaped(const std::string& text, size_t max = 200);

// Log lines by kind: the first line of a kind in a second is written, the others of that
// second are counted and written once, at the next tick, as "N more like this: KIND". A kind
// is a fixed word of the server's, never a page's text, so one kind cannot hide another.
class LogLimiter {
public:
    using Sink = std::function<void(const std::string&)>;
    explicit LogLimiter(Sink sink = {}) : sink_(std::move(sink)) {}
    void set_sink(Sink sink);
    void line(const char* kind, const std::string& text);
    // Once a second: the counts of the lines held back, one line per kind.
    void tick();

private:
    std::mutex mutex_;
    Sink sink_;
    std::map<std::string, uint64_t> held_; // kind -> lines not written this second
    std::map<std::string, bool> written_;  // kind -> a line was written this second
};

// The Host header's name without its port: "10.0.0.2:8642" -> "10.0.0.2", "[::1]:80" -> "::1",
// lower case. "" when malformed.
std::string host_name_of(const std::string& host);
// A request's Host names this server: one of `own` (its addresses, localhost, its host name,
// the --allow-host names), any port form, case-insensitive.
bool host_allowed(const std::string& host, const std::vector<std::string>& own);
// A WebSocket's Origin is the page this server served: http(s)://HOST with HOST the request's.
bool origin_matches(const std::string& origin, const std::string& host);

// The class code: 6 characters from an alphabet without look-alikes (no 0/O, 1/I/L, 2/Z,
// 5/S, 8/B), drawn from the system's random device.
constexpr const char* code_alphabet = "ACDEFGHJKMNPQRTUVWXY34679";
constexpr size_t code_length = 6;
std::string make_class_code();
// What a person typed, as a code: upper case, spaces and dashes removed.
std::string normalized_code(const std::string& typed);

// A page's messages: `rate` a second on average, up to `burst` at once; the others are dropped.
class RateLimit {
public:
    RateLimit(double rate = 5, double burst = 10) : rate_(rate), burst_(burst), tokens_(burst) {}
    bool take(std::chrono::steady_clock::time_point now);

private:
    double rate_, burst_, tokens_;
    std::chrono::steady_clock::time_point last_{};
};

} // namespace attnviz
