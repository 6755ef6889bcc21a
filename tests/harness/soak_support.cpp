// soak_support.cpp: see soak_support.h.
#include "soak_support.h"
#include "app_state.h"
#include "experiment.h"
#include "weights_io.h"
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <unistd.h>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
extern "C" size_t __sanitizer_get_current_allocated_bytes(); // libasan; GCC ships no header for it
#endif

namespace attnviz {

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer (make test SANITIZE=1) RSS says nothing about memory kept: freed
// blocks wait in a 256 MB quarantine and the shadow memory only grows. The bytes allocated
// and not yet freed, from ASan's allocator, measure the same thing exactly.
double rss_mb() { return double(__sanitizer_get_current_allocated_bytes()) / (1024.0 * 1024.0); }
#else
// Resident set size from /proc/self/statm (its second field, in pages); -1 if unreadable.
double rss_mb() {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long size = 0, resident = 0;
    const int n = std::fscanf(f, "%ld %ld", &size, &resident);
    std::fclose(f);
    if (n != 2) return -1;
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}
#endif

void make_soak_files(std::string& dir) {
    std::string templ = (std::filesystem::temp_directory_path() / "attnviz-soak-XXXXXX").string();
    if (!mkdtemp(templ.data())) throw std::runtime_error("cannot create a temporary directory for the soak's files");
    dir = templ;
    const std::vector<std::pair<std::string, std::string>> bad{
        {"not-json.json", "this is not JSON {"},
        {"no-version.json", "{\"seq_len\": 4}"},
        {"newer.json", "{\"attnviz_session\": 999}"},
        {"too-long.json", "{\"attnviz_session\": 1, \"seq_len\": 100000000}"},
        {"bad-heads.json", "{\"attnviz_session\": 1, \"n_embd\": 12, \"n_head\": 5}"},
        {"over-cap.json", "{\"attnviz_session\": 1, \"n_embd\": 8, \"n_head\": 2, \"seq_len\": " +
                              std::to_string(max_seq_len) + "}"},
        {"empty.json", ""},
    };
    for (const auto& [name, text] : bad) std::ofstream(dir + "/" + name) << text;
    std::filesystem::create_directory(dir + "/a-directory.json");

    // Weights: good files at two sizes (C = 8, H = 2 and C = 24, H = 4), as save-weights
    // writes them; bad ones cut from a good one or written by hand.
    std::string error;
    for (auto [C, H] : {std::pair{8, 2}, std::pair{24, 4}}) {
        Config c = lesson_config();
        c.n_embd = C, c.n_head = H, c.seed = uint64_t(C);
        const std::string path = dir + "/good-" + std::to_string(C) + ".safetensors";
        if (!save_weights(path, make_experiment(c).weights, H, error)) throw std::runtime_error(error);
    }
    std::string good;
    {
        std::ifstream f(dir + "/good-8.safetensors", std::ios::binary);
        good.assign(std::istreambuf_iterator<char>(f), {});
    }
    std::string past_end = good;
    past_end[0] = char(0xff), past_end[1] = char(0xff); // header length far past the end
    std::string nan = good;
    for (size_t i = 0; i < 4; ++i) nan[nan.size() - 4 + i] = "\x00\x00\xc0\x7f"[i]; // last float NaN
    const std::vector<std::pair<std::string, std::string>> bad_weights{
        {"truncated.safetensors", good.substr(0, good.size() / 2)},
        {"header-past-end.safetensors", past_end},
        {"nan.safetensors", nan},
        {"text.safetensors", "qkv.weight = [1, 2, 3]\n"},
        {"empty.safetensors", ""},
    };
    for (const auto& [name, bytes] : bad_weights) std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

void remove_soak_files(const std::string& dir) {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
}

} // namespace attnviz
