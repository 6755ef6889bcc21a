// bpe_load.cpp: reading and checking a tokenizer's two files (see bpe_tokenizer.h).
//
// Every check ends in one sentence naming the file, and the line or entry, and what to do.
// What is checked: the vocabulary is one JSON object of token -> id with each token once and
// the ids exactly 0..N-1; it has all 256 byte tokens; each merge line is two tokens; each
// merge's parts exist before it (bytes, or what an earlier line made) and its result is in
// the vocabulary; every entry is a byte, a merge's result or a special token like
// <|endoftext|> (so merges cut short at a line boundary are caught too).
#include "bpe_tables.h"
#include "text_util.h"
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

namespace attnviz {

const std::vector<std::string>& byte_symbols() {
    static const std::vector<std::string> table = [] {
        // encoder.py: bs = printable ranges; every other byte b gets chr(256 + n) in order.
        std::vector<uint32_t> cp(256, 0);
        std::vector<bool> printable(256, false);
        for (int b = '!'; b <= '~'; ++b) printable[size_t(b)] = true;
        for (int b = 0xA1; b <= 0xAC; ++b) printable[size_t(b)] = true;
        for (int b = 0xAE; b <= 0xFF; ++b) printable[size_t(b)] = true;
        uint32_t n = 0;
        for (int b = 0; b < 256; ++b) cp[size_t(b)] = printable[size_t(b)] ? uint32_t(b) : 256 + n++;
        std::vector<std::string> out(256);
        for (int b = 0; b < 256; ++b) {
            const uint32_t c = cp[size_t(b)]; // below U+0800: one or two UTF-8 bytes
            if (c < 0x80) out[size_t(b)] = std::string(1, char(c));
            else out[size_t(b)] = {char(0xC0 | (c >> 6)), char(0x80 | (c & 0x3F))};
        }
        return out;
    }();
    return table;
}

namespace {

constexpr size_t max_file_bytes = 64u << 20; // GPT-2's are 1 MB and 0.5 MB

bool is_dir(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool is_file(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool read_text_file(const std::string& path, const char* what, std::string& out, std::string& error) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return fail(error, path, std::string("no such file; give the tokenizer's ") + what);
        return fail(error, path, std::string("cannot be read (") + std::strerror(errno) + ")");
    }
    if (S_ISDIR(st.st_mode)) return fail(error, path, std::string("is a folder; give the tokenizer's ") + what);
    if (size_t(st.st_size) > max_file_bytes)
        return fail(error, path, "is " + std::to_string(st.st_size >> 20) + " MB, too large for a tokenizer's " + what +
                                     " (GPT-2's is about 1 MB); give the right file");
    std::ifstream f(path, std::ios::binary);
    if (!f) return fail(error, path, std::string("cannot be opened (") + std::strerror(errno) + ")");
    out.assign(size_t(st.st_size), '\0');
    f.read(out.data(), std::streamsize(out.size()));
    if (size_t(f.gcount()) != out.size()) return fail(error, path, "could not be read to its end; read it again");
    return true;
}

// The vocabulary's JSON object, read event by event so that a token given twice is caught
// (a JSON library's object would keep only the last) and no document is built.
struct VocabReader : nlohmann::json_sax<nlohmann::json> {
    std::vector<std::pair<std::string, long long>> entries;
    std::string problem; // set when the structure is wrong; parse errors go to `syntax`
    std::string syntax;
    size_t syntax_at = 0;
    bool syntax_at_end = false;
    size_t input_size = 0;
    int depth = 0;
    bool have_key = false;

    bool wrong(const std::string& what) {
        if (problem.empty()) problem = what;
        return false;
    }
    bool value(long long id) {
        if (depth != 1 || !have_key) return wrong("is not one JSON object of token -> id");
        entries.back().second = id;
        have_key = false;
        return true;
    }
    bool not_an_id(const char* kind) {
        if (depth == 1 && have_key)
            return wrong("gives the token " + quote(entries.back().first) + " " + kind + ", not an id (a whole number >= 0)");
        return wrong("is not one JSON object of token -> id");
    }
    bool null() override { return not_an_id("null"); }
    bool boolean(bool) override { return not_an_id("true or false"); }
    bool number_integer(number_integer_t v) override {
        return v < 0 ? not_an_id(("the id " + std::to_string(v)).c_str()) : value(v);
    }
    bool number_unsigned(number_unsigned_t v) override {
        return v > (1ull << 40) ? not_an_id("a huge number") : value((long long)v);
    }
    bool number_float(number_float_t, const string_t& s) override { return not_an_id(("the id " + s).c_str()); }
    bool string(string_t&) override { return not_an_id("a string"); }
    bool binary(binary_t&) override { return not_an_id("binary data"); }
    bool start_object(std::size_t) override { return depth++ == 0 ? true : not_an_id("an object"); }
    bool end_object() override { return --depth, true; }
    bool start_array(std::size_t) override { return not_an_id("a list"); }
    bool end_array() override { return true; }
    bool key(string_t& k) override {
        entries.emplace_back(std::move(k), -1);
        have_key = true;
        return true;
    }
    bool parse_error(std::size_t at, const std::string&, const nlohmann::detail::exception& e) override {
        syntax = e.what();
        syntax_at = at;
        syntax_at_end = at >= input_size;
        return false;
    }
};

bool parse_vocab(const std::string& text, const std::string& name, std::vector<std::string>& symbols,
                 std::string& error) {
    if (text.empty()) return fail(error, name, "the file is empty; give the tokenizer's vocab.json or encoder.json");
    VocabReader r;
    r.input_size = text.size();
    const bool ok = nlohmann::json::sax_parse(text, &r, nlohmann::json::input_format_t::json, true);
    if (!r.problem.empty()) return fail(error, name, r.problem + "; give the tokenizer's vocab.json or encoder.json");
    if (!ok || r.entries.empty()) {
        if (r.syntax_at_end && !r.entries.empty())
            return fail(error, name, "ends in the middle of its JSON (" + std::to_string(text.size()) +
                                         " bytes, after " + std::to_string(r.entries.size()) +
                                         " entries); the file is cut short, copy it again");
        if (ok) return fail(error, name, "is an empty JSON object; a vocabulary needs at least the 256 byte tokens");
        return fail(error, name, "is not JSON (at byte " + std::to_string(r.syntax_at) +
                                     "); give the tokenizer's vocab.json or encoder.json");
    }
    const size_t n = r.entries.size();
    symbols.assign(n, std::string());
    std::vector<bool> seen(n, false);
    std::unordered_map<std::string, long long> id_of;
    id_of.reserve(n);
    for (auto& [token, id] : r.entries) {
        auto [it, fresh] = id_of.emplace(token, id);
        if (!fresh)
            return fail(error, name, "gives the token " + quote(token) + " twice (ids " + std::to_string(it->second) +
                                         " and " + std::to_string(id) + "); each token must appear once");
        if (id >= (long long)n)
            return fail(error, name, "gives the token " + quote(token) + " the id " + std::to_string(id) + ", but it has " +
                                         std::to_string(n) + " entries, so ids must run 0 to " + std::to_string(n - 1));
        if (seen[size_t(id)])
            return fail(error, name, "gives the id " + std::to_string(id) + " to both " + quote(symbols[size_t(id)]) +
                                         " and " + quote(token) + "; each id must belong to one token");
        seen[size_t(id)] = true;
        symbols[size_t(id)] = std::move(token);
    }
    return true; // n distinct ids, each < n: exactly 0..n-1
}

// "<|endoftext|>", "<pad>", "[PAD]": entries the merges never make, which text never encodes to.
bool looks_special(const std::string& s) {
    return s.size() >= 3 && ((s.front() == '<' && s.back() == '>') || (s.front() == '[' && s.back() == ']'));
}

// The bytes a vocabulary spelling stands for; false when a character is not a byte symbol.
bool symbols_to_bytes(const std::string& s, const std::unordered_map<std::string, int>& byte_of, std::string& out) {
    out.clear();
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8_sequence_length(s, i);
        if (n == 0 || n > 2) return false; // every byte symbol is below U+0800
        auto it = byte_of.find(s.substr(i, n));
        if (it == byte_of.end()) return false;
        out += char(it->second);
        i += n;
    }
    return true;
}

} // namespace

bool find_bpe_files(const std::string& path, BpeFiles& files, std::string& error) {
    std::string dir = path;
    if (is_file(path)) { // a path to one of the files stands for its folder
        const size_t slash = path.rfind('/');
        dir = slash == std::string::npos ? "." : path.substr(0, slash + (slash == 0));
    } else if (!is_dir(path)) {
        return fail(error, path, "no such folder; give the folder that holds vocab.json and merges.txt (or encoder.json and vocab.bpe)");
    }
    const std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
    const struct {
        const char *vocab, *merges, *format;
    } pairs[] = {{"vocab.json", "merges.txt", "Hugging Face"}, {"encoder.json", "vocab.bpe", "OpenAI"}};
    for (const auto& p : pairs) {
        if (is_file(base + p.vocab) && is_file(base + p.merges)) {
            files = {base + p.vocab, base + p.merges, p.format};
            return true;
        }
    }
    for (const auto& p : pairs) {
        if (is_file(base + p.vocab))
            return fail(error, dir, std::string("has ") + p.vocab + " but no " + p.merges + " beside it; copy " + p.merges +
                                        " from where the tokenizer came from");
        if (is_file(base + p.merges))
            return fail(error, dir, std::string("has ") + p.merges + " but no " + p.vocab + " beside it; copy " + p.vocab +
                                        " from where the tokenizer came from");
    }
    return fail(error, dir, "has neither vocab.json + merges.txt (Hugging Face) nor encoder.json + vocab.bpe "
                            "(OpenAI's GPT-2); give the folder the tokenizer was saved in");
}

bool BpeTokenizer::load_dir(const std::string& dir, std::string& error) {
    BpeFiles files;
    return find_bpe_files(dir, files, error) && load_files(files.vocab, files.merges, error);
}

bool BpeTokenizer::load_files(const std::string& vocab_path, const std::string& merges_path, std::string& error) {
    std::string vocab, merges;
    if (!read_text_file(vocab_path, "vocab.json (or encoder.json)", vocab, error)) return false;
    if (!read_text_file(merges_path, "merges.txt (or vocab.bpe)", merges, error)) return false;
    return load_text(vocab, merges, vocab_path, merges_path, error);
}

namespace {

using IdOf = std::unordered_map<std::string, int>;

// The 256 byte tokens: each byte's symbol and its id.
bool read_byte_tokens(const IdOf& id_of, const std::string& vocab_name, IdOf& byte_of, std::array<int, 256>& byte_id,
                      std::string& error) {
    const std::vector<std::string>& syms = byte_symbols();
    for (int b = 0; b < 256; ++b) {
        byte_of.emplace(syms[size_t(b)], b);
        auto it = id_of.find(syms[size_t(b)]);
        if (it == id_of.end()) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02X", b);
            return fail(error, vocab_name, std::string("has no token for the byte ") + hex + " (" + quote(syms[size_t(b)]) +
                                               "); a byte-level BPE vocabulary has all 256, so this is not GPT-2's kind");
        }
        byte_id[size_t(b)] = it->second;
    }
    return true;
}

// The merges, one per line after the "#version" line, in rank order.
struct MergeReader {
    const IdOf& id_of;
    const IdOf& byte_of;
    const std::string& vocab_name;
    const std::string& merges_name;
    std::string& error;
    std::unordered_map<uint64_t, BpeMerge>& merges;
    int& merge_count;
    std::vector<int> made_at;                // id -> first line (rank) whose merge makes it
    std::unordered_map<uint64_t, int> line_of;

    static std::string line_text(int k) { return "line " + std::to_string(k); }

    // One merge line; cut says the file may be cut short (a last line with no newline).
    bool line(const std::string& line, int line_no, const std::string& cut) {
        const size_t space = line.find(' ');
        if (space == std::string::npos || space == 0 || space + 1 == line.size() ||
            line.find(' ', space + 1) != std::string::npos)
            return fail(error, merges_name, line_text(line_no) + " (" + quote(line, 40) +
                                                ") is not two tokens separated by one space" + cut);
        const std::string left = line.substr(0, space), right = line.substr(space + 1);
        const int rank = merge_count;
        int part_id[2];
        const std::string* parts[2] = {&left, &right};
        for (int k = 0; k < 2; ++k) {
            auto it = id_of.find(*parts[k]);
            if (it == id_of.end())
                return fail(error, merges_name, line_text(line_no) + " merges " + quote(*parts[k], 40) + ", which " +
                                                    escaped(vocab_name) + " does not have; the two files are not a pair" + cut);
            part_id[k] = it->second;
            const bool is_byte = byte_of.count(*parts[k]) > 0;
            if (!is_byte && made_at[size_t(part_id[k])] < 0)
                return fail(error, merges_name, line_text(line_no) + " merges " + quote(*parts[k], 40) +
                                                    ", which no line before it makes; the merges are out of order" + cut);
        }
        auto made = id_of.find(left + right);
        if (made == id_of.end())
            return fail(error, merges_name, line_text(line_no) + " makes " + quote(left + right, 40) + ", which " +
                                                escaped(vocab_name) + " does not have; the two files are not a pair" + cut);
        const uint64_t key = pair_key(part_id[0], part_id[1]);
        auto [seen, fresh] = line_of.emplace(key, line_no);
        if (!fresh)
            return fail(error, merges_name, line_text(line_no) + " repeats the merge of " + line_text(seen->second) +
                                                " (" + quote(line, 40) + "); each merge appears once" + cut);
        merges.emplace(key, BpeMerge{rank, made->second});
        if (made_at[size_t(made->second)] < 0) made_at[size_t(made->second)] = rank;
        ++merge_count;
        return true;
    }

    bool all(const std::string& merges_text) {
        if (merges_text.empty()) return fail(error, merges_name, "the file is empty; give the tokenizer's merges.txt or vocab.bpe");
        size_t pos = 0;
        int line_no = 0;
        const bool ends_in_newline = merges_text.back() == '\n';
        while (pos < merges_text.size()) {
            size_t eol = merges_text.find('\n', pos);
            const bool last = eol == std::string::npos;
            if (last) eol = merges_text.size();
            std::string text = merges_text.substr(pos, eol - pos);
            pos = eol + 1;
            ++line_no;
            if (!text.empty() && text.back() == '\r') text.pop_back();
            if (line_no == 1 && !text.empty() && text[0] == '#') continue; // "#version: 0.2"
            if (text.empty()) {
                if (last || pos >= merges_text.size()) break; // the final newline
                return fail(error, merges_name, line_text(line_no) + " is empty; each line after the first is one merge, "
                                                                     "two tokens separated by one space");
            }
            // A last line with no newline after it may be where a copy stopped.
            if (!line(text, line_no, last && !ends_in_newline ? "; the file may be cut short" : "")) return false;
        }
        return true;
    }
};

} // namespace

bool BpeTokenizer::load_text(const std::string& vocab_json, const std::string& merges_text, const std::string& vocab_name,
                             const std::string& merges_name, std::string& error) {
    auto t = std::make_unique<Tables>();
    if (!parse_vocab(vocab_json, vocab_name, t->symbols, error)) return false;
    const int n = int(t->symbols.size());
    IdOf id_of;
    id_of.reserve(size_t(n));
    for (int id = 0; id < n; ++id) id_of.emplace(t->symbols[size_t(id)], id);
    IdOf byte_of;
    if (!read_byte_tokens(id_of, vocab_name, byte_of, t->byte_id, error)) return false;
    MergeReader merges{id_of, byte_of, vocab_name, merges_name, error, t->merges, t->merge_count,
                       std::vector<int>(size_t(n), -1), {}};
    if (!merges.all(merges_text)) return false;
    const std::vector<int>& made_at = merges.made_at;

    // Every entry is a byte, a merge's result or a special token.
    int unmade = 0;
    int first_unmade = -1;
    for (int id = 0; id < n; ++id) {
        const std::string& s = t->symbols[size_t(id)];
        if (made_at[size_t(id)] >= 0 || byte_of.count(s) || looks_special(s)) continue;
        if (unmade++ == 0) first_unmade = id;
    }
    if (unmade > 0)
        return fail(error, merges_name, "makes none of " + std::to_string(unmade) + " entries of " + escaped(vocab_name) +
                                            " (the first: " + quote(t->symbols[size_t(first_unmade)], 40) + ", id " +
                                            std::to_string(first_unmade) + ", after " + std::to_string(t->merge_count) +
                                            " merges); the file is cut short or belongs to another vocabulary");

    // Each token's bytes: a special token's characters that are not byte symbols stand for
    // themselves (it is only ever decoded, never produced by encode).
    t->bytes.resize(size_t(n));
    for (int id = 0; id < n; ++id)
        if (!symbols_to_bytes(t->symbols[size_t(id)], byte_of, t->bytes[size_t(id)])) t->bytes[size_t(id)] = t->symbols[size_t(id)];

    std::lock_guard<std::mutex> hold(cache_lock_);
    cache_.clear();
    t_ = std::move(t);
    return true;
}

} // namespace attnviz
