// text_util.h: the pieces of error sentences that several readers share, and the one way
// attnviz shows the user's own text (a file name, a word, an option value, a JSON string)
// inside a sentence.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace attnviz {

// `s` made printable on one line: control characters become \n, \t, \r or \xNN (and the
// C1 controls and U+2028/U+2029, which terminals may break lines on, \uNNNN); bytes that
// are not UTF-8 become \xNN; everything else, letters of any script included, is kept.
// Longer than `max_bytes` of `s`: cut at a character boundary and "..." added.
std::string escaped(const std::string& s, size_t max_bytes = std::string::npos);
// escaped(s, max_bytes) in single quotes: how an error sentence quotes the user's text.
std::string quote(const std::string& s, size_t max_bytes = 60);
// A path in single quotes, escaped; a long one keeps its last 100 bytes (the file name)
// behind "...".
std::string quote_path(const std::string& path);

// Sets `error` to "<file>: <text>" and returns false, so a reader can `return fail(...)`.
// The file name is escaped, so the sentence stays one line.
inline bool fail(std::string& error, const std::string& file, const std::string& text) {
    error = escaped(file) + ": " + text;
    return false;
}

// Length of the valid UTF-8 sequence starting at s[i] (1 to 4), or 0 when the byte there
// does not start one (a stray byte, an overlong form, a surrogate, past U+10FFFF).
size_t utf8_sequence_length(const std::string& s, size_t i);
// Offset of the first byte that breaks UTF-8, or std::string::npos when `s` is valid.
size_t invalid_utf8_at(const std::string& s);
// Characters of `s` (a byte that breaks UTF-8 counts as one), and the bytes of its first `n`.
size_t utf8_count(const std::string& s);
size_t utf8_prefix(const std::string& s, size_t n);

// "0.46": v with two decimals, as the check view's sentences quote scores.
std::string two_decimals(double v);

// "1, 2, 5 or 10"
inline std::string list_or(const std::vector<int>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0) s += (i + 1 == v.size()) ? " or " : ", ";
        s += std::to_string(v[i]);
    }
    return s;
}

// True when `s` ends with `suffix` (lower case), ignoring the case of `s`: ".NPY" is ".npy".
bool ends_with_nocase(const std::string& s, const std::string& suffix);

} // namespace attnviz
