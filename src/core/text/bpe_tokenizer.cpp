// bpe_tokenizer.cpp: encode, decode and the views' token labels (see bpe_tokenizer.h); the
// files are read in bpe_load.cpp, the text split in bpe_pretokenize.cpp.
#include "bpe_tables.h"
#include "text_util.h"
#include <functional>
#include <queue>

namespace attnviz {

BpeTokenizer::BpeTokenizer() = default;
BpeTokenizer::~BpeTokenizer() = default;
BpeTokenizer::BpeTokenizer(BpeTokenizer&& o) noexcept : t_(std::move(o.t_)) {
    std::lock_guard<std::mutex> hold(o.cache_lock_);
    cache_ = std::move(o.cache_);
}
BpeTokenizer& BpeTokenizer::operator=(BpeTokenizer&& o) noexcept {
    if (this != &o) {
        std::scoped_lock hold(cache_lock_, o.cache_lock_);
        t_ = std::move(o.t_);
        cache_ = std::move(o.cache_);
    }
    return *this;
}

int BpeTokenizer::vocab_size() const { return t_ ? int(t_->symbols.size()) : 0; }

bool BpeTokenizer::check_embedding_rows(long long wte_rows, std::string& error) const {
    const long long n = vocab_size();
    const long long padded = (n + 63) / 64 * 64; // nanoGPT: 50257 -> 50304
    if (wte_rows == n || (wte_rows == padded && wte_rows > n)) return true;
    error = "the vocabulary has " + std::to_string(n) + " entries but wte has " + std::to_string(wte_rows) +
            " rows; give the tokenizer files saved with this model";
    return false;
}

// ---------------------------------------------------------------------------------------
// [SECTION] encode
// ---------------------------------------------------------------------------------------

// GPT-2's bpe(): start from one token per byte and, as long as some neighbouring pair is
// a merge, merge every occurrence of the lowest-ranked one, left to right (in "a a a" the
// first two). Neighbours are a linked list and the candidate pairs a heap, so a long word
// costs n log n rather than n^2.
void BpeTokenizer::bpe(const std::string& chunk, std::vector<int>& out) const {
    const Tables& t = *t_;
    const int n = int(chunk.size());
    const size_t len = chunk.size();
    std::vector<int> sym(len), next(len), prev(len);
    for (int i = 0; i < n; ++i) {
        sym[size_t(i)] = t.byte_id[static_cast<unsigned char>(chunk[size_t(i)])];
        next[size_t(i)] = i + 1 < n ? i + 1 : -1;
        prev[size_t(i)] = i - 1;
    }
    auto merge_at = [&](int i) -> const BpeMerge* { // the merge of the pair starting at node i
        const int j = next[size_t(i)];
        if (j < 0) return nullptr;
        auto it = t.merges.find(pair_key(sym[size_t(i)], sym[size_t(j)]));
        return it == t.merges.end() ? nullptr : &it->second;
    };
    using Candidate = std::pair<int, int>; // (rank, node): the lowest rank first, then the leftmost
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
    for (int i = 0; i + 1 < n; ++i)
        if (const BpeMerge* m = merge_at(i)) heap.push({m->rank, i});
    std::vector<bool> gone(size_t(n), false);
    std::vector<int> pass;
    while (!heap.empty()) {
        // One pass of encoder.py's loop: every pair with the lowest rank, in text order. A
        // merge never makes a pair of the same rank (its result is longer than both parts,
        // so it is never one of them), so the heap's pairs of this rank are all there are.
        const int rank = heap.top().first;
        pass.clear();
        while (!heap.empty() && heap.top().first == rank) {
            pass.push_back(heap.top().second);
            heap.pop();
        }
        for (int i : pass) {
            if (gone[size_t(i)]) continue; // taken by the merge to its left ("a a a")
            const BpeMerge* m = merge_at(i);
            if (!m || m->rank != rank) continue; // the pair here changed since it was queued
            const int j = next[size_t(i)];
            sym[size_t(i)] = m->result;
            gone[size_t(j)] = true;
            next[size_t(i)] = next[size_t(j)];
            if (next[size_t(j)] >= 0) prev[size_t(next[size_t(j)])] = i;
        }
        // New neighbours of the merged tokens, queued for later passes (whatever their rank:
        // a token two lines can make may enter a pair ranked before this one).
        for (int i : pass) {
            if (gone[size_t(i)]) continue;
            if (const BpeMerge* m = merge_at(i)) heap.push({m->rank, i});
            const int p = prev[size_t(i)];
            if (p >= 0)
                if (const BpeMerge* m = merge_at(p)) heap.push({m->rank, p});
        }
    }
    if (n == 0) return;
    for (int i = 0; i >= 0; i = next[size_t(i)]) out.push_back(sym[size_t(i)]); // node 0 always survives
}

std::vector<int> BpeTokenizer::encode(const std::string& text) const {
    std::vector<int> ids;
    if (!t_) return ids;
    // Chunks up to this length are cached (words repeat); the cache is emptied when it
    // reaches its size, so memory stays bounded whatever is typed.
    constexpr size_t cache_chunk_bytes = 64, cache_entries = 1 << 16;
    std::string chunk;
    for (const ByteRange& r : pretokenize(text)) {
        chunk.assign(text, r.begin, r.end - r.begin);
        if (chunk.size() <= cache_chunk_bytes) {
            std::lock_guard<std::mutex> hold(cache_lock_);
            auto it = cache_.find(chunk);
            if (it != cache_.end()) {
                ids.insert(ids.end(), it->second.begin(), it->second.end());
                continue;
            }
        }
        const size_t start = ids.size();
        bpe(chunk, ids);
        if (chunk.size() <= cache_chunk_bytes) {
            std::lock_guard<std::mutex> hold(cache_lock_);
            if (cache_.size() >= cache_entries) cache_.clear();
            cache_.emplace(chunk, std::vector<int>(ids.begin() + long(start), ids.end()));
        }
    }
    return ids;
}

// ---------------------------------------------------------------------------------------
// [SECTION] decode and labels
// ---------------------------------------------------------------------------------------

std::string BpeTokenizer::decode(const std::vector<int>& ids) const {
    std::string out;
    for (int id : ids) {
        if (id >= 0 && id < vocab_size()) out += t_->bytes[size_t(id)];
        else out += "\xEF\xBF\xBD"; // U+FFFD
    }
    return out;
}

std::string BpeTokenizer::token_bytes(int id) const {
    return id >= 0 && id < vocab_size() ? t_->bytes[size_t(id)] : std::string();
}

const std::string& BpeTokenizer::token_symbols(int id) const {
    static const std::string none;
    return id >= 0 && id < vocab_size() ? t_->symbols[size_t(id)] : none;
}

std::string BpeTokenizer::display(int id) const {
    if (id < 0 || id >= vocab_size()) return "<bad id " + std::to_string(id) + ">";
    // Line breaks and tabs get a visible sign; everything else as error sentences show the
    // user's text (escaped(): other controls and lone bytes as \xNN, C1 controls and the
    // line separators as \uNNNN, any letter or emoji as itself).
    const std::string& b = t_->bytes[size_t(id)];
    std::string out, run;
    for (char c : b) {
        const char* sign = c == '\n' ? "\xE2\x86\xB5" : c == '\t' ? "\xE2\x87\xA5" : c == '\r' ? "\xE2\x90\x8D" : nullptr;
        if (!sign) {
            run += c;
            continue;
        }
        out += escaped(run) + sign; // ↵ ⇥ ␍
        run.clear();
    }
    return out + escaped(run);
}

} // namespace attnviz
