// test_generate.cpp: attnviz generate on the tiny GPT models of tests/data/gpt_tiny (both
// layouts), the tiny GPT-2 with its tokenizer in tests/data/hub, and a toy induction model:
// the JSON's shape and its consistency with trace's logits, the cache against --no-cache
// and --check, seeds, the block size, the streamed text, and every refusal.
#include "run_attnviz.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using attnviz_test::expect_usage_error;
using attnviz_test::run_attnviz;
using attnviz_test::run_json;
using attnviz_test::RunResult;
using attnviz_test::TempDir;
using nlohmann::json;

namespace {

const std::string data = ATTNVIZ_TEST_DATA "/gpt_tiny/";
const std::string gpt2_dir = data + "gpt2";                          // block size 64, V 1000
const std::string nano_file = data + "nanogpt_nobias.safetensors";
const std::string with_tokenizer = ATTNVIZ_TEST_DATA "/hub/tiny-gpt2"; // the same model, GPT-2's first 1000 tokens
const std::string induction = ATTNVIZ_TEST_DATA "/train/induction_s1_120.safetensors"; // block 25 with BOS
const std::string prompt = "1,500,2,999,42";

std::vector<std::string> generate(const std::string& model, const std::string& tokens, int max_new,
                                  std::vector<std::string> more = {}) {
    std::vector<std::string> a = {"generate", "--model", model, "--tokens", tokens, "--max-new", std::to_string(max_new)};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

std::vector<int> ids(const json& j) { return j.get<std::vector<int>>(); }

std::string joined(const std::vector<int>& v, const char* sep) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
    return s;
}

// The last row of trace's logits over `tokens`: what the step after them reads.
std::vector<float> trace_last_logits(const std::string& model, const std::vector<int>& tokens) {
    const json t = run_json({"trace", "--model", model, "--tokens", joined(tokens, ","), "--kernel", "reference"});
    return t["logits"][0].back().get<std::vector<float>>();
}

} // namespace

TEST(Generate, GreedyStepsAreTracesLastRowAndItsSoftmax) {
    const json j = run_json(generate(gpt2_dir, prompt, 6, {"--greedy", "--json", "--kernel", "reference"}));
    EXPECT_EQ(ids(j["prompt_tokens"]), (std::vector<int>{1, 500, 2, 999, 42}));
    ASSERT_EQ(j["tokens"].size(), 6u);
    ASSERT_EQ(j["steps"].size(), 6u);
    EXPECT_EQ(j["stop"], "max_new");
    EXPECT_FALSE(j.contains("text")); // no tokenizer beside gpt_tiny/gpt2
    EXPECT_FALSE(j.contains("check"));
    EXPECT_EQ(j["sampling"]["greedy"], true);
    std::vector<int> seq = ids(j["prompt_tokens"]);
    for (size_t i = 0; i < 6; ++i) {
        const json& s = j["steps"][i];
        EXPECT_EQ(s["pos"], int(seq.size()));
        EXPECT_EQ(s["token"], j["tokens"][i]);
        EXPECT_GE(s["ms"].get<double>(), 0.0);
        const json& top = s["top5"];
        ASSERT_EQ(top.size(), 5u);
        for (size_t k = 1; k < 5; ++k) EXPECT_GE(top[k - 1]["logit"].get<float>(), top[k]["logit"].get<float>()) << i;
        EXPECT_EQ(top[0]["token"], s["token"]); // greedy: the largest logit
        // The row the step read is trace's last row over the sequence so far, and greedy's
        // prob is the plain softmax of it at the chosen token (double here; float32 there).
        const std::vector<float> logits = trace_last_logits(gpt2_dir, seq);
        ASSERT_EQ(logits.size(), 1000u);
        const float mx = *std::max_element(logits.begin(), logits.end());
        double sum = 0;
        for (float v : logits) sum += std::exp(double(v) - mx);
        const int token = s["token"];
        EXPECT_EQ(std::max_element(logits.begin(), logits.end()) - logits.begin(), token);
        EXPECT_NEAR(s["prob"].get<double>(), std::exp(double(logits[size_t(token)]) - mx) / sum, 1e-6) << i;
        for (const json& t : top) {
            EXPECT_EQ(t["logit"].get<float>(), logits[t["token"].get<size_t>()]) << i; // reference: bit for bit
            EXPECT_NEAR(t["prob"].get<double>(), std::exp(t["logit"].get<double>() - mx) / sum, 1e-6) << i;
        }
        seq.push_back(token);
    }
}

// nanoGPT's generate loop in torch, argmax for the draw (scripts/gen_generate_reference.py):
// the command writes its tokens, up to the block size, with every step's five largest logits.
TEST(Generate, GreedyEqualsTorchTokenForToken) {
    const json ref = attnviz_test::load_json(ATTNVIZ_TEST_DATA "/generate/reference.json");
    ASSERT_EQ(ref["models"].size(), 3u);
    for (const auto& [name, r] : ref["models"].items()) {
        std::vector<int> prompt = ids(r["prompt"]);
        const std::string model = ATTNVIZ_TEST_DATA "/" + r["path"].get<std::string>();
        const bool toy = name == "toy_induction";
        if (toy) prompt.erase(prompt.begin()); // the command puts BOS first itself
        for (const char* kernel : {"reference", "fast"}) {
            const json j = run_json(generate(model, joined(prompt, ","), 1000, {"--json", "--kernel", kernel}));
            EXPECT_EQ(j["prompt_tokens"], r["prompt"]) << name;
            EXPECT_EQ(j["tokens"], r["tokens"]) << name << " " << kernel;
            EXPECT_EQ(j["stop"], "block_size");
            ASSERT_EQ(j["steps"].size(), r["steps"].size()) << name;
            for (size_t s = 0; s < j["steps"].size(); ++s) {
                const json& want = r["steps"][s]["top5"];
                const json& got = j["steps"][s]["top5"];
                for (size_t k = 0; k < 5; ++k) {
                    const double v = want[k][1].get<double>();
                    // Near-ties may swap places within 1e-4: compare each reference token's logit.
                    bool found = false;
                    for (const json& g : got)
                        if (g["token"] == want[k][0]) {
                            found = true;
                            EXPECT_NEAR(g["logit"].get<double>(), v, 1e-4 * std::max(1.0, std::fabs(v)))
                                << name << " step " << s;
                        }
                    EXPECT_TRUE(found || std::fabs(v - got[4]["logit"].get<double>()) <= 1e-4 * std::max(1.0, std::fabs(v)))
                        << name << " step " << s << " token " << want[k][0];
                }
            }
        }
    }
}

TEST(Generate, CachedAndNoCacheWriteTheSameTokensInBothLayouts) {
    for (const std::string& model : {gpt2_dir, nano_file}) {
        const json cached = run_json(generate(model, prompt, 12, {"--json"}));
        const json slow = run_json(generate(model, prompt, 12, {"--json", "--no-cache"}));
        EXPECT_EQ(cached["cache"], true);
        EXPECT_EQ(slow["cache"], false);
        EXPECT_EQ(cached["tokens"], slow["tokens"]) << model;
        for (size_t i = 0; i < 12; ++i) EXPECT_EQ(cached["steps"][i]["top5"], slow["steps"][i]["top5"]) << model << " " << i;
    }
}

TEST(Generate, CheckAgreesWithTheFullForwardUpToTheBlockSize) {
    for (const std::string& model : {gpt2_dir, nano_file})
        for (const char* kernel : {"reference", "fast"}) {
            // 5 prompt tokens and a block size of 64: room for 59, fewer than asked.
            const json j = run_json(generate(model, prompt, 100, {"--json", "--check", "--kernel", kernel}));
            EXPECT_EQ(j["kernel"], kernel);
            EXPECT_EQ(j["stop"], "block_size") << model << " " << kernel;
            EXPECT_EQ(j["tokens"].size(), 59u);
            EXPECT_EQ(j["steps"].back()["pos"], 63);
            ASSERT_TRUE(j.contains("check"));
            EXPECT_LE(j["check"]["max_abs_diff_logits"].get<double>(), 1e-5) << model << " " << kernel;
        }
    // Exactly the room: max_new.
    EXPECT_EQ(run_json(generate(gpt2_dir, prompt, 59, {"--json"}))["stop"], "max_new");
}

TEST(Generate, SeedsRepeatAndDiffer) {
    auto sample = [](const char* seed) {
        return run_json(generate(gpt2_dir, prompt, 40, {"--json", "--temperature", "1", "--seed", seed}));
    };
    const json a = sample("7"), b = sample("7"), c = sample("8");
    EXPECT_EQ(a["sampling"]["greedy"], false);
    EXPECT_EQ(a["sampling"]["seed"], 7);
    EXPECT_EQ(a["tokens"], b["tokens"]);
    EXPECT_NE(a["tokens"], c["tokens"]);
    // A sampled token's prob is its probability in the distribution, the top five's among them.
    for (const json& s : a["steps"])
        for (const json& t : s["top5"]) {
            if (t["token"] == s["token"]) {
                EXPECT_EQ(t["prob"], s["prob"]);
            }
        }
}

TEST(Generate, TopKCutsAndTopK1IsGreedy) {
    const json greedy = run_json(generate(gpt2_dir, prompt, 10, {"--json"}));
    const json k1 = run_json(generate(gpt2_dir, prompt, 10, {"--json", "--temperature", "2", "--top-k", "1", "--seed", "3"}));
    EXPECT_EQ(greedy["tokens"], k1["tokens"]);
    for (const json& s : k1["steps"]) EXPECT_EQ(s["prob"].get<float>(), 1.f);
    const json k2 = run_json(generate(gpt2_dir, prompt, 10, {"--json", "--temperature", "1", "--top-k", "2"}));
    for (const json& s : k2["steps"]) {
        const json& top = s["top5"];
        EXPECT_NEAR(top[0]["prob"].get<double>() + top[1]["prob"].get<double>(), 1.0, 1e-6);
        for (size_t k = 2; k < 5; ++k) EXPECT_EQ(top[k]["prob"].get<float>(), 0.f);
        EXPECT_TRUE(s["token"] == top[0]["token"] || s["token"] == top[1]["token"]);
    }
}

TEST(Generate, StreamsTheTextOrTheIds) {
    // With a tokenizer: stdout is the generated text, the JSON's text and its steps' texts.
    const json j = run_json({"generate", "--model", with_tokenizer, "--text", "The cat", "--max-new", "8", "--json"});
    ASSERT_TRUE(j.contains("text"));
    std::string pieces;
    for (const json& s : j["steps"]) pieces += s["text"].get<std::string>();
    EXPECT_EQ(pieces, j["text"].get<std::string>());
    RunResult r = run_attnviz({"generate", "--model", with_tokenizer, "--text", "The cat", "--max-new", "8"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, j["text"].get<std::string>() + "\n");
    // Without one: the ids, separated by spaces.
    const json k = run_json(generate(gpt2_dir, prompt, 5, {"--json"}));
    r = run_attnviz(generate(gpt2_dir, prompt, 5));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, joined(ids(k["tokens"]), " ") + "\n");
}

TEST(Generate, HubIdReadsTheCachedSnapshot) {
    // A Hugging Face cache holding the tiny GPT-2 as tiny/gpt2 at main: --model tiny/gpt2 reads it
    // (never the network), as trace --model does.
    namespace fs = std::filesystem;
    TempDir cache;
    const std::string commit(40, 'a');
    const fs::path repo = fs::path(cache.path) / "models--tiny--gpt2";
    fs::create_directories(repo / "snapshots" / commit);
    fs::create_directories(repo / "refs");
    std::ofstream(repo / "refs" / "main") << commit;
    for (const char* f : {"config.json", "model.safetensors", "vocab.json", "merges.txt"})
        fs::copy_file(fs::path(with_tokenizer) / f, repo / "snapshots" / commit / f);
    ::setenv("HF_HUB_CACHE", cache.path.c_str(), 1);
    const json hub = run_json({"generate", "--model", "tiny/gpt2", "--text", "The cat", "--max-new", "4", "--json"});
    RunResult missing = run_attnviz({"generate", "--model", "tiny/gpt3", "--text", "The cat", "--max-new", "4"});
    ::unsetenv("HF_HUB_CACHE");
    const json dir = run_json({"generate", "--model", with_tokenizer, "--text", "The cat", "--max-new", "4", "--json"});
    EXPECT_EQ(hub["prompt_tokens"], dir["prompt_tokens"]);
    EXPECT_EQ(hub["tokens"], dir["tokens"]);
    EXPECT_EQ(hub["text"], dir["text"]);
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("attnviz get tiny/gpt3"), std::string::npos) << missing.err;
}

TEST(Generate, ToyInductionModelWritesLettersAfterBos) {
    const json j = run_json({"generate", "--model", induction, "--text", "c f a d c f a", "--max-new", "3", "--json", "--check"});
    const std::vector<int> p = ids(j["prompt_tokens"]);
    ASSERT_EQ(p.size(), 8u);
    EXPECT_EQ(p[0], 16); // BOS = V
    EXPECT_EQ(p[1], 2);  // c
    EXPECT_EQ(j["block_size"], 25);
    ASSERT_EQ(j["steps"].size(), 3u);
    EXPECT_EQ(j["steps"][0]["pos"], 8);
    EXPECT_EQ(j["check"]["max_abs_diff_logits"].get<float>(), 0.f); // reference kernel: bit for bit
    // The letters stream as --text takes them.
    RunResult r = run_attnviz({"generate", "--model", induction, "--text", "c f a d c f a", "--max-new", "3"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, j["text"].get<std::string>() + "\n");
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), ' '), 2);
    // --tokens: ids of the vocabulary, BOS still put first.
    const json t = run_json({"generate", "--model", induction, "--tokens", "2,5,0,3,2,5,0", "--max-new", "3", "--json"});
    EXPECT_EQ(t["prompt_tokens"], j["prompt_tokens"]);
    EXPECT_EQ(t["tokens"], j["tokens"]);
}

TEST(Generate, StdoutThatRefusesTheOutputIsStatus1) {
    for (const char* json : {"--json", "--greedy"}) {
        RunResult r = run_attnviz(generate(gpt2_dir, prompt, 3, {json}), "/dev/full");
        EXPECT_EQ(r.status, 1) << json << ": " << r.err;
        EXPECT_EQ(r.err_lines(), 1) << r.err;
        EXPECT_NE(r.err.find("could not write the"), std::string::npos) << r.err;
    }
}

TEST(Generate, HelpExplainsTheOptions) {
    RunResult r = run_attnviz({"generate", "--help"});
    EXPECT_EQ(r.status, 0);
    for (const char* s : {"--max-new", "--greedy", "--temperature", "--top-k", "--top-p", "--no-cache", "--check", "KV cache"})
        EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST(Generate, BadInputIsOneSentence) {
    const std::vector<std::string> ok = generate(gpt2_dir, prompt, 3);
    auto with = [&](std::vector<std::string> more) {
        std::vector<std::string> a = ok;
        a.insert(a.end(), more.begin(), more.end());
        return a;
    };
    for (const char* t : {"0", "-1", "nan", "inf"}) expect_usage_error(with({"--temperature", t}), "use --greedy");
    expect_usage_error(with({"--temperature", "warm"}), "'warm' is not a number");
    for (const char* k : {"0", "-3"}) expect_usage_error(with({"--temperature", "1", "--top-k", k}), std::string("--top-k '") + k);
    for (const char* p : {"0", "1.5", "-0.1", "nan"})
        expect_usage_error(with({"--temperature", "1", "--top-p", p}), std::string("--top-p '") + p + "' is not in (0, 1]");
    for (const char* n : {"0", "-2"}) expect_usage_error(generate(gpt2_dir, prompt, 0, {"--max-new", n}), std::string("--max-new '") + n);
    expect_usage_error({"generate", "--model", gpt2_dir, "--tokens", prompt}, "needs --max-new");
    expect_usage_error(generate(gpt2_dir, "", 3), "empty prompt");
    expect_usage_error(generate(gpt2_dir, " , ", 3), "empty prompt");
    expect_usage_error({"generate", "--model", with_tokenizer, "--text", "", "--max-new", "3"}, "--text is empty");
    expect_usage_error({"generate", "--model", gpt2_dir, "--max-new", "3"}, "needs a prompt");
    std::string full = "1";
    for (int i = 1; i < 64; ++i) full += ",7";
    expect_usage_error(generate(gpt2_dir, full, 3), "already the block size of 64");
    expect_usage_error({"generate", "--model", induction, "--text", "a b c d e f g h i j k l a b c d e f g h i j k l",
                        "--max-new", "1"},
                       "already the block size of 25");
    for (const char* opt : {"--temperature", "--top-k", "--top-p", "--seed"})
        expect_usage_error(with({"--greedy", opt, "1"}), std::string("--greedy takes the most likely token at every step, so ") + opt);
    expect_usage_error({"generate", "--model", ATTNVIZ_TEST_DATA "/train/prev_s3_60.safetensors", "--text", "a b",
                        "--max-new", "1"},
                       "prev");
    expect_usage_error(generate(gpt2_dir, "1,1000", 3), "'1000' is not a token id");
    expect_usage_error(generate(induction, "1,16", 3), "'16' is not a token id");
    expect_usage_error({"generate", "--model", induction, "--text", "a ^ b", "--max-new", "1"}, "'^' is not in the vocabulary");
    expect_usage_error({"generate", "--tokens", prompt, "--max-new", "3"}, "generate needs --model");
    expect_usage_error(with({"--text", "the cat"}), "not both");
    expect_usage_error(with({"--check", "--no-cache"}), "--check");
    expect_usage_error(with({"--kernel", "quick"}), "'quick'");
    expect_usage_error(generate(ATTNVIZ_TEST_DATA "/no/such/model", prompt, 3), "no/such/model");
}
