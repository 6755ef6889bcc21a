// unicode_classes.h: the three character classes GPT-2's pre-tokenizing expression asks
// about, \p{L}, \p{N} and \s, for any code point, from a generated table of ranges
// (unicode_tables.inc, written by scripts/gen_unicode_tables.js).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace attnviz {

// `other` is everything else: punctuation, symbols, marks, emoji, controls, unassigned.
enum class UnicodeClass : uint8_t { other, letter, number, space };

struct UnicodeRange {
    uint32_t first, last; // inclusive
    UnicodeClass cls;
};

// \p{L} -> letter, \p{N} -> number, White_Space -> space, anything else -> other.
UnicodeClass unicode_class(uint32_t code_point);
// The Unicode version the table was generated from, e.g. "17.0".
const char* unicode_tables_version();

// Decodes one UTF-8 character at s[i]: sets `code_point` and returns its length (1 to 4).
// A byte that does not start a valid sequence is returned alone (length 1) with
// `valid` false; the tokenizer then treats it as a character of class `other`, so any
// bytes survive encode and decode.
size_t decode_utf8(const std::string& s, size_t i, uint32_t& code_point, bool& valid);

} // namespace attnviz
