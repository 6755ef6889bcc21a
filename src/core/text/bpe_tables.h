// bpe_tables.h: the tables a loaded BpeTokenizer holds, shared by its loader
// (bpe_load.cpp) and its encoder (bpe_tokenizer.cpp). Not for use outside those two.
#pragma once
#include "bpe_tokenizer.h"
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnviz {

struct BpeMerge {
    int rank;   // line order in merges.txt: lower merges first
    int result; // id of the merged token
};

struct BpeTokenizer::Tables {
    std::vector<std::string> symbols;               // id -> the vocabulary's spelling ("Ġcat")
    std::vector<std::string> bytes;                 // id -> the bytes it stands for (" cat")
    std::array<int, 256> byte_id{};                 // byte -> id of its one-byte token
    std::unordered_map<uint64_t, BpeMerge> merges;  // pair_key(left id, right id) -> merge
    int merge_count = 0;
};

inline uint64_t pair_key(int left, int right) { return (uint64_t(uint32_t(left)) << 32) | uint32_t(right); }

} // namespace attnviz
