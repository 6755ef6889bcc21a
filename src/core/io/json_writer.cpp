// json_writer.cpp: see json_writer.h.
#include "json_writer.h"
#include "text_util.h"
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace attnviz {

int append_json_number(std::string& out, float v) {
    if (!std::isfinite(v)) {
        out += "null";
        return 4;
    }
    // to_chars with a precision formats exactly as printf("%.9g") does, several times faster.
    char buf[32];
#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 15000
    // libc++ 14 (the web build's) has no to_chars with a precision: the same text, slower.
    const int n = std::snprintf(buf, sizeof buf, "%.9g", double(v));
#else
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 9);
    int n = int(res.ptr - buf);
#endif
    out.append(buf, size_t(n));
    return n;
}

int append_csv_number(std::string& out, float v) {
    const char* s = nullptr;
    if (std::isnan(v)) s = "nan";
    else if (std::isinf(v)) s = v < 0 ? "-inf" : "inf";
    if (s) {
        out += s;
        return int(std::strlen(s));
    }
    return append_json_number(out, v);
}

std::string json_number(float v) {
    std::string s;
    append_json_number(s, v);
    return s;
}
JsonWriter::JsonWriter(std::ostream& out) : out_(out) { buf_.reserve(1 << 16); }

JsonWriter::~JsonWriter() { flush(); }

void JsonWriter::flush() {
    if (!buf_.empty()) out_.write(buf_.data(), std::streamsize(buf_.size()));
    buf_.clear();
    out_.flush();
}

void JsonWriter::spill() {
    if (buf_.size() >= (1 << 16)) {
        out_.write(buf_.data(), std::streamsize(buf_.size()));
        buf_.clear();
    }
}

void JsonWriter::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) buf_ += ',';
        first_.back() = false;
    }
}

void JsonWriter::begin_object() {
    before_value();
    buf_ += '{';
    first_.push_back(true);
}

void JsonWriter::end_object() {
    first_.pop_back();
    // The top-level object has one key per line; close it on its own line.
    if (first_.empty()) buf_ += '\n';
    buf_ += '}';
    spill();
}

void JsonWriter::begin_array() {
    before_value();
    buf_ += '[';
    first_.push_back(true);
}

void JsonWriter::end_array() {
    first_.pop_back();
    buf_ += ']';
    spill();
}

static void append_escaped(std::string& out, const std::string& s) {
    out += '"';
    for (size_t i = 0; i < s.size(); ++i) {
        const unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x80) {
            // Multi-byte UTF-8 is copied; a byte that is not UTF-8 (a file name in another
            // encoding) becomes U+FFFD, so the output is always valid JSON.
            const size_t n = utf8_sequence_length(s, i);
            if (n == 0) {
                out += "\\ufffd";
            } else {
                out.append(s, i, n);
                i += n - 1;
            }
            continue;
        }
        switch (ch) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
            if (ch < 0x20) {
                char u[8];
                std::snprintf(u, sizeof u, "\\u%04x", ch);
                out += u;
            } else {
                out += char(ch);
            }
        }
    }
    out += '"';
}

void JsonWriter::key(const std::string& k) {
    before_value();
    if (first_.size() == 1) buf_ += "\n  ";
    append_escaped(buf_, k);
    buf_ += ": ";
    after_key_ = true;
}

void JsonWriter::value(float v) {
    before_value();
    append_json_number(buf_, v);
    spill();
}

void JsonWriter::value_int(int64_t v) {
    before_value();
    buf_ += std::to_string(v);
}

void JsonWriter::value_string(const std::string& s) {
    before_value();
    append_escaped(buf_, s);
}

void JsonWriter::value_bool(bool b) {
    before_value();
    buf_ += b ? "true" : "false";
}

void JsonWriter::value_null() {
    before_value();
    buf_ += "null";
}

void JsonWriter::value_shape(const std::vector<int64_t>& shape) {
    begin_array();
    for (int64_t d : shape) value_int(d);
    end_array();
}

void JsonWriter::array(const float* data, const std::vector<int64_t>& shape) {
    if (shape.empty()) {
        value(*data);
        return;
    }
    begin_array();
    if (shape.size() == 1) {
        // The innermost row: written straight into the buffer, the hot loop of a big trace.
        for (int64_t i = 0; i < shape[0]; ++i) {
            if (i > 0) buf_ += ',';
            append_json_number(buf_, data[i]);
            if ((i & 1023) == 1023) spill();
        }
    } else {
        std::vector<int64_t> inner(shape.begin() + 1, shape.end());
        int64_t stride = 1;
        for (int64_t d : inner) stride *= d;
        for (int64_t i = 0; i < shape[0]; ++i) array(data + i * stride, inner);
    }
    end_array();
}

} // namespace attnviz
