// safetensors.cpp: see safetensors.h. The format itself: dtypes, the header's checks and
// decoding a tensor's bytes. Reading files (whole or mapped) is in safetensors_files.cpp,
// writing them in safetensors_write.cpp. Every check happens before the allocation or read
// it protects; every error is one sentence that starts with the file's name.
#include "safetensors.h"
#include "safetensors_detail.h"
#include "text_util.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

namespace attnviz {

using nlohmann::json;
using detail::bytes_text;

// ---------------------------------------------------------------------------------------
// [SECTION] small helpers
// ---------------------------------------------------------------------------------------

std::string detail::bytes_text(uint64_t n) {
    std::ostringstream o;
    if (n >= (uint64_t(1) << 30)) {
        o.precision(3);
        o << double(n) / double(uint64_t(1) << 30) << " GiB";
    } else if (n >= (uint64_t(1) << 20)) {
        o.precision(3);
        o << double(n) / double(uint64_t(1) << 20) << " MiB";
    } else {
        o << n << (n == 1 ? " byte" : " bytes");
    }
    return o.str();
}

static std::string shape_text(const std::vector<uint64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

static uint64_t read_le64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

// ---------------------------------------------------------------------------------------
// [SECTION] dtypes
// ---------------------------------------------------------------------------------------

int dtype_bytes(const std::string& d) {
    if (d == "F64" || d == "I64" || d == "U64") return 8;
    if (d == "F32" || d == "I32" || d == "U32") return 4;
    if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
    if (d == "BOOL" || d == "U8" || d == "I8" || d == "F8_E5M2" || d == "F8_E4M3" || d == "F8_E8M0") return 1;
    return 0;
}

bool dtype_supported(const std::string& d) { return d == "F32" || d == "F16" || d == "BF16"; }

const char* supported_dtypes() { return "F32, F16 or BF16"; }

uint64_t TensorInfo::numel() const {
    uint64_t n = 1;
    for (uint64_t d : shape)
        if (__builtin_mul_overflow(n, d, &n)) return UINT64_MAX;
    return n;
}

float f16_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    uint32_t bits;
    if (exponent == 0) {
        // zero or subnormal: mantissa * 2^-24, exact in float32
        float v = std::ldexp(float(mantissa), -24);
        return sign ? -v : v;
    } else if (exponent == 31) {
        bits = sign | 0x7f800000u | (mantissa << 13); // inf, or NaN keeping its payload
    } else {
        bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

float bf16_to_f32(uint16_t b) {
    uint32_t bits = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// ---------------------------------------------------------------------------------------
// [SECTION] header
// ---------------------------------------------------------------------------------------

const TensorInfo* SafetensorsFile::find(const std::string& tensor_name) const {
    for (const TensorInfo& t : tensors)
        if (t.name == tensor_name) return &t;
    return nullptr;
}

const std::string* SafetensorsFile::meta(const std::string& key) const {
    for (const auto& kv : metadata)
        if (kv.first == key) return &kv.second;
    return nullptr;
}

bool parse_header_length(const uint8_t* first8, uint64_t file_size, const std::string& name, uint64_t& n,
                         std::string& error) {
    if (file_size == 0) return fail(error, name, "the file is empty; give a .safetensors weights file");
    if (file_size < 8)
        return fail(error, name,
                    "the file is only " + bytes_text(file_size) +
                        " long, too short for a safetensors file (which starts with an 8-byte header length)");
    n = read_le64(first8);
    if (n <= max_safetensors_header_bytes && n <= file_size - 8) return true;

    bool text = true;
    for (int i = 0; i < 8; ++i) {
        uint8_t c = first8[i];
        text = text && ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t');
    }
    if (text)
        return fail(error, name,
                    "the file starts with text (" + quote(std::string((const char*)first8, 8)) +
                        "), not with a safetensors header length; it is not a safetensors file");
    if (n > max_safetensors_header_bytes)
        return fail(error, name,
                    "the header length is " + std::to_string(n) + " bytes, more than the " +
                        std::to_string(max_safetensors_header_bytes) +
                        " a safetensors header may have; the file is damaged or not a safetensors file");
    return fail(error, name,
                "the header length is " + std::to_string(n) + " bytes but only " + std::to_string(file_size - 8) +
                    " bytes follow it; the file is truncated or not a safetensors file");
}

static const char* json_kind(const json& j) {
    switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "a list";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::binary: return "binary data";
    case json::value_t::discarded: return "nothing";
    default: return "a number";
    }
}

// A whole number >= 0 that fits in u64 (nlohmann stores those as number_unsigned).
static bool is_count(const json& j) { return j.is_number_unsigned(); }

static bool parse_entry(const std::string& key, const json& v, uint64_t data_bytes, const std::string& name,
                        TensorInfo& t, std::string& error) {
    const std::string what = "tensor " + quote(key);
    if (!v.is_object())
        return fail(error, name, what + " in the header is " + json_kind(v) + ", not an object with dtype, shape and data_offsets");
    auto dtype = v.find("dtype");
    auto shape = v.find("shape");
    auto offsets = v.find("data_offsets");
    if (dtype == v.end()) return fail(error, name, what + " has no \"dtype\" in the header; the file is damaged");
    if (shape == v.end()) return fail(error, name, what + " has no \"shape\" in the header; the file is damaged");
    if (offsets == v.end())
        return fail(error, name, what + " has no \"data_offsets\" in the header; the file is damaged");
    if (!dtype->is_string())
        return fail(error, name, what + " has a \"dtype\" that is " + json_kind(*dtype) + ", not a name like \"F32\"");
    if (!shape->is_array())
        return fail(error, name, what + " has a \"shape\" that is " + json_kind(*shape) + ", not a list of sizes");
    if (!offsets->is_array() || offsets->size() != 2 || !is_count((*offsets)[0]) || !is_count((*offsets)[1]))
        return fail(error, name, what + " has \"data_offsets\" that are not two whole numbers [begin, end]");

    t.name = key;
    t.dtype = dtype->get<std::string>();
    t.shape.clear();
    for (const json& d : *shape) {
        if (!is_count(d))
            return fail(error, name, what + " has a \"shape\" entry that is not a whole number >= 0");
        t.shape.push_back(d.get<uint64_t>());
    }
    t.begin = (*offsets)[0].get<uint64_t>();
    t.end = (*offsets)[1].get<uint64_t>();
    if (t.begin > t.end)
        return fail(error, name,
                    what + " has data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                        "] that end before they begin; the file is damaged");
    if (t.end > data_bytes)
        return fail(error, name,
                    what + " has data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                        "] past the end of the " + std::to_string(data_bytes) +
                        "-byte data buffer; the file is truncated or damaged");

    // shape x dtype size must be exactly the byte range (checked without overflow).
    uint64_t numel = 1;
    for (uint64_t d : t.shape)
        if (__builtin_mul_overflow(numel, d, &numel))
            return fail(error, name, what + " has shape " + shape_text(t.shape) + ", too many elements to be real");
    const int elem = dtype_bytes(t.dtype);
    uint64_t need = 0;
    if (elem > 0 && (__builtin_mul_overflow(numel, uint64_t(elem), &need) || need != t.end - t.begin))
        return fail(error, name,
                    what + " has shape " + shape_text(t.shape) + " of " + t.dtype + " (" +
                        (need ? std::to_string(need) : std::string("too many")) + " bytes) but data_offsets [" +
                        std::to_string(t.begin) + ", " + std::to_string(t.end) + "] hold " +
                        std::to_string(t.end - t.begin) + " bytes; the file is damaged");
    return true;
}

bool parse_header(const char* header, uint64_t n, uint64_t file_size, const std::string& name,
                  SafetensorsFile& out, std::string& error) {
    out = SafetensorsFile{};
    out.name = name;
    out.header_bytes = n;
    if (n > max_safetensors_header_bytes || file_size < 8 || n > file_size - 8)
        return fail(error, name, "the header length " + std::to_string(n) + " does not fit in the file; it is damaged");
    out.data_bytes = file_size - 8 - n;
    if (n == 0) return fail(error, name, "the header is empty; it is not a safetensors file");

    json j;
    try {
        j = json::parse(header, header + n);
    } catch (const json::parse_error& e) {
        return fail(error, name,
                    "the header is not valid JSON (at byte " + std::to_string(8 + e.byte) +
                        " of the file); it is damaged or not a safetensors file");
    } catch (const json::exception&) {
        return fail(error, name, "the header is not valid JSON; it is damaged or not a safetensors file");
    }
    if (!j.is_object())
        return fail(error, name,
                    std::string("the header is ") + json_kind(j) +
                        ", not a JSON object of tensors; it is not a safetensors file");

    for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key() == "__metadata__") {
            const json& m = it.value();
            if (!m.is_object())
                return fail(error, name, std::string("__metadata__ is ") + json_kind(m) + ", not an object of strings");
            for (auto mi = m.begin(); mi != m.end(); ++mi) {
                if (!mi.value().is_string())
                    return fail(error, name,
                                "__metadata__ entry " + quote(mi.key()) + " is " + json_kind(mi.value()) +
                                    ", not a string");
                out.metadata.emplace_back(mi.key(), mi.value().get<std::string>());
            }
            continue;
        }
        TensorInfo t;
        if (!parse_entry(it.key(), it.value(), out.data_bytes, name, t, error)) return false;
        out.tensors.push_back(std::move(t));
    }

    // No two tensors may share bytes (empty tensors occupy none).
    std::sort(out.tensors.begin(), out.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
        if (a.begin != b.begin) return a.begin < b.begin;
        if (a.end != b.end) return a.end < b.end;
        return a.name < b.name;
    });
    const TensorInfo* last = nullptr; // the non-empty tensor that ends furthest so far
    for (const TensorInfo& t : out.tensors) {
        if (t.begin == t.end) continue;
        if (last && t.begin < last->end)
            return fail(error, name,
                        "tensors " + quote(last->name) + " [" + std::to_string(last->begin) + ", " +
                            std::to_string(last->end) + "] and " + quote(t.name) + " [" + std::to_string(t.begin) +
                            ", " + std::to_string(t.end) + "] overlap in the data buffer; the file is damaged");
        if (!last || t.end > last->end) last = &t;
    }
    return true;
}

bool parse_safetensors(const uint8_t* bytes, size_t size, const std::string& name, SafetensorsFile& out,
                       std::string& error) {
    out = SafetensorsFile{};
    out.name = name;
    uint64_t n = 0;
    if (size < 8 || bytes == nullptr) {
        uint8_t zeros[8] = {};
        return parse_header_length(zeros, size, name, n, error);
    }
    if (!parse_header_length(bytes, size, name, n, error)) return false;
    return parse_header((const char*)bytes + 8, n, size, name, out, error);
}

bool decode_tensor(const SafetensorsFile& file, const TensorInfo& t, const uint8_t* raw, std::vector<float>& out,
                   std::string& error) {
    if (dtype_supported(t.dtype) && t.end >= t.begin && t.numel() != UINT64_MAX &&
        t.numel() * uint64_t(dtype_bytes(t.dtype)) == t.end - t.begin)
        out.resize(t.numel());
    return decode_tensor_into(file, t, raw, out.data(), error);
}

bool decode_tensor_into(const SafetensorsFile& file, const TensorInfo& t, const uint8_t* raw, float* out,
                        std::string& error) {
    if (!dtype_supported(t.dtype))
        return fail(error, file.name,
                    "tensor " + quote(t.name) + " has dtype " + quote(t.dtype) + "; attnviz reads " +
                        supported_dtypes() + " weights (convert it, e.g. with tensor.float())");
    const uint64_t numel = t.numel();
    const uint64_t elem = uint64_t(dtype_bytes(t.dtype));
    if (t.end < t.begin || numel == UINT64_MAX || numel * elem != t.end - t.begin)
        return fail(error, file.name, "tensor " + quote(t.name) + " has a byte range that does not match its shape");
    if (t.dtype == "F32" && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
        if (numel > 0) std::memcpy(out, raw, size_t(numel) * 4); // the file's byte order is the machine's
    } else if (t.dtype == "F32") {
        for (uint64_t i = 0; i < numel; ++i) {
            const uint8_t* p = raw + 4 * i;
            uint32_t bits = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
            std::memcpy(&out[i], &bits, 4);
        }
    } else {
        const bool half = t.dtype == "F16";
        for (uint64_t i = 0; i < numel; ++i) {
            uint16_t h = uint16_t(raw[2 * i] | raw[2 * i + 1] << 8);
            out[i] = half ? f16_to_f32(h) : bf16_to_f32(h);
        }
    }
    return true;
}

} // namespace attnviz
