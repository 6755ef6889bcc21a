// cut_tokenizer.cpp: see cut_tokenizer.h.
#include "cut_tokenizer.h"
#include "run_attnviz.h"
#include <fstream>

namespace attnviz_test {

void write_cut_tokenizer(const std::string& dir) {
    const std::string src = ATTNVIZ_TEST_DATA "/gpt2_tokenizer/";
    const nlohmann::json full = load_json(src + "encoder.json");
    nlohmann::json cut = nlohmann::json::object();
    for (auto it = full.begin(); it != full.end(); ++it)
        if (it.value().get<int>() < 1000) cut[it.key()] = it.value();
    std::ofstream(dir + "/vocab.json") << cut.dump();
    std::ifstream in(src + "vocab.bpe");
    std::ofstream out(dir + "/merges.txt");
    std::string line;
    std::getline(in, line); // "#version: 0.2"
    out << line << "\n";
    for (int i = 0; i < 744 && std::getline(in, line); ++i) out << line << "\n";
}

} // namespace attnviz_test
