// follow_generate.cpp: see follow_generate.h. Floats go as JSON numbers (a float's double's
// shortest text reads back bit for bit, follow_gpt_json.h) or, for the picture's rows, as
// their float32 bits in base64.
#include "follow_generate.h"
#include "follow_gpt.h"
#include "follow_gpt_json.h"
#include "follow_protocol.h"
#include "text_util.h"
#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnviz {

using json = nlohmann::json;
using follow_gpt_detail::get_int;
using follow_gpt_detail::get_num;
using follow_gpt_detail::num;

namespace {

const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::vector<float>& v) {
    std::string in(v.size() * 4, '\0'), out;
    if (!v.empty()) std::memcpy(in.data(), v.data(), in.size());
    out.reserve((in.size() + 2) / 3 * 4);
    for (size_t i = 0; i < in.size(); i += 3) {
        const uint32_t n = uint32_t(uint8_t(in[i])) << 16 | (i + 1 < in.size() ? uint32_t(uint8_t(in[i + 1])) << 8 : 0) |
                           (i + 2 < in.size() ? uint32_t(uint8_t(in[i + 2])) : 0);
        out += b64[n >> 18 & 63];
        out += b64[n >> 12 & 63];
        out += i + 1 < in.size() ? b64[n >> 6 & 63] : '=';
        out += i + 2 < in.size() ? b64[n & 63] : '=';
    }
    return out;
}

// The floats of base64 text; false when it is not base64 of whole floats.
bool from_base64(const std::string& text, std::vector<float>& v) {
    if (text.size() % 4 != 0) return false;
    std::string bytes;
    bytes.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        uint32_t n = 0;
        int pad = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = text[i + k];
            const char* at = c == '=' ? nullptr : std::strchr(b64, c);
            if (c == '=' && i + 4 == text.size() && k >= 2) ++pad;
            else if (!at || c == '\0' || pad) return false;
            n = n << 6 | uint32_t(at ? at - b64 : 0);
        }
        bytes += char(n >> 16 & 255);
        if (pad < 2) bytes += char(n >> 8 & 255);
        if (pad < 1) bytes += char(n & 255);
    }
    if (bytes.size() % 4 != 0) return false;
    v.resize(bytes.size() / 4);
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    return true;
}

// Text for JSON: a generated text may stop inside a character (a token of a few of its
// bytes); each byte that breaks UTF-8 becomes U+FFFD, as a terminal shows it.
std::string utf8_text(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8_sequence_length(s, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(s, i, n);
            i += n;
        }
    }
    return out;
}

json step_json(const GenerateStep& st) {
    return {st.token, num(st.prob), st.drew, num(st.cached_ms), num(st.full_ms), num(st.rows_max_abs),
            num(st.rows_max_abs_short), num(st.logits_max_abs), st.checking};
}

GenerateStep get_step(const json& j) {
    GenerateStep st;
    if (!j.is_array() || j.size() != 9 || !j[0].is_number_integer()) return st;
    st.token = j[0].get<int>(), st.prob = float(get_num(j[1])), st.drew = j[2].is_boolean() && j[2].get<bool>();
    st.cached_ms = get_num(j[3]), st.full_ms = get_num(j[4]), st.rows_max_abs = get_num(j[5]);
    st.rows_max_abs_short = get_num(j[6]), st.logits_max_abs = get_num(j[7]), st.checking = j[8].is_boolean() && j[8].get<bool>();
    return st;
}

// The picture's rows from `from` on: each from column `from` to the diagonal, every head; the
// newest row whole (the view's strip of it over every position).
std::vector<float> rows_sent(const GenerateState& g, int from) {
    std::vector<float> v;
    const int T = int(g.rows.size());
    for (int t = from; t < T; ++t) {
        const Mat& r = g.rows[size_t(t)];
        const int c0 = t + 1 == T ? 0 : from;
        for (int h = 0; h < r.rows(); ++h)
            for (int j = c0; j <= t; ++j) v.push_back(r(h, j));
    }
    return v;
}

} // namespace

json gpt_generate_header(const AppState& s) {
    const GenerateState& g = s.generate;
    if (s.screen.view != View::generate || !g.synced) return nullptr;
    const int T = int(g.rows.size()), from = std::max(0, T - generate_follow_rows);
    json labels = json::object(), top = json::array();
    for (int t : g.tokens) labels[std::to_string(t)] = utf8_text(generate_token_label(s, t));
    for (const TokenChance& t : g.top) {
        labels[std::to_string(t.token)] = utf8_text(generate_token_label(s, t.token));
        top.push_back({t.token, num(t.prob), num(t.logit)});
    }
    int short_rows = 0;
    for (int t : g.row_made_at) short_rows += t < generate_lane_sum_keys ? 1 : 0;
    const CacheSizes c = generate_cache_sizes(s);
    const SamplingOptions& o = g.options;
    return {{"tokens", g.tokens},
            {"prompt_len", g.prompt_len},
            {"block", g.block},
            {"layer", g.layer},
            {"kernel", to_string(g.kernel)},
            {"labels", labels},
            {"prompt_text", utf8_text(generate_prompt_text(s))},
            {"new_text", utf8_text(generate_new_text(s))},
            {"options", {{"greedy", o.greedy}, {"temperature", num(o.temperature)}, {"top_k", o.top_k},
                         {"top_p", num(o.top_p)}, {"seed", std::to_string(o.seed)}}},
            {"draws", g.draws},
            {"top", top},
            {"steps", g.steps.size()},
            {"last_step", g.steps.empty() ? json(nullptr) : step_json(g.steps.back())},
            {"cache", {c.layers, c.T, c.C}},
            {"cache_range", num(g.cache_range)},
            {"short_rows", short_rows},
            {"playing", g.playing},
            {"why_not", utf8_text(g.why_not)},
            {"status", utf8_text(g.status)},
            {"heads", g.rows.empty() ? 0 : int(g.rows[0].rows())},
            {"rows_from", from},
            {"rows", base64(rows_sent(g, from))}};
}

namespace {

// Reads the header's generation into `g` (a fresh GenerateState); false with one sentence.
bool read_generate(const json& j, int vocab, GenerateState& g, std::string& error) {
    error = "the teacher's generation is malformed";
    if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array()) return false;
    for (const json& t : j["tokens"]) {
        if (!t.is_number_integer() || t.get<int>() < 0 || t.get<int>() >= vocab) return false;
        g.tokens.push_back(t.get<int>());
    }
    const int T = int(g.tokens.size());
    g.prompt_len = get_int(j, "prompt_len", -1), g.block = get_int(j, "block", 0), g.layer = get_int(j, "layer", 0);
    const int H = get_int(j, "heads", 0), from = get_int(j, "rows_from", -1), n = get_int(j, "steps", -1);
    if (g.prompt_len < 0 || g.prompt_len > T || g.block < T || H < 0 || H > max_n_head || (T > 0 && H < 1) ||
        from != std::max(0, T - generate_follow_rows) || n != T - g.prompt_len)
        return false;
    g.kernel = j.value("kernel", std::string()) == "fast" ? KernelKind::fast : KernelKind::reference;
    if (j.contains("labels") && j["labels"].is_object())
        for (const auto& [id, label] : j["labels"].items())
            if (label.is_string() && !id.empty() && id.size() < 10 && id.find_first_not_of("0123456789") == std::string::npos)
                g.received_labels[std::stoi(id)] = label.get<std::string>();
    g.received_prompt = j.value("prompt_text", std::string()), g.received_new = j.value("new_text", std::string());
    const json o = j.value("options", json());
    if (o.is_object()) {
        g.options.greedy = o.value("greedy", true);
        g.options.temperature = get_num(o.value("temperature", json())), g.options.top_k = get_int(o, "top_k", 0);
        g.options.top_p = get_num(o.value("top_p", json()));
        const std::string seed = o.value("seed", std::string());
        if (!seed.empty() && seed.size() < 21 && seed.find_first_not_of("0123456789") == std::string::npos)
            g.options.seed = std::stoull(seed);
    }
    g.draws = get_int(j, "draws", 0);
    if (j.contains("top") && j["top"].is_array())
        for (const json& t : j["top"])
            if (t.is_array() && t.size() == 3 && t[0].is_number_integer())
                g.top.push_back({t[0].get<int>(), float(get_num(t[1])), float(get_num(t[2]))});
    g.steps.assign(size_t(n), GenerateStep{});
    if (n > 0) g.steps.back() = get_step(j.value("last_step", json()));
    const json c = j.value("cache", json());
    if (c.is_array() && c.size() == 3 && c[0].is_number_integer() && c[1].is_number_integer() && c[2].is_number_integer())
        g.received_cache = {c[0].get<int>(), c[1].get<int>(), c[2].get<int>()};
    g.cache_range = float(get_num(j.value("cache_range", json())));
    g.received_short_rows = std::clamp(get_int(j, "short_rows", 0), 0, T);
    g.received_playing = j.value("playing", false);
    g.why_not = j.value("why_not", std::string()), g.status = j.value("status", std::string());
    // The rows: from `from` to the diagonal, the newest whole; columns not sent are NaN.
    std::vector<float> v;
    int64_t want = 0;
    for (int t = from; t < T; ++t) want += int64_t(H) * (t + 1 == T ? t + 1 : t + 1 - from);
    if (!from_base64(j.value("rows", std::string()), v) || int64_t(v.size()) != want) return false;
    size_t at = 0;
    g.rows.assign(size_t(T), Mat());
    for (int t = from; t < T; ++t) {
        Mat r = Mat::Constant(H, t + 1, NAN);
        const int c0 = t + 1 == T ? 0 : from;
        for (int h = 0; h < H; ++h)
            for (int k = c0; k <= t; ++k) r(h, k) = v[at++];
        g.rows[size_t(t)] = std::move(r);
    }
    g.rows_from = from;
    for (int t = 0; t < T; ++t) g.row_made_at.push_back(t < g.received_short_rows ? 1 : T);
    return true;
}

} // namespace

void show_received_generate(AppState& s, const json& header) {
    GenerateState& g = s.generate;
    GenerateState in;
    std::string error;
    const json j = header.value(follow_protocol::gpt_generate, json());
    if (j.is_null()) {
        in.why_not = "The teacher's generation arrives when the teacher's window shows the Generate view.";
    } else if (!read_generate(j, shown_model(s)->model->config.vocab, in, error)) {
        in = GenerateState();
        in.why_not = "Kept nothing of it: " + error + ".";
    }
    in.received = true;
    in.playing = in.received_playing;
    in.synced = true;
    in.input = shown_model(s);
    in.source_tokens = shown_model(s)->tokens;
    in.demo = std::move(g.demo);
    in.play_interval_ms = g.play_interval_ms;
    in.epoch = g.epoch + 1;
    g = std::move(in);
}

} // namespace attnviz
