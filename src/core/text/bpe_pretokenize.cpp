// bpe_pretokenize.cpp: GPT-2's pre-tokenizing regular expression, written out by hand over
// UTF-8 code points (no regex library):
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// A backtracking engine (Python's `regex`, which GPT-2's encoder.py uses) tries the
// alternatives in order at each position and takes the first that matches; findall then
// goes on after the match. The code below does the same, alternative by alternative.
// Character classes come from unicode_classes.h (\s is Unicode's White_Space).
#include "bpe_tokenizer.h"
#include "unicode_classes.h"

namespace attnviz {

namespace {

// The text as a list of characters with their classes and byte offsets.
struct Chars {
    std::vector<uint32_t> cp;      // code point (or the lone byte, for bytes that are not UTF-8)
    std::vector<UnicodeClass> cls; // its class
    std::vector<size_t> at;        // byte offset; at[n] is the text's length
};

Chars split_chars(const std::string& text) {
    Chars c;
    c.cp.reserve(text.size());
    c.cls.reserve(text.size());
    c.at.reserve(text.size() + 1);
    for (size_t i = 0; i < text.size();) {
        uint32_t cp;
        bool valid;
        const size_t n = decode_utf8(text, i, cp, valid);
        c.cp.push_back(cp);
        c.cls.push_back(valid ? unicode_class(cp) : UnicodeClass::other);
        c.at.push_back(i);
        i += n;
    }
    c.at.push_back(text.size());
    return c;
}

// Length in characters of 's 't 're 've 'm 'll 'd at i (lower case only, as the
// expression is written: "'S" is not a contraction to it), or 0.
size_t contraction_at(const Chars& c, size_t i) {
    const size_t n = c.cp.size();
    if (c.cp[i] != '\'' || i + 1 >= n) return 0;
    const uint32_t a = c.cp[i + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (i + 2 >= n) return 0;
    const uint32_t b = c.cp[i + 2];
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

// End of the run of characters of class `k` starting at i.
size_t run_end(const Chars& c, size_t i, UnicodeClass k) {
    while (i < c.cls.size() && c.cls[i] == k) ++i;
    return i;
}

// ` ?X+` for the class X = k: an optional U+0020 then at least one X. Returns the end, or i.
size_t optional_space_run(const Chars& c, size_t i, UnicodeClass k) {
    size_t j = i;
    if (c.cp[j] == ' ' && j + 1 < c.cp.size() && c.cls[j + 1] == k) ++j; // the space is taken only
    if (c.cls[j] != k) return i;                                          // when X follows
    return run_end(c, j, k);
}

// Length in characters of the match at i.
size_t match_at(const Chars& c, size_t i) {
    if (size_t n = contraction_at(c, i)) return n;
    for (UnicodeClass k : {UnicodeClass::letter, UnicodeClass::number, UnicodeClass::other}) {
        const size_t end = optional_space_run(c, i, k);
        if (end > i) return end - i;
    }
    // Only whitespace is left here: every character is of one of the four classes, and a
    // space before a non-space was taken by one of the ` ?X+` above.
    const size_t end = run_end(c, i, UnicodeClass::space);
    // \s+(?!\S): the whole run if the text ends there; otherwise the run without its last
    // character (which then stays to lead the next word, as " cat" takes its space),
    // provided that leaves at least one.
    if (end == c.cls.size()) return end - i;
    if (end - i >= 2) return end - i - 1;
    return end - i; // \s+: a single whitespace character before a non-space
}

} // namespace

std::vector<ByteRange> pretokenize(const std::string& text) {
    const Chars c = split_chars(text);
    std::vector<ByteRange> out;
    for (size_t i = 0; i < c.cp.size();) {
        const size_t n = match_at(c, i);
        out.push_back({c.at[i], c.at[i + n]});
        i += n;
    }
    return out;
}

} // namespace attnviz
