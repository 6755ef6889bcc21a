// format.cpp: see format.h.
#include "format.h"
#include <cmath>
#include <cstdio>
#include <sstream>

namespace attnviz {

namespace {

const char* minus = "\xE2\x88\x92"; // U+2212

// Replaces a leading '-' with U+2212.
std::string with_minus(const char* s) {
    if (s[0] == '-') return std::string(minus) + (s + 1);
    return s;
}

} // namespace

std::string format_value(float v, int decimals) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v < 0 ? std::string(minus) + "\xE2\x88\x9E" : "\xE2\x88\x9E";
    if (v == 0.f) return "0";
    char buf[64];
    // Exact whole numbers are printed whole: a softmax weight of exactly 1 reads "1".
    if (v == std::round(v) && std::fabs(v) < 1e6f) {
        std::snprintf(buf, sizeof buf, "%.0f", double(v));
        return with_minus(buf);
    }
    // A number that would round to zero is printed with one significant digit ("4e−4"),
    // so that only an exact zero reads "0".
    if (std::fabs(v) < 0.5f * std::pow(10.f, float(-decimals))) {
        if (decimals <= 1) return "\xE2\x89\x88" "0"; // "≈0": short, and never read as an exact zero
        std::snprintf(buf, sizeof buf, "%.0e", double(v));
        std::string s = buf; // "4e-04"
        const size_t e = s.find('e');
        std::string mant = s.substr(0, e), ex = s.substr(e + 1);
        const bool neg_ex = ex[0] == '-';
        ex = ex.substr(1);
        while (ex.size() > 1 && ex[0] == '0') ex.erase(ex.begin());
        return with_minus(mant.c_str()) + "e" + (neg_ex ? minus : "") + ex;
    }
    std::snprintf(buf, sizeof buf, "%.*f", decimals, double(v));
    return with_minus(buf);
}

std::string format_fitting(float v, float width, ImFont* font) {
    auto fits = [&](const std::string& s) { return font->CalcTextSizeA(font->FontSize, 1e9f, 0.f, s.c_str()).x <= width; };
    if (std::isnan(v) || std::isinf(v) || v == 0.f) {
        std::string s = format_value(v, 0);
        return fits(s) ? s : "";
    }
    // At least one decimal: "0" and "−0" are kept for exact zeros, so a rounded small
    // number is never printed as one. Numbers of 10 or more may lose their decimals.
    for (int d = 3; d >= (std::fabs(v) >= 9.95f ? 0 : 1); --d) {
        std::string s = format_value(v, d);
        if (fits(s)) return s;
    }
    return "";
}

std::string format_exact(float v) {
    if (std::isnan(v) || std::isinf(v) || v == 0.f) return format_value(v, 0);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return with_minus(buf);
}

std::string format_diff(float d) {
    if (std::isnan(d)) return "NaN";
    if (d == 0.f) return "0.0 (exactly)";
    // Every digit of the float (9 significant), so a class can compare with PyTorch's print.
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", double(d));
    return with_minus(buf);
}

std::string format_with(double v, const char* printf_format) {
    if (std::isnan(v)) return "NaN";
    char buf[32];
    std::snprintf(buf, sizeof buf, printf_format, v);
    return buf;
}

std::string format_count(int64_t n) {
    std::string digits = std::to_string(n), grouped;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
        grouped += digits[i];
    }
    if (n < 10000) return grouped;
    const char* unit = "K";
    double v = double(n) / 1e3;
    if (n >= 1000000000) unit = "B", v = double(n) / 1e9;
    else if (n >= 1000000) unit = "M", v = double(n) / 1e6;
    char buf[64];
    std::snprintf(buf, sizeof buf, " (about %.1f%s)", v, unit);
    return grouped + buf; // "16,777,216 (about 16.8M)"
}

std::string format_shape(const char* symbols, const Config& c) {
    // Each symbol in the list becomes its number: B 1, T, C, H, head_dim, 3C.
    std::string s(symbols), numbers = "(";
    std::string inner = s.substr(1, s.size() - 2);
    std::stringstream ss(inner);
    std::string item;
    bool first = true;
    while (std::getline(ss, item, ',')) {
        while (!item.empty() && item.front() == ' ') item.erase(item.begin());
        int64_t n = -1;
        if (item == "B") n = 1;
        else if (item == "T") n = c.seq_len;
        else if (item == "C") n = c.n_embd;
        else if (item == "3C") n = 3 * int64_t(c.n_embd);
        else if (item == "H") n = c.n_head;
        else if (item == "head_dim") n = c.head_dim();
        numbers += (first ? "" : ", ") + (n >= 0 ? std::to_string(n) : item);
        first = false;
    }
    return s + " = " + numbers + ")";
}

} // namespace attnviz
