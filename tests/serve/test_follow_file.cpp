// test_follow_file.cpp: the files the window publishes for the pages (the shown trained
// model's weights, a weights file's block): served from memory whole, at their paths only,
// replaced and removed; and made in memory as the files on disk.
#include "follow_server.h"
#include "model_io.h"
#include "weights_io.h"
#include "common/temp_dir.h"
#include "ws_client.h"
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

using attnviz::FollowServer;
using attnviz::ServeConfig;
using attnviz_test::free_port;
using attnviz_test::http_get;

namespace {

std::string body_of(const std::string& response) {
    const size_t at = response.find("\r\n\r\n");
    return at == std::string::npos ? "" : response.substr(at + 4);
}
std::string status_of(const std::string& response) { return response.substr(0, response.find("\r\n")); }

} // namespace

TEST(FollowFile, PublishedFilesAreServedWholeAtTheirPathsOnly) {
    attnviz_test::TempDir dir{"attnviz-file"};
    const std::string root = dir.path;
    dir.write("index.html", "<html>the page</html>");
    FollowServer server;
    ServeConfig c;
    c.bind = "127.0.0.1";
    c.port = free_port();
    c.site_dir = root;
    c.quiet = true;
    std::string error;
    ASSERT_TRUE(server.start(c, error)) << error;
    EXPECT_EQ(status_of(http_get(c.port, "/follow/model-1.safetensors")), "HTTP/1.1 404 Not Found");

    // Larger than one write (16 KiB), every byte value, a NUL among them.
    std::string bytes(100000, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char((i * 7919) % 256);
    server.publish_files({{"/follow/model-1.safetensors", bytes}});
    const std::string r = http_get(c.port, "/follow/model-1.safetensors", 5000);
    EXPECT_EQ(status_of(r), "HTTP/1.1 200 OK");
    EXPECT_NE(r.find("content-length: 100000"), std::string::npos) << r.substr(0, 300);
    EXPECT_TRUE(body_of(r) == bytes) << "got " << body_of(r).size() << " bytes";
    EXPECT_EQ(server.stats().files_sent, 1u);
    // Another path under /follow/ is not it.
    EXPECT_EQ(status_of(http_get(c.port, "/follow/model-2.safetensors")), "HTTP/1.1 404 Not Found");

    // Replaced whole: the new path only.
    server.publish_files({{"/follow/model-2.safetensors", "second"}, {"/follow/weights-1.safetensors", "third"}});
    EXPECT_EQ(body_of(http_get(c.port, "/follow/model-2.safetensors")), "second");
    EXPECT_EQ(body_of(http_get(c.port, "/follow/weights-1.safetensors")), "third");
    EXPECT_EQ(status_of(http_get(c.port, "/follow/model-1.safetensors")), "HTTP/1.1 404 Not Found");
    // Removed, and a path outside /follow/ is never taken.
    server.publish_files({});
    EXPECT_EQ(status_of(http_get(c.port, "/follow/model-2.safetensors")), "HTTP/1.1 404 Not Found");
    server.publish_files({{"/index.html", "not the page"}, {"/follow/", "no name"}});
    EXPECT_EQ(body_of(http_get(c.port, "/index.html")), "<html>the page</html>");
    EXPECT_EQ(status_of(http_get(c.port, "/follow/")), "HTTP/1.1 404 Not Found");
    server.stop();
}

// What the window publishes for a trained model and a weights file's block is made in memory
// (model_bytes, weights_bytes), byte for byte the file save_model and save_weights write.
TEST(FollowFile, TheWindowsFilesAreMadeInMemoryAsTheFilesOnDisk) {
    attnviz_test::TempDir dir{"attnviz-file-bytes"};
    auto file = [](const std::string& path) {
        std::ifstream f(path, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    };
    std::string error, bytes;
    attnviz::Model m;
    ASSERT_TRUE(attnviz::load_model(std::string(ATTNVIZ_TEST_DATA) + "/model_view/both.safetensors", m, error)) << error;
    ASSERT_TRUE(attnviz::save_model(dir.path + "/model.safetensors", m, error)) << error;
    ASSERT_TRUE(attnviz::model_bytes("the shown model", m, bytes, error)) << error;
    EXPECT_GT(bytes.size(), 1000u);
    EXPECT_TRUE(bytes == file(dir.path + "/model.safetensors"));
    attnviz::LoadedWeights w;
    ASSERT_TRUE(attnviz::load_weights(std::string(ATTNVIZ_TEST_DATA) + "/weights/gpt2_hf_c12.safetensors", 3, 1, w,
                                      error))
        << error;
    ASSERT_TRUE(attnviz::save_weights(dir.path + "/block.safetensors", w.weights, w.n_head, error)) << error;
    ASSERT_TRUE(attnviz::weights_bytes("the weights file", w.weights, w.n_head, bytes, error)) << error;
    EXPECT_GT(bytes.size(), 100u);
    EXPECT_TRUE(bytes == file(dir.path + "/block.safetensors"));
    // A model that cannot be written names itself, as a file's path would be named.
    m.h.clear();
    EXPECT_FALSE(attnviz::model_bytes("the shown model", m, bytes, error));
    EXPECT_NE(error.find("the shown model"), std::string::npos) << error;
}
