// python_text.cpp: see python_text.h.
#include "python_text.h"
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attnviz {

std::string python_float_repr(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
    // Shortest round-trip digits, as d.ddd e±X; then laid out the way Python's repr does:
    // positional when the decimal exponent is in [-5, 16), else d.ddde±XX.
    char buf[64];
#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 15000
    // libc++ 14 (the web build's) has no floating-point to_chars: the fewest digits that
    // read back as v, each count correctly rounded by printf, which is what to_chars gives.
    for (int digits = 0; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*e", digits, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    std::string sci(buf);
#else
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
#endif
    std::string sign;
    if (sci[0] == '-') {
        sign = "-";
        sci.erase(0, 1);
    }
    size_t e_at = sci.find('e');
    int exp10 = std::atoi(sci.c_str() + e_at + 1);
    std::string digits;
    for (size_t i = 0; i < e_at; ++i)
        if (sci[i] != '.') digits += sci[i];
    int decpt = exp10 + 1; // value = 0.digits * 10^decpt
    std::string s;
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            s = "0." + std::string(size_t(-decpt), '0') + digits;
        } else if (size_t(decpt) >= digits.size()) {
            s = digits + std::string(size_t(decpt) - digits.size(), '0') + ".0";
        } else {
            s = digits.substr(0, size_t(decpt)) + "." + digits.substr(size_t(decpt));
        }
    } else {
        s = digits.substr(0, 1);
        if (digits.size() > 1) s += "." + digits.substr(1);
        char e[16];
        std::snprintf(e, sizeof e, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
        s += e;
    }
    return sign + s;
}

double python_round(double v, int ndigits) {
    if (!std::isfinite(v) || v == 0) return v;
    // glibc's printf rounds the exact binary value correctly (ties to even), as Python's
    // round() does through dtoa mode 3; reading the text back gives the nearest double.
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", ndigits, v);
    return std::strtod(buf, nullptr);
}

std::string python_tuple(const std::vector<int64_t>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}
} // namespace attnviz
