// text_util.cpp: see text_util.h.
#include "text_util.h"
#include <cctype>
#include <cstdint>
#include <cstdio>

namespace attnviz {

std::string two_decimals(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
}

size_t utf8_sequence_length(const std::string& s, size_t i) {
    const unsigned char c = (unsigned char)s[i];
    const int n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : -1;
    if (n < 0 || i + size_t(n) >= s.size()) return 0; // a stray byte, or a lead cut short
    uint32_t cp = n == 0 ? c : n == 1 ? (c & 0x1fu) : n == 2 ? (c & 0x0fu) : (c & 0x07u);
    for (int k = 1; k <= n; ++k) {
        const unsigned char d = (unsigned char)s[i + size_t(k)];
        if ((d >> 6) != 0x2) return 0;
        cp = (cp << 6) | (d & 0x3fu);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    const uint32_t least[] = {0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
    return size_t(n) + 1;
}

size_t invalid_utf8_at(const std::string& s) {
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8_sequence_length(s, i);
        if (n == 0) return i;
        i += n;
    }
    return std::string::npos;
}

// The code point of the valid sequence of `n` bytes at s[i].
static uint32_t code_point(const std::string& s, size_t i, size_t n) {
    const unsigned char c = (unsigned char)s[i];
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1fu) : n == 3 ? (c & 0x0fu) : (c & 0x07u);
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | ((unsigned char)s[i + k] & 0x3fu);
    return cp;
}

std::string escaped(const std::string& s, size_t max_bytes) {
    std::string out;
    size_t i = 0;
    for (; i < s.size() && i < max_bytes;) {
        const unsigned char c = (unsigned char)s[i];
        const size_t n = utf8_sequence_length(s, i);
        char hex[16];
        if (n == 0) { // not UTF-8: the byte itself
            std::snprintf(hex, sizeof hex, "\\x%02X", c);
            out += hex;
            i += 1;
            continue;
        }
        const uint32_t cp = code_point(s, i, n);
        if (cp == '\n') out += "\\n";
        else if (cp == '\t') out += "\\t";
        else if (cp == '\r') out += "\\r";
        else if (cp < 0x20 || cp == 0x7f) {
            std::snprintf(hex, sizeof hex, "\\x%02X", unsigned(cp));
            out += hex;
        } else if ((cp >= 0x80 && cp < 0xa0) || cp == 0x2028 || cp == 0x2029) {
            std::snprintf(hex, sizeof hex, "\\u%04X", unsigned(cp));
            out += hex;
        } else {
            out.append(s, i, n);
        }
        i += n;
    }
    if (i < s.size()) out += "...";
    return out;
}

std::string quote(const std::string& s, size_t max_bytes) { return "'" + escaped(s, max_bytes) + "'"; }

std::string quote_path(const std::string& path) {
    const size_t keep = 100;
    if (path.size() <= keep) return quote(path, keep);
    // Start the tail at a character boundary, so the cut shows no half letter.
    size_t from = path.size() - keep;
    while (from < path.size() && ((unsigned char)path[from] & 0xc0) == 0x80) ++from;
    return "'..." + escaped(path.substr(from)) + "'";
}

bool ends_with_nocase(const std::string& s, const std::string& suffix) {
    if (s.size() < suffix.size()) return false;
    for (size_t i = 0; i < suffix.size(); ++i)
        if (std::tolower((unsigned char)s[s.size() - suffix.size() + i]) != suffix[i]) return false;
    return true;
}

size_t utf8_prefix(const std::string& s, size_t n) {
    size_t at = 0;
    for (size_t k = 0; k < n && at < s.size(); ++k) at += std::max<size_t>(1, utf8_sequence_length(s, at));
    return std::min(at, s.size());
}

size_t utf8_count(const std::string& s) {
    size_t n = 0;
    for (size_t at = 0; at < s.size(); ++n) at += std::max<size_t>(1, utf8_sequence_length(s, at));
    return n;
}


} // namespace attnviz
