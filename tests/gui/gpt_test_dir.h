// gpt_test_dir.h: the committed tiny GPT-2 model (tests/data/gpt_tiny/gpt2: 2 layers, 4 heads,
// C = 64, a vocabulary of 1000, block size 64) copied into a directory of this test process,
// with or without GPT-2's tokenizer cut to its 1000 entries, for the window's tests.
#pragma once
#include "gui_test_support.h"
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace attnviz_gui_test {

// "DIR/gpt_tok" (with_tokenizer) or "DIR/gpt_bare": model.safetensors and config.json, and
// with the tokenizer OpenAI's file names, encoder.json (ids below 1000) and vocab.bpe (the
// "#version" line and the first 744 merges, whose results are GPT-2's ids 256..999).
inline std::string tiny_gpt_dir(bool with_tokenizer) {
    namespace fs = std::filesystem;
    const std::string dir = temp_dir() + (with_tokenizer ? "/gpt_tok" : "/gpt_bare");
    if (fs::exists(dir + "/model.safetensors")) return dir;
    fs::create_directories(dir);
    const std::string model = ATTNVIZ_TEST_DATA "/gpt_tiny/gpt2/";
    fs::copy_file(model + "model.safetensors", dir + "/model.safetensors", fs::copy_options::overwrite_existing);
    fs::copy_file(model + "config.json", dir + "/config.json", fs::copy_options::overwrite_existing);
    if (!with_tokenizer) return dir;
    const std::string full = ATTNVIZ_TEST_DATA "/gpt2_tokenizer/";
    std::ifstream ej(full + "encoder.json");
    const nlohmann::json encoder = nlohmann::json::parse(ej);
    nlohmann::json kept = nlohmann::json::object();
    for (const auto& [token, id] : encoder.items())
        if (id.get<int>() < 1000) kept[token] = id;
    std::ofstream(dir + "/encoder.json") << kept.dump();
    std::ifstream merges(full + "vocab.bpe");
    std::ofstream cut(dir + "/vocab.bpe");
    std::string line;
    for (int n = 0; n <= 744 && std::getline(merges, line); ++n) cut << line << '\n'; // the version line, 744 merges
    return dir;
}

} // namespace attnviz_gui_test
