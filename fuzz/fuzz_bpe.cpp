// fuzz_bpe: GPT-2's tokenizer (bpe_tokenizer.h): its two file readers and encode.
//
// The first byte picks what the rest is:
//   0  a text, encoded with GPT-2's real vocabulary (tests/data/gpt2_tokenizer)
//   1  a vocab.json, with a small merges file that fits the 256 byte tokens
//   2  a vocab.json and a merges.txt, separated by the first 0x00 byte
// Besides "no crash, no undefined behaviour, no hang", it checks the promises: a refused
// file gives one non-empty line and leaves the tokenizer as it was; the pre-tokenizer's
// chunks cover the text in order; any loaded tokenizer gives ids in range that decode to
// the text exactly, whatever its bytes.
#include "bpe_tokenizer.h"
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace attnviz;

static void require(bool ok, const char* what, const std::string& detail) {
    if (ok) return;
    std::fprintf(stderr, "broken promise: %s: %s\n", what, detail.substr(0, 200).c_str());
    std::abort();
}

static void check_encode(const BpeTokenizer& t, const std::string& text) {
    size_t at = 0;
    for (const ByteRange& r : pretokenize(text)) {
        require(r.begin == at && r.end > r.begin && r.end <= text.size(), "chunks cover the text in order", text);
        at = r.end;
    }
    require(at == text.size(), "chunks reach the end of the text", text);
    const std::vector<int> ids = t.encode(text);
    for (int id : ids) require(id >= 0 && id < t.vocab_size(), "ids are in range", text);
    require(t.decode(ids) == text, "decode(encode(text)) == text", text);
    for (int id : ids) require(!t.display(id).empty() || t.token_bytes(id).empty(), "a token has a label", text);
}

static const BpeTokenizer& gpt2() {
    static BpeTokenizer t = [] {
        BpeTokenizer g;
        std::string error;
        if (!g.load_dir(ATTNVIZ_GPT2_TOKENIZER_DIR, error)) {
            std::fprintf(stderr, "fuzz_bpe needs GPT-2's tokenizer: %s\n", error.c_str());
            std::abort();
        }
        return g;
    }();
    return t;
}

// A small tokenizer that every refused load must leave as it is.
static BpeTokenizer& small() {
    static BpeTokenizer t;
    if (!t.loaded()) {
        std::string vocab = "{";
        for (int b = 0; b < 256; ++b) vocab += "\"" + std::string(b == '"' || b == '\\' ? "\\" : "") + byte_symbols()[size_t(b)] + "\": " + std::to_string(b) + ",";
        vocab += "\"\\u0120t\": 256, \"he\": 257}";
        std::string error;
        require(t.load_text(vocab, "#version: 0.2\nĠ t\nh e\n", "vocab.json", "merges.txt", error), "the small tokenizer loads", error);
    }
    return t;
}

static const char* small_merges = "#version: 0.2\n\xC4\xA0 t\nh e\n";

static void check_load(const std::string& vocab, const std::string& merges) {
    BpeTokenizer& t = small();
    std::string error;
    if (t.load_text(vocab, merges, "vocab.json", "merges.txt", error)) {
        require(t.vocab_size() >= 256, "a loaded vocabulary has the 256 bytes", vocab);
        check_encode(t, vocab.substr(0, 300));
        check_encode(t, " the cat\n\n  sat\t\xF0\x9F\x8D\x95 \xFF");
        t = BpeTokenizer(); // back to the small one for the next input
        return;
    }
    require(!error.empty() && error.find('\n') == std::string::npos, "error is one non-empty line", error);
    require(t.vocab_size() == 258 && t.encode(" the") == std::vector<int>{256, 257}, "a refused load keeps the state", error);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
    switch (data[0] % 3) {
    case 0: check_encode(gpt2(), rest); break;
    case 1: check_load(rest, small_merges); break;
    default: {
        const size_t split = rest.find('\0');
        if (split == std::string::npos) check_load(rest, "");
        else check_load(rest.substr(0, split), rest.substr(split + 1));
    }
    }
    return 0;
}
