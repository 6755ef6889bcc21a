// test_hub_cache.cpp: the Hugging Face cache read without the network (hub_cache.h).
#include "cli/run_attnviz.h"
#include "hub_cache.h"
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace fs = std::filesystem;
using namespace attnviz;
using attnviz_test::TempDir;

TEST(HubCache, RepoIdsAndFolders) {
    std::string why;
    for (const char* ok : {"gpt2", "openai-community/gpt2", "distilgpt2", "a_b.c/d-e"})
        EXPECT_TRUE(valid_hub_repo_id(ok, why)) << ok << ": " << why;
    for (const char* bad : {"", "a/b/c", "-gpt2", "gpt2.", "a--b", "a..b", "a b", "/gpt2", "gpt2/"}) {
        why.clear();
        EXPECT_FALSE(valid_hub_repo_id(bad, why)) << bad;
        EXPECT_NE(why, "") << bad;
    }
    EXPECT_EQ(hub_repo_folder("gpt2"), "models--gpt2");
    EXPECT_EQ(hub_repo_folder("openai-community/gpt2"), "models--openai-community--gpt2");
    EXPECT_TRUE(valid_hub_revision("main", why));
    EXPECT_FALSE(valid_hub_revision("../main", why));
    EXPECT_FALSE(valid_hub_revision("", why));
}

TEST(HubCache, FolderFromEnvironment) {
    setenv("HF_HUB_CACHE", "/x/hub-cache", 1);
    setenv("HF_HOME", "/y/home", 1);
    setenv("XDG_CACHE_HOME", "/z/xdg", 1);
    EXPECT_EQ(hub_cache_dir(), "/x/hub-cache");
    unsetenv("HF_HUB_CACHE");
    EXPECT_EQ(hub_cache_dir(), "/y/home/hub");
    unsetenv("HF_HOME");
    EXPECT_EQ(hub_cache_dir(), "/z/xdg/huggingface/hub");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/h", 1);
    EXPECT_EQ(hub_cache_dir(), "/h/.cache/huggingface/hub");
}

// A snapshot as huggingface_hub writes it: relative links to blobs, refs/main without newline.
TEST(HubCache, SnapshotNeedsEveryFile) {
    TempDir cache;
    const std::string commit(40, 'a');
    const fs::path repo = fs::path(cache.path) / "models--org--m";
    fs::create_directories(repo / "blobs");
    fs::create_directories(repo / "snapshots" / commit);
    fs::create_directories(repo / "refs");
    std::ofstream(repo / "refs" / "main") << commit;
    int n = 0;
    for (const std::string& f : hub_required_files()) {
        const std::string etag = "etag" + std::to_string(n++);
        std::ofstream(repo / "blobs" / etag) << "bytes";
        if (f != "merges.txt") fs::create_symlink("../../blobs/" + etag, repo / "snapshots" / commit / f);
    }
    std::string why;
    EXPECT_FALSE(hub_cached_snapshot(cache.path, "org/m", "main", &why));
    EXPECT_NE(why.find("merges.txt"), std::string::npos) << why;
    fs::create_symlink("../../blobs/missing", repo / "snapshots" / commit / "merges.txt");
    EXPECT_FALSE(hub_cached_snapshot(cache.path, "org/m", "main", &why)) << "a dangling link is not a file";
    fs::remove(repo / "snapshots" / commit / "merges.txt");
    fs::create_symlink("../../blobs/etag3", repo / "snapshots" / commit / "merges.txt");
    const auto snap = hub_cached_snapshot(cache.path, "org/m", "main", &why);
    ASSERT_TRUE(snap) << why;
    EXPECT_EQ(*snap, (repo / "snapshots" / commit).string());
    EXPECT_TRUE(hub_cached_snapshot(cache.path, "org/m", commit)) << "a commit is looked up without refs/";
    EXPECT_FALSE(hub_cached_snapshot(cache.path, "org/m", "v2", &why));
}
