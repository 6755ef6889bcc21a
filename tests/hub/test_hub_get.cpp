// test_hub_get.cpp: `attnviz get` and --model NAME against the mock Hub on 127.0.0.1
// (mock_hub.h), each test with its own cache folder (HF_HUB_CACHE), never ~/.cache.
#include "cli/run_attnviz.h"
#include "hub_download.h"
#include "mock_hub.h"
#include <openssl/evp.h>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnviz_test;

namespace {

const std::string source_dir = std::string(ATTNVIZ_TEST_DATA) + "/hub/tiny-gpt2";
const std::vector<std::string> model_files = {"config.json", "merges.txt", "model.safetensors", "vocab.json"};

std::string sha256_hex(const std::string& bytes) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr);
    std::string s;
    char two[3];
    for (unsigned int i = 0; i < n; ++i) {
        std::snprintf(two, sizeof two, "%02x", md[i]);
        s += two;
    }
    return s;
}

bool is_hex(const std::string& s, size_t n) {
    return s.size() == n && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

class HubGet : public ::testing::Test {
protected:
    TempDir cache;
    MockHub hub;
    const std::string id = "openai-community/gpt2";

    void SetUp() override {
        std::string error;
        ASSERT_TRUE(hub.add_repo(id, source_dir, error)) << error;
        hub.add_alias("gpt2", id);
        setenv("HF_HUB_CACHE", cache.path.c_str(), 1);
        for (const char* v : {"HF_TOKEN", "HF_HUB_OFFLINE", "HF_HOME", "HF_ENDPOINT"}) unsetenv(v);
    }
    void start() {
        std::string error;
        ASSERT_TRUE(hub.start(error)) << error;
        setenv("HF_ENDPOINT", hub.endpoint().c_str(), 1);
    }
    fs::path repo_dir(const std::string& name) const {
        std::string folder = "models--" + name;
        for (size_t p; (p = folder.find('/')) != std::string::npos;) folder.replace(p, 1, "--");
        return fs::path(cache.path) / folder;
    }
    fs::path snapshot(const std::string& name) const { return repo_dir(name) / "snapshots" / hub.commit(id); }
    std::string model_sha() const { return sha256_hex(read_file(source_dir + "/model.safetensors")); }
    // A repository folder for one test: the tiny model's files, some left out or replaced.
    std::string make_repo(TempDir& dir, const std::vector<std::string>& files, const std::string& config = "") {
        for (const std::string& f : files) fs::copy_file(source_dir + "/" + f, dir.path + "/" + f);
        if (!config.empty()) std::ofstream(dir.path + "/config.json") << config;
        return dir.path;
    }
};

void expect_failure(const RunResult& r, const std::string& must_contain) {
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_EQ(r.err.rfind("attnviz: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(must_contain), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}

} // namespace

// The layout huggingface_hub reads: relative links to blobs named by etag, refs/main = the
// commit (40 hex, no newline), each blob the source's bytes.
TEST_F(HubGet, FirstDownloadLaysOutTheCache) {
    start();
    const RunResult r = run_attnviz({"get", id});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, snapshot(id).string() + "\n");
    const std::string ref = read_file((repo_dir(id) / "refs" / "main").string());
    EXPECT_EQ(ref, hub.commit(id));
    EXPECT_TRUE(is_hex(ref, 40));
    for (const std::string& f : model_files) {
        const fs::path link = snapshot(id) / f;
        ASSERT_TRUE(fs::is_symlink(link)) << f;
        const std::string target = fs::read_symlink(link).string();
        ASSERT_EQ(target.rfind("../../blobs/", 0), 0u) << f << " -> " << target;
        const std::string etag = target.substr(12);
        EXPECT_TRUE(f == "model.safetensors" ? etag == model_sha() : is_hex(etag, 40)) << f << " " << etag;
        EXPECT_EQ(read_file(link.string()), read_file(source_dir + "/" + f)) << f;
    }
    for (const auto& e : fs::directory_iterator(repo_dir(id) / "blobs"))
        EXPECT_EQ(e.path().extension(), "") << "left behind: " << e.path();
    EXPECT_FALSE(fs::exists(snapshot(id) / "tokenizer.json")) << "the repository has none: its 404 is not an error";
}

// gpt2 is a rename on the Hub (307 to openai-community/gpt2); the cache keeps the name asked for.
TEST_F(HubGet, RenamedRepositoryFollowsItsRedirect) {
    start();
    const RunResult r = run_attnviz({"get", "gpt2"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, (repo_dir("gpt2") / "snapshots" / hub.commit(id)).string() + "\n");
    EXPECT_EQ(read_file((repo_dir("gpt2") / "refs" / "main").string()), hub.commit(id));
}

TEST_F(HubGet, SecondGetDownloadsNothing) {
    start();
    ASSERT_EQ(run_attnviz({"get", id}).status, 0);
    const int gets = hub.gets();
    EXPECT_GE(gets, 4);
    const RunResult again = run_attnviz({"get", id});
    EXPECT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(again.out, snapshot(id).string() + "\n");
    EXPECT_EQ(hub.gets(), gets) << "a cached model is not downloaded again";
}

// Cut halfway: exit 2, the .incomplete part kept, nothing in snapshots/; the next get sends
// Range and completes the same bytes.
TEST_F(HubGet, CutDownloadResumesWithRange) {
    start();
    const int64_t size = int64_t(fs::file_size(source_dir + "/model.safetensors"));
    hub.cut_after_once("model.safetensors", size / 2);
    const RunResult cut = run_attnviz({"get", id});
    expect_failure(cut, "resume");
    const fs::path part = repo_dir(id) / "blobs" / (model_sha() + ".incomplete");
    ASSERT_TRUE(fs::exists(part));
    EXPECT_EQ(int64_t(fs::file_size(part)), size / 2);
    EXPECT_FALSE(fs::exists(repo_dir(id) / "snapshots"));
    EXPECT_EQ(hub.range_gets(), 0);

    const RunResult resumed = run_attnviz({"get", id});
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_EQ(hub.range_gets(), 1);
    EXPECT_FALSE(fs::exists(part));
    EXPECT_EQ(read_file((snapshot(id) / "model.safetensors").string()), read_file(source_dir + "/model.safetensors"));
}

TEST_F(HubGet, WrongChecksumIsDeleted) {
    start();
    hub.corrupt("model.safetensors", true);
    const RunResult r = run_attnviz({"get", id});
    expect_failure(r, "checksum");
    EXPECT_FALSE(fs::exists(repo_dir(id) / "snapshots"));
    EXPECT_FALSE(fs::exists(repo_dir(id) / "blobs" / model_sha()));
    EXPECT_FALSE(fs::exists(repo_dir(id) / "blobs" / (model_sha() + ".incomplete")));
}

TEST_F(HubGet, MissingRepositoryAndFile) {
    TempDir no_merges;
    std::string error;
    ASSERT_TRUE(hub.add_repo("org/no-merges", make_repo(no_merges, {"config.json", "model.safetensors", "vocab.json"}), error));
    start();
    expect_failure(run_attnviz({"get", "nobody/nothing"}), "has no model nobody/nothing");
    expect_failure(run_attnviz({"get", "org/no-merges"}), "merges.txt");
    EXPECT_FALSE(fs::exists(repo_dir("org/no-merges") / "snapshots"));
    expect_failure(run_attnviz({"get", id, "--revision", "v9"}), "no revision v9");
}

TEST_F(HubGet, NotGpt2IsRefusedBeforeTheLargeFile) {
    TempDir bert;
    std::string error;
    ASSERT_TRUE(hub.add_repo("org/bert", make_repo(bert, {"model.safetensors", "vocab.json", "merges.txt"},
                                                   R"({"model_type": "bert"})"), error));
    start();
    expect_failure(run_attnviz({"get", "org/bert"}), "not a GPT-2 model");
    EXPECT_FALSE(fs::exists(repo_dir("org/bert") / "snapshots"));
    for (const std::string& line : hub.log()) EXPECT_EQ(line.find("GET storage"), std::string::npos) << line;
}

// 401 without the token and 200 with it; the token never reaches the storage host or the output.
TEST_F(HubGet, TokenGoesToTheHubOnly) {
    const std::string token = "hf_secretTOKEN123";
    hub.require_token(token);
    start();
    expect_failure(run_attnviz({"get", id}), "HF_TOKEN");
    setenv("HF_TOKEN", token.c_str(), 1);
    const RunResult r = run_attnviz({"get", id});
    unsetenv("HF_TOKEN");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(hub.storage_saw_authorization());
    EXPECT_EQ(r.out.find(token), std::string::npos);
    EXPECT_EQ(r.err.find(token), std::string::npos);
    bool storage_used = false;
    for (const std::string& line : hub.log()) storage_used |= line.rfind("GET storage", 0) == 0;
    EXPECT_TRUE(storage_used) << "the large file came from the storage listener";
}

TEST_F(HubGet, OfflineUsesOnlyTheCache) {
    start();
    setenv("HF_HUB_OFFLINE", "1", 1);
    expect_failure(run_attnviz({"get", id}), "HF_HUB_OFFLINE");
    EXPECT_EQ(hub.requests(), 0);
    unsetenv("HF_HUB_OFFLINE");
    ASSERT_EQ(run_attnviz({"get", id}).status, 0);
    const int requests = hub.requests();
    setenv("HF_HUB_OFFLINE", "1", 1);
    const RunResult r = run_attnviz({"get", id});
    unsetenv("HF_HUB_OFFLINE");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, snapshot(id).string() + "\n");
    EXPECT_EQ(hub.requests(), requests);
}

TEST_F(HubGet, NoHubToReach) {
    start();
    hub.stop(); // its port now refuses connections
    expect_failure(run_attnviz({"get", id}), "cannot reach the Hub");
}

// --model NAME reads the cache only: a cached model traces with the Hub unreachable, an
// uncached one is refused naming `attnviz get`, with no request either way.
TEST_F(HubGet, ModelNameResolvesFromTheCache) {
    start();
    expect_failure(run_attnviz({"trace", "--model", id, "--tokens", "1,2,3"}), "attnviz get " + id);
    EXPECT_EQ(hub.requests(), 0);
    ASSERT_EQ(run_attnviz({"get", id}).status, 0);
    const int requests = hub.requests();
    setenv("HF_HUB_OFFLINE", "1", 1);
    const RunResult r = run_attnviz({"trace", "--model", id, "--text", "the cat", "--layer", "1"});
    unsetenv("HF_HUB_OFFLINE");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("\"tokens\""), std::string::npos) << r.out.substr(0, 300);
    EXPECT_NE(r.out.find("\"hub_id\": \"" + id + "\""), std::string::npos) << r.out.substr(0, 300);
    EXPECT_EQ(hub.requests(), requests);
    expect_failure(run_attnviz({"trace", "--model", id, "--revision", "v2", "--tokens", "1"}), "--revision v2");
}

// The library the window's button calls: cancel stops a slow transfer and keeps the part.
TEST_F(HubGet, CancelStopsPromptlyAndKeepsThePart) {
    hub.set_slow(true);
    start();
    attnviz::HubGetOptions o = attnviz::hub_options_from_env(id, "main");
    std::atomic<bool> cancel{false};
    attnviz::HubGetResult result;
    std::thread worker([&] {
        result = attnviz::hub_get(o, [&](const attnviz::HubProgress& p) {
            if (p.file == "model.safetensors" && p.file_done > 0) cancel = true;
        }, &cancel);
    });
    worker.join(); // a 347 kB file at 16 KiB per 100 ms: a missed cancel still ends, and fails below
    EXPECT_FALSE(result.ok);
    EXPECT_TRUE(result.cancelled) << result.error;
    const fs::path part = repo_dir(id) / "blobs" / (model_sha() + ".incomplete");
    EXPECT_TRUE(fs::exists(part));
    EXPECT_LT(int64_t(fs::file_size(part)), int64_t(fs::file_size(source_dir + "/model.safetensors")));
    EXPECT_FALSE(fs::exists(repo_dir(id) / "snapshots"));
}

// Two gets of one model at once: the lock lets one fetch the large file while the other
// waits, then finds the blob complete; both print the same snapshot.
TEST_F(HubGet, TwoGetsAtOnceShareOneDownload) {
    hub.set_slow(true); // about two seconds for the large file: the two overlap
    start();
    RunResult a, b;
    std::thread first([&] { a = run_attnviz({"get", id}); });
    std::thread second([&] { b = run_attnviz({"get", id}); });
    first.join();
    second.join();
    EXPECT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(a.out, b.out);
    int storage_gets = 0;
    for (const std::string& line : hub.log()) storage_gets += line.rfind("GET storage", 0) == 0;
    EXPECT_EQ(storage_gets, 1);
    EXPECT_EQ(read_file((snapshot(id) / "model.safetensors").string()), read_file(source_dir + "/model.safetensors"));
}
