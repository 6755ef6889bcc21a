// bpe_tokenizer.h: GPT-2's byte-level BPE tokenizer (OpenAI's encoder.py, as Hugging Face's
// GPT2Tokenizer and tiktoken's "gpt2" encoding run it).
//
//   text --pre-tokenize--> chunks (" cat", "'s", "  ", ...; bpe_pretokenize.cpp)
//        --bytes_to_unicode--> each chunk's bytes as printable symbols ("Ġcat")
//        --BPE merges by rank--> tokens ("Ġcat") --vocabulary--> ids (3797)
//
// Files: Hugging Face's vocab.json + merges.txt or OpenAI's encoder.json + vocab.bpe (the
// same two tables under two names: a JSON object token -> id, and the merges one per line
// in rank order after a "#version" line). Loading checks them whole and refuses a bad file
// with one sentence; a failed load leaves the tokenizer as it was.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnviz {

// The two files of a tokenizer; `format` says which names they had.
struct BpeFiles {
    std::string vocab;  // vocab.json or encoder.json
    std::string merges; // merges.txt or vocab.bpe
    std::string format; // "Hugging Face" or "OpenAI"
};

// Finds the pair in `dir` (either one; Hugging Face's when both are there). A path to one
// of the four files stands for its directory. False with one sentence when there is none,
// or only half of one.
bool find_bpe_files(const std::string& dir, BpeFiles& files, std::string& error);

// GPT-2's pre-tokenizer: `text` split into the matches of
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// as byte ranges [begin, end) that cover `text` in order. Bytes that are not UTF-8 count
// as characters of class other (punctuation), so every input splits.
struct ByteRange {
    size_t begin, end;
};
std::vector<ByteRange> pretokenize(const std::string& text);

class BpeTokenizer {
  public:
    BpeTokenizer();
    ~BpeTokenizer();
    BpeTokenizer(BpeTokenizer&&) noexcept;
    BpeTokenizer& operator=(BpeTokenizer&&) noexcept;

    // Loads the pair find_bpe_files finds in `dir`.
    bool load_dir(const std::string& dir, std::string& error);
    bool load_files(const std::string& vocab_path, const std::string& merges_path, std::string& error);
    // The files' contents; the names only go into error sentences.
    bool load_text(const std::string& vocab_json, const std::string& merges_text, const std::string& vocab_name,
                   const std::string& merges_name, std::string& error);

    bool loaded() const { return vocab_size() > 0; }
    // Entries in the vocabulary: 50257 for GPT-2 (256 bytes, 50000 merges, <|endoftext|>).
    int vocab_size() const;
    // The check a model reader calls with wte's row count: equal, or rounded up to a
    // multiple of 64 as nanoGPT pads GPT-2's 50257 to 50304. Otherwise false with "the
    // vocabulary has N entries but wte has M rows; ...".
    bool check_embedding_rows(long long wte_rows, std::string& error) const;

    // Text to ids. Any bytes: what is not UTF-8 is split as punctuation and still round-trips.
    // Special tokens such as <|endoftext|> in the text are encoded as plain text, as GPT-2's
    // encoder.py does. Safe to call from several threads (the cache has a lock).
    std::vector<int> encode(const std::string& text) const;
    // Ids to text (bytes). An id outside 0..vocab_size()-1 decodes to U+FFFD.
    std::string decode(const std::vector<int>& ids) const;
    // One token's bytes ("Ġcat" -> " cat"); "" for an id out of range.
    std::string token_bytes(int id) const;
    // One token as the views label it: its text with a newline as ↵, a tab as ⇥, a
    // carriage return as ␍, other control characters and bytes that are not UTF-8 on their
    // own (half of an emoji, say) as \xNN, as text_util.h's escaped() shows text.
    // "Ġcat" -> " cat", "Ċ" -> "↵". "<bad id N>" out of range.
    std::string display(int id) const;
    // The vocabulary's own spelling of the token ("Ġcat"); "" for an id out of range.
    const std::string& token_symbols(int id) const;

  private:
    struct Tables;
    std::unique_ptr<Tables> t_;
    mutable std::mutex cache_lock_;
    mutable std::unordered_map<std::string, std::vector<int>> cache_; // chunk bytes -> ids
    void bpe(const std::string& chunk, std::vector<int>& out) const;
};

// bytes_to_unicode from GPT-2's encoder.py: the printable symbol (as UTF-8) that stands for
// each byte in the vocabulary. Printable Latin-1 bytes stand for themselves; the other 68
// (controls, space, 0x7F-0xA0, 0xAD) take U+0100 onwards in order, so a space is "Ġ"
// (U+0120) and a newline "Ċ" (U+010A).
const std::vector<std::string>& byte_symbols();

} // namespace attnviz
