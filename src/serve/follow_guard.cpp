// follow_guard.cpp: see follow_guard.h.
#include "follow_guard.h"
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>

namespace attnviz {

std::string log_escaped(const std::string& text, size_t max) {
    std::string out;
    for (size_t i = 0; i < text.size() && i < max; ++i) {
        const auto b = static_cast<unsigned char>(text[i]);
        if (b >= 0x20 && b < 0x7f && b != '\\') {
            out += char(b);
        } else {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", b);
            out += hex;
        }
    }
    if (text.size() > max) out += "...";
    return out;
}

void LogLimiter::set_sink(Sink sink) {
    std::lock_guard<std::mutex> lock(mutex_);
    sink_ = std::move(sink);
}

void LogLimiter::line(const char* kind, const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!sink_) return;
    bool& written = written_[kind];
    if (written) {
        ++held_[kind];
        return;
    }
    written = true;
    sink_(text);
}

void LogLimiter::tick() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [kind, n] : held_)
        if (n > 0 && sink_) sink_(std::to_string(n) + " more like this: " + kind);
    held_.clear();
    written_.clear();
}

std::string host_name_of(const std::string& host) {
    std::string h;
    for (char ch : host) h += char(std::tolower(static_cast<unsigned char>(ch)));
    if (h.empty() || h.size() > 255) return "";
    if (h[0] == '[') { // [v6]:port
        const size_t close = h.find(']');
        if (close == std::string::npos) return "";
        const std::string rest = h.substr(close + 1);
        if (!rest.empty() && (rest[0] != ':' || rest.find_first_not_of("0123456789", 1) != std::string::npos)) return "";
        return h.substr(1, close - 1);
    }
    const size_t colon = h.find(':');
    if (colon != std::string::npos) {
        const std::string port = h.substr(colon + 1);
        if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos) return "";
        h.resize(colon);
    }
    if (!h.empty() && h.back() == '.') h.pop_back(); // "laptop.school." names laptop.school
    for (char ch : h)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_')) return "";
    return h;
}

bool host_allowed(const std::string& host, const std::vector<std::string>& own) {
    const std::string name = host_name_of(host);
    if (name.empty()) return false;
    for (const std::string& o : own)
        if (host_name_of(o) == name) return true;
    return false;
}

bool origin_matches(const std::string& origin, const std::string& host) {
    auto lower = [](std::string s) {
        for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
        return s;
    };
    const std::string o = lower(origin), h = lower(host);
    if (h.empty()) return false;
    return o == "http://" + h || o == "https://" + h;
}

std::string make_class_code() {
    std::random_device rd; // the system's random device: a code cannot be guessed from the clock
    const std::string alphabet = code_alphabet;
    std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
    std::string code;
    for (size_t i = 0; i < code_length; ++i) code += alphabet[pick(rd)];
    return code;
}

std::string normalized_code(const std::string& typed) {
    std::string out;
    for (char ch : typed) {
        if (ch == ' ' || ch == '-') continue;
        out += char(std::toupper(static_cast<unsigned char>(ch)));
        if (out.size() > 16) break;
    }
    return out;
}

bool RateLimit::take(std::chrono::steady_clock::time_point now) {
    if (last_ != std::chrono::steady_clock::time_point{}) {
        const double dt = std::chrono::duration<double>(now - last_).count();
        tokens_ = std::min(burst_, tokens_ + dt * rate_);
    }
    last_ = now;
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
}

} // namespace attnviz
