// formats.cpp: numbers as text, the streaming JSON writer, .npy/.csv files and the trace
// command's JSON; see formats.h.
#include "formats.h"
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnviz {

// =======================================================================================
// [SECTION] Numbers as text

int append_json_number(std::string& out, float v) {
    if (!std::isfinite(v)) {
        out += "null";
        return 4;
    }
    // to_chars with a precision formats exactly as printf("%.9g") does, several times faster.
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 9);
    int n = int(res.ptr - buf);
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

std::string python_float_repr(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
    // Shortest round-trip digits, as d.ddd e±X; then laid out the way Python's repr does:
    // positional when the decimal exponent is in [-5, 16), else d.ddde±XX.
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
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

// =======================================================================================
// [SECTION] JsonWriter

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

// =======================================================================================
// [SECTION] Tensors by name

// In the order of the shape walk.
const std::vector<TensorName> tensor_names_in_walk_order = {
    TensorName::x,     TensorName::qkv,   TensorName::q,      TensorName::k,
    TensorName::v,     TensorName::scores, TensorName::scaled, TensorName::masked,
    TensorName::probs, TensorName::heads, TensorName::concat, TensorName::y};

const std::vector<TensorName>& all_tensor_names() { return tensor_names_in_walk_order; }

const char* to_string(TensorName n) {
    switch (n) {
    case TensorName::x: return "x";
    case TensorName::qkv: return "qkv";
    case TensorName::q: return "q";
    case TensorName::k: return "k";
    case TensorName::v: return "v";
    case TensorName::scores: return "scores";
    case TensorName::scaled: return "scaled";
    case TensorName::masked: return "masked";
    case TensorName::probs: return "probs";
    case TensorName::heads: return "heads";
    case TensorName::concat: return "concat";
    case TensorName::y: return "y";
    }
    return "?";
}

const char* reference_key(TensorName n) {
    switch (n) {
    case TensorName::x: return "x";
    case TensorName::qkv: return "qkv";
    case TensorName::q: return "q";
    case TensorName::k: return "k";
    case TensorName::v: return "v";
    case TensorName::scores: return "raw_scores";
    case TensorName::scaled: return "scaled_scores";
    case TensorName::masked: return "masked_scores";
    case TensorName::probs: return "softmax_probs";
    case TensorName::heads: return "head_outputs";
    case TensorName::concat: return "y_concat_before_proj";
    case TensorName::y: return "y1";
    }
    return "?";
}

std::string tensor_name_list() {
    const auto& names = all_tensor_names();
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) {
        if (i > 0) s += (i + 1 == names.size()) ? " or " : ", ";
        s += to_string(names[i]);
    }
    return s;
}

bool parse_tensor_name(const std::string& s, TensorName& out, std::string& error) {
    for (TensorName n : all_tensor_names())
        if (s == to_string(n)) {
            out = n;
            return true;
        }
    std::string shown = s.size() > 40 ? s.substr(0, 40) + "..." : s;
    error = "tensor '" + shown + "' is not known; use " + tensor_name_list();
    return false;
}

// The shape as the lesson writes it, e.g. "(H, T, head_dim)".
static const char* symbolic_shape(TensorName n) {
    switch (n) {
    case TensorName::x: return "(T, C)";
    case TensorName::qkv: return "(T, 3C)";
    case TensorName::q:
    case TensorName::k:
    case TensorName::v:
    case TensorName::heads: return "(H, T, head_dim)";
    case TensorName::scores:
    case TensorName::scaled:
    case TensorName::masked:
    case TensorName::probs: return "(H, T, T)";
    case TensorName::concat:
    case TensorName::y: return "(T, C)";
    }
    return "()";
}

TensorView tensor_by_name(const Trace& tr, TensorName name) {
    TensorView t;
    t.trace = &tr;
    t.name = name;
    switch (name) {
    case TensorName::x:
    case TensorName::concat:
    case TensorName::y: t.rows = tr.T; t.cols = tr.C; break;
    case TensorName::qkv: t.rows = tr.T; t.cols = 3 * tr.C; break;
    case TensorName::q:
    case TensorName::k:
    case TensorName::v:
    case TensorName::heads: t.per_head = true; t.rows = tr.T; t.cols = tr.head_dim; break;
    case TensorName::scores:
    case TensorName::scaled:
    case TensorName::masked:
    case TensorName::probs: t.per_head = true; t.rows = tr.T; t.cols = tr.T; break;
    }
    t.blocks = t.per_head ? tr.H : 1;
    if (t.per_head) t.shape = {tr.H, tr.T, t.cols};
    else t.shape = {tr.T, t.cols};
    return t;
}

const float* TensorView::block(int b, Mat& scratch) const {
    const Trace& tr = *trace;
    switch (name) {
    case TensorName::x: return tr.x.data();
    case TensorName::qkv: return tr.qkv.data();
    case TensorName::q: return tr.q[size_t(b)].data();
    case TensorName::k: return tr.k[size_t(b)].data();
    case TensorName::v: return tr.v[size_t(b)].data();
    case TensorName::scores: return tr.raw_scores[size_t(b)].data();
    case TensorName::scaled: tr.fill_scaled(b, scratch); return scratch.data();
    case TensorName::masked: tr.fill_masked(b, scratch); return scratch.data();
    case TensorName::probs: return tr.probs[size_t(b)].data();
    case TensorName::heads: return tr.heads[size_t(b)].data();
    case TensorName::concat: return tr.concat.data();
    case TensorName::y: return tr.y.data();
    }
    return nullptr;
}

std::vector<float> TensorView::data() const {
    std::vector<float> all;
    all.reserve(size_t(blocks) * size_t(rows) * size_t(cols));
    Mat scratch;
    for (int b = 0; b < blocks; ++b) {
        const float* p = block(b, scratch);
        all.insert(all.end(), p, p + int64_t(rows) * cols);
    }
    return all;
}

// =======================================================================================
// [SECTION] Files

// A file written under a temporary name next to its final path, renamed into place by
// commit(); dropped (and the temporary removed) on any failure.
namespace {
class AtomicFile {
public:
    explicit AtomicFile(const std::string& path) : path_(path) {}
    ~AtomicFile() { abandon(); }

    bool open(std::string& error) {
        size_t slash = path_.rfind('/');
        std::string dir = slash == std::string::npos ? "." : path_.substr(0, slash + 1);
        std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
        if (base.empty()) return fail("it names a directory, not a file", error);
        tmp_ = (slash == std::string::npos ? std::string() : dir) + "." + base + ".tmp.XXXXXX";
        std::vector<char> name(tmp_.begin(), tmp_.end());
        name.push_back('\0');
        int fd = mkstemp(name.data());
        if (fd < 0) {
            tmp_.clear();
            return fail(std::strerror(errno), error);
        }
        tmp_ = name.data();
        // mkstemp makes the file private (0600); give it the usual 0666 minus the umask.
        mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask);
        file_ = fdopen(fd, "wb");
        if (!file_) {
            ::close(fd);
            return fail(std::strerror(errno), error);
        }
        std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
        return true;
    }

    bool write(const void* data, size_t n) {
        if (!ok_ || n == 0) return ok_;
        if (std::fwrite(data, 1, n, file_) != n) {
            ok_ = false;
            errno_ = errno;
        }
        return ok_;
    }
    bool write(const std::string& s) { return write(s.data(), s.size()); }

    bool commit(std::string& error) {
        if (ok_ && std::fflush(file_) != 0) { ok_ = false; errno_ = errno; }
        if (ok_ && fsync(fileno(file_)) != 0 && errno != EINVAL) { ok_ = false; errno_ = errno; }
        int rc = std::fclose(file_);
        file_ = nullptr;
        if (ok_ && rc != 0) { ok_ = false; errno_ = errno; }
        if (!ok_) return fail(std::strerror(errno_ ? errno_ : EIO), error);
        if (std::rename(tmp_.c_str(), path_.c_str()) != 0) return fail(std::strerror(errno), error);
        tmp_.clear();
        return true;
    }

private:
    std::string path_, tmp_;
    FILE* file_ = nullptr;
    bool ok_ = true;
    int errno_ = 0;

    void abandon() {
        if (file_) std::fclose(file_);
        file_ = nullptr;
        if (!tmp_.empty()) std::remove(tmp_.c_str());
        tmp_.clear();
    }
    bool fail(const char* cause, std::string& error) {
        abandon();
        error = "cannot write '" + path_ + "': " + cause + "; give a file path in a writable directory";
        return false;
    }
};

// A tensor as a sequence of row-major blocks, from a TensorView or from plain data.
struct BlockSource {
    std::vector<int64_t> shape;
    int blocks = 1;
    int64_t rows = 0, cols = 0;
    const TensorView* view = nullptr;
    const float* data = nullptr;
    std::string title;       // first CSV comment line
    std::string block_label; // "head" for per-head tensors

    const float* block(int b, Mat& scratch) const {
        return view ? view->block(b, scratch) : data + int64_t(b) * rows * cols;
    }
};

BlockSource source_of(const TensorView& t) {
    BlockSource s;
    s.shape = t.shape;
    s.blocks = t.blocks;
    s.rows = t.rows;
    s.cols = t.cols;
    s.view = &t;
    s.title = std::string("attnviz ") + to_string(t.name) + ", shape " + symbolic_shape(t.name) +
              " = " + python_tuple(t.shape);
    if (t.per_head) s.block_label = "head";
    return s;
}

// Plain data: the leading dimensions of a 3-D or higher shape become blocks.
BlockSource source_of(const float* data, const std::vector<int64_t>& shape) {
    BlockSource s;
    s.shape = shape;
    s.data = data;
    s.title = "attnviz tensor, shape " + python_tuple(shape);
    if (shape.empty()) {
        s.rows = s.cols = 1;
    } else if (shape.size() == 1) {
        s.rows = 1;
        s.cols = shape[0];
    } else {
        s.cols = shape.back();
        s.rows = shape[shape.size() - 2];
        int64_t blocks = 1;
        for (size_t i = 0; i + 2 < shape.size(); ++i) blocks *= shape[i];
        s.blocks = int(blocks);
        if (shape.size() > 2) s.block_label = "block";
    }
    return s;
}

bool write_npy_blocks(const std::string& path, const BlockSource& s, std::string& error) {
    AtomicFile f(path);
    if (!f.open(error)) return false;
    f.write(npy_header(s.shape));
    Mat scratch;
    for (int b = 0; b < s.blocks; ++b)
        f.write(s.block(b, scratch), size_t(s.rows * s.cols) * sizeof(float)); // x86-64: little-endian
    return f.commit(error);
}

bool write_csv_blocks(const std::string& path, const BlockSource& s, std::string& error) {
    AtomicFile f(path);
    if (!f.open(error)) return false;
    std::string line = "# " + s.title + "\n";
    Mat scratch;
    for (int b = 0; b < s.blocks; ++b) {
        if (!s.block_label.empty()) line += "# " + s.block_label + " " + std::to_string(b) + "\n";
        const float* p = s.block(b, scratch);
        for (int64_t i = 0; i < s.rows; ++i) {
            for (int64_t j = 0; j < s.cols; ++j) {
                if (j > 0) line += ',';
                append_csv_number(line, p[i * s.cols + j]);
            }
            line += '\n';
            if (line.size() >= (1 << 16)) {
                f.write(line);
                line.clear();
            }
        }
    }
    f.write(line);
    return f.commit(error);
}
} // namespace

std::string npy_header(const std::vector<int64_t>& shape) {
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + python_tuple(shape) + ", }";
    // magic (6) + version (2) + header length (2) + dict + padding + '\n', a multiple of 64.
    size_t total = 10 + dict.size() + 1;
    size_t padded = (total + 63) / 64 * 64;
    dict += std::string(padded - total, ' ') + "\n";
    std::string h = "\x93NUMPY";
    h += char(1);
    h += char(0);
    uint16_t len = uint16_t(dict.size());
    h += char(len & 0xff);
    h += char(len >> 8);
    return h + dict;
}

bool write_npy(const std::string& path, const TensorView& t, std::string& error) {
    return write_npy_blocks(path, source_of(t), error);
}

bool write_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape,
               std::string& error) {
    return write_npy_blocks(path, source_of(data, shape), error);
}

bool write_csv(const std::string& path, const TensorView& t, std::string& error) {
    return write_csv_blocks(path, source_of(t), error);
}

bool write_csv(const std::string& path, const float* data, const std::vector<int64_t>& shape,
               std::string& error) {
    return write_csv_blocks(path, source_of(data, shape), error);
}

static bool ends_with_nocase(const std::string& s, const char* suffix) {
    size_t n = std::strlen(suffix);
    if (s.size() < n) return false;
    for (size_t i = 0; i < n; ++i)
        if (std::tolower((unsigned char)s[s.size() - n + i]) != suffix[i]) return false;
    return true;
}

bool check_export_path(const std::string& path, std::string& error) {
    if (ends_with_nocase(path, ".npy") || ends_with_nocase(path, ".csv")) return true;
    std::string shown = path.size() > 60 ? "..." + path.substr(path.size() - 60) : path;
    error = "output file '" + shown + "' has an unknown extension; give a name ending in .npy or .csv";
    return false;
}

bool export_tensor(const std::string& path, const TensorView& t, std::string& error) {
    if (!check_export_path(path, error)) return false;
    if (ends_with_nocase(path, ".npy")) return write_npy(path, t, error);
    return write_csv(path, t, error);
}

// =======================================================================================
// [SECTION] The trace command's JSON

// One tensor of the trace with B = 1 in front: [1][T][n] or [1][H][T][n].
static void write_with_batch(JsonWriter& w, const TensorView& t) {
    Mat scratch;
    w.begin_array(); // B
    if (t.per_head) {
        w.begin_array(); // H
        for (int h = 0; h < t.blocks; ++h) w.array(t.block(h, scratch), {t.rows, t.cols});
        w.end_array();
    } else {
        w.array(t.block(0, scratch), {t.rows, t.cols});
    }
    w.end_array();
}

static std::vector<int64_t> with_batch(std::vector<int64_t> shape) {
    shape.insert(shape.begin(), 1);
    return shape;
}

void write_trace_json(std::ostream& out, const Experiment& e, const TraceJsonRequest& r, Trace& scratch) {
    const Config& c = e.config;
    const int T = c.seq_len, C = c.n_embd;
    forward(c, e.weights, e.x, r.kernel, scratch);

    JsonWriter w(out);
    w.begin_object();
    // The run, as the reference files describe it.
    w.key("seed"); w.value_int(int64_t(c.seed));
    w.key("n_embd"); w.value_int(C);
    w.key("n_head"); w.value_int(c.n_head);
    w.key("B"); w.value_int(1);
    w.key("T"); w.value_int(T);
    if (r.text) {
        w.key("text"); w.value_string(*r.text);
        w.key("tokens");
        w.begin_array();
        for (const std::string& t : r.tokens) w.value_string(t);
        w.end_array();
    }
    if (r.perturb) { w.key("perturbed_position"); w.value_int(*r.perturb); }
    w.key("head_dim"); w.value_int(c.head_dim());
    w.key("scale_float32"); w.value(scratch.scale);
    w.key("mask"); w.value_string(to_string(c.mask));
    w.key("scale"); w.value_string(to_string(c.scale));
    w.key("kernel"); w.value_string(to_string(r.kernel));
    w.key("param_count"); w.value_int(int64_t(e.weights.w_qkv.size() + e.weights.w_proj.size() +
                                             e.weights.b_qkv.size() + e.weights.b_proj.size()));

    // Where the weights came from, when a file gave them.
    if (r.weights) {
        const LoadedWeights& lw = *r.weights;
        auto name_or_null = [&w](const std::string& n) {
            if (n.empty()) w.value_null();
            else w.value_string(n);
        };
        w.key("weights");
        w.begin_object();
        w.key("file"); w.value_string(r.weights_path);
        w.key("scheme"); w.value_string(scheme_name(lw));
        w.key("description"); w.value_string(lw.description);
        w.key("names");
        w.begin_object();
        w.key("qkv"); name_or_null(lw.qkv_name);
        w.key("proj"); name_or_null(lw.proj_name);
        w.key("qkv_bias"); name_or_null(lw.qkv_bias_name);
        w.key("proj_bias"); name_or_null(lw.proj_bias_name);
        w.end_object();
        w.key("layer"); w.value_int(lw.layer);
        w.key("layers");
        w.begin_array();
        for (int l : lw.layers) w.value_int(l);
        w.end_array();
        w.key("transposed"); w.value_bool(lw.conv1d);
        w.key("n_head_from_file"); w.value_bool(lw.n_head_from_file);
        w.key("has_bias"); w.value_bool(lw.weights.has_bias());
        w.end_object();
    }

    // The weights, [out][in] as torch stores them, and the input.
    w.key("qkv_weight"); w.array(e.weights.w_qkv.data(), {3 * C, C});
    w.key("proj_weight"); w.array(e.weights.w_proj.data(), {C, C});
    if (e.weights.b_qkv.size() > 0) { w.key("qkv_bias"); w.array(e.weights.b_qkv.data(), {3 * C}); }
    if (e.weights.b_proj.size() > 0) { w.key("proj_bias"); w.array(e.weights.b_proj.data(), {C}); }
    w.key("x"); w.array(e.x.data(), {1, T, C});
    Mat x2;
    if (r.perturb) {
        Vec row = perturbed_row(e, *r.perturb, 1.f);
        x2 = perturbed_input(e, *r.perturb, 1.f);
        w.key("perturbed_row"); w.array(row.data(), {C});
        w.key("x2"); w.array(x2.data(), {1, T, C});
    }
    w.key("y1"); w.array(scratch.y.data(), {1, T, C});

    // Every intermediate of the shape walk for x.
    if (r.intermediates) {
        const TensorName walk[] = {TensorName::qkv,    TensorName::q,      TensorName::k,
                                   TensorName::v,      TensorName::scores, TensorName::scaled,
                                   TensorName::masked, TensorName::probs,  TensorName::heads,
                                   TensorName::concat};
        w.key("intermediates_for_x");
        w.begin_object();
        w.key("shapes");
        w.begin_object();
        for (TensorName n : walk) {
            w.key(reference_key(n));
            w.value_shape(with_batch(tensor_by_name(scratch, n).shape));
        }
        w.end_object();
        for (TensorName n : walk) {
            w.key(reference_key(n));
            write_with_batch(w, tensor_by_name(scratch, n));
        }
        w.end_object();
    }

    // The causality test: rerun on x2 in the same buffers and compare with y1.
    if (r.perturb) {
        Mat y1 = scratch.y;
        forward(c, e.weights, x2, r.kernel, scratch);
        w.key("y2"); w.array(scratch.y.data(), {1, T, C});
        std::vector<float> diff = max_abs_diff_per_position(y1, scratch.y);
        w.key("max_abs_diff_per_position"); w.array(diff.data(), {int64_t(diff.size())});
    }
    w.end_object();
    w.flush();
}

} // namespace attnviz
