// text_util.h: the pieces of the core's error sentences that several readers share.
#pragma once
#include <string>
#include <vector>

namespace attnviz {

// Sets `error` to "<file>: <text>" and returns false, so a reader can `return fail(...)`.
inline bool fail(std::string& error, const std::string& file, const std::string& text) {
    error = file + ": " + text;
    return false;
}

// A name from a file, quoted, made printable and cut short, so that an error stays one
// readable line whatever bytes the file holds.
inline std::string quoted(const std::string& s) {
    const size_t cap = 60;
    std::string t;
    for (size_t i = 0; i < s.size() && i < cap; ++i) {
        unsigned char c = (unsigned char)s[i];
        t += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
    }
    if (s.size() > cap) t += "...";
    return "'" + t + "'";
}

// "1, 2, 5 or 10"
inline std::string list_or(const std::vector<int>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0) s += (i + 1 == v.size()) ? " or " : ", ";
        s += std::to_string(v[i]);
    }
    return s;
}

} // namespace attnviz
