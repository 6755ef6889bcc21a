// unicode_classes.cpp: lookups in the generated range table; see unicode_classes.h.
#include "unicode_classes.h"
#include "text_util.h"
#include <algorithm>
#include <array>

namespace attnviz {

#include "unicode_tables.inc"

namespace {

// ASCII is most of what a class types, so it gets a direct table built from the ranges.
std::array<UnicodeClass, 128> make_ascii_table() {
    std::array<UnicodeClass, 128> t{};
    for (uint32_t cp = 0; cp < 128; ++cp) {
        for (const UnicodeRange& r : unicode_ranges)
            if (cp >= r.first && cp <= r.last) t[cp] = r.cls;
    }
    return t;
}

const std::array<UnicodeClass, 128> ascii_classes = make_ascii_table();

} // namespace

UnicodeClass unicode_class(uint32_t code_point) {
    if (code_point < 128) return ascii_classes[code_point];
    // The last range whose first code point is <= code_point, if it reaches that far.
    const UnicodeRange* end = std::end(unicode_ranges);
    const UnicodeRange* it = std::upper_bound(std::begin(unicode_ranges), end, code_point,
                                              [](uint32_t cp, const UnicodeRange& r) { return cp < r.first; });
    if (it == std::begin(unicode_ranges)) return UnicodeClass::other;
    --it;
    return code_point <= it->last ? it->cls : UnicodeClass::other;
}

const char* unicode_tables_version() { return unicode_version; }

size_t decode_utf8(const std::string& s, size_t i, uint32_t& code_point, bool& valid) {
    const auto byte = [&](size_t k) { return uint32_t(static_cast<unsigned char>(s[k])); };
    const size_t n = utf8_sequence_length(s, i);
    valid = n > 0;
    if (n == 0) {
        code_point = byte(i);
        return 1;
    }
    switch (n) {
    case 1: code_point = byte(i); break;
    case 2: code_point = ((byte(i) & 0x1F) << 6) | (byte(i + 1) & 0x3F); break;
    case 3: code_point = ((byte(i) & 0x0F) << 12) | ((byte(i + 1) & 0x3F) << 6) | (byte(i + 2) & 0x3F); break;
    default:
        code_point = ((byte(i) & 0x07) << 18) | ((byte(i + 1) & 0x3F) << 12) | ((byte(i + 2) & 0x3F) << 6) |
                     (byte(i + 3) & 0x3F);
    }
    return n;
}

} // namespace attnviz
