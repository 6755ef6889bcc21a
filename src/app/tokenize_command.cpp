// tokenize_command.cpp: `attnviz tokenize`; see tokenize_command.h.
#include "tokenize_command.h"
#include "bpe_tokenizer.h"
#include "model_json.h"  // write_tokens_json
#include "commands.h"
#include "options.h"
#include "text_util.h"
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sys/stat.h>

namespace attnviz {

namespace {

struct TokenizeArgs {
    std::string tokenizer;             // required: the folder (or one of its files)
    std::optional<std::string> text;   // --text, or
    std::optional<std::string> file;   // --file
};

TokenizeArgs args; // filled by CLI11 while parsing, read once by run_tokenize_command

constexpr size_t max_text_bytes = 64u << 20;

// --file's text, or false with one sentence.
bool read_text(const std::string& path, std::string& text, std::string& error) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        return fail(error, path, errno == ENOENT ? "no such file; give --file a text file to tokenize"
                                                 : std::string("cannot be read (") + std::strerror(errno) + ")");
    if (S_ISDIR(st.st_mode)) return fail(error, path, "is a folder; give --file a text file to tokenize");
    if (size_t(st.st_size) > max_text_bytes)
        return fail(error, path, "is " + std::to_string(st.st_size >> 20) + " MB; tokenize takes texts up to 64 MB, so give a part of it");
    std::ifstream f(path, std::ios::binary);
    if (!f) return fail(error, path, std::string("cannot be opened (") + std::strerror(errno) + ")");
    text.assign(size_t(st.st_size), '\0');
    f.read(text.data(), std::streamsize(text.size()));
    if (size_t(f.gcount()) != text.size()) return fail(error, path, "could not be read to its end; read it again");
    return true;
}

// GPT-2 reads text as Unicode; bytes in another encoding would become tokens no model saw
// in that form, so they are refused rather than guessed at.
bool check_utf8(const std::string& text, const std::string& what, std::string& error) {
    const size_t at = invalid_utf8_at(text);
    if (at == std::string::npos) return true;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", unsigned(static_cast<unsigned char>(text[at])));
    error = what + " is not UTF-8 text (byte " + hex + " at offset " + std::to_string(at) + "); save or type it as UTF-8";
    return false;
}

int run_tokenize(const TokenizeArgs& a) {
    std::string error, text;
    if (a.text && a.file) return usage_error("give the text with --text or with --file, not both");
    if (!a.text && !a.file) return usage_error("tokenize needs a text: --text \"...\" or --file FILE");
    if (a.text) {
        text = *a.text;
        if (!check_utf8(text, "--text", error)) return usage_error(error);
    } else if (!read_text(*a.file, text, error) || !check_utf8(text, "--file " + quote_path(*a.file), error)) {
        return usage_error(error);
    }
    BpeTokenizer tok;
    if (!tok.load_dir(a.tokenizer, error)) return usage_error(error);

    const std::vector<int> ids = tok.encode(text);
    write_tokens_json(std::cout, tok, ids);
    return finish_stdout("tokens");
}

} // namespace

void add_tokenize_command(CLI::App& app) {
    CLI::App* sub = app.add_subcommand("tokenize", "Print GPT-2's token ids for a text, and each token as text");
    sub->add_option("--tokenizer", args.tokenizer,
                    "folder with vocab.json + merges.txt (Hugging Face) or encoder.json + vocab.bpe (OpenAI)")
        ->type_name("DIR")
        ->required();
    sub->add_option("--text", args.text, "the text to tokenize")->type_name("TEXT");
    sub->add_option("--file", args.file, "a UTF-8 text file to tokenize instead")->type_name("FILE");
    sub->footer("Prints {\"ids\": [...], \"tokens\": [...]}: the ids, and each token as the views label it\n"
                "(\"Ġcat\" as \" cat\", a newline as ↵, a tab as ⇥, a byte of a character split across tokens\n"
                "as \\xNN). <|endoftext|> in the text is tokenized as plain text, as GPT-2's encoder does.");
}

int run_tokenize_command(const CLI::App& sub) {
    if (sub.get_name() != "tokenize") return -1;
    return run_tokenize(args);
}

} // namespace attnviz
