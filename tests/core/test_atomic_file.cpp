// AtomicFile: a file appears whole or not at all. Two writers to one path never mix; a
// failed write (a missing folder, a directory as the target, a full disk) leaves the old
// file as it was and no temporary file beside it; the session file is written this way.
#include "common/temp_dir.h"
#include "atomic_file.h"
#include "session.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace attnviz;

namespace {

using attnviz_test::TempDir;

std::string read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

void write_plain(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// The names in `dir`, "." and ".." left out.
std::vector<std::string> entries(const std::string& dir) {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (dirent* e = ::readdir(d))
            if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
        ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

// Runs `write` in a child process whose files may grow to `limit` bytes at the most, as
// on a full disk: past it, write() fails with EFBIG. Returns the child's exit status:
// 0 when the write succeeded, 1 when it failed with a one-line sentence naming `path`,
// 2 when it failed otherwise.
template <class F>
int with_file_size_limit(rlim_t limit, const std::string& path, F write) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        std::signal(SIGXFSZ, SIG_IGN);
        rlimit r{limit, limit};
        ::setrlimit(RLIMIT_FSIZE, &r);
        std::string error;
        if (write(error)) std::_Exit(0);
        const bool sentence = error.find(path) != std::string::npos && error.find('\n') == std::string::npos &&
                              error.find("nothing was changed") != std::string::npos;
        std::_Exit(sentence ? 1 : 2);
    }
    int status = -1;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

TEST(AtomicFile, WritesTheWholeContentAndNothingElse) {
    TempDir dir;
    const std::string path = dir.path + "/a.bin";
    std::string data(3 << 20, '\0'); // larger than the writer's buffer
    for (size_t i = 0; i < data.size(); ++i) data[i] = char(i * 7 + i / 4096);
    AtomicFile f(path);
    std::string error;
    ASSERT_TRUE(f.open(error)) << error;
    EXPECT_EQ(entries(dir.path).size(), 1u); // the temporary file, not yet the target
    EXPECT_EQ(::access(path.c_str(), F_OK), -1);
    ASSERT_TRUE(f.write(data.data(), 100));
    ASSERT_TRUE(f.write(data.data() + 100, data.size() - 100));
    ASSERT_TRUE(f.commit(error)) << error;
    EXPECT_EQ(read_all(path), data);
    EXPECT_EQ(entries(dir.path), std::vector<std::string>{"a.bin"});
    // A new file gets 0666 minus the umask, as any file the user makes (not mkstemp's 0600).
    const mode_t mask = ::umask(022);
    ::umask(mask);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0666u & ~mask);
}

TEST(AtomicFile, TwoWritersToOnePathBothSucceedAndOneWholeContentWins) {
    TempDir dir;
    const std::string path = dir.path + "/shared.json";
    const std::string a(2 << 20, 'a'), b((3 << 20) + 17, 'b');
    for (int round = 0; round < 10; ++round) {
        bool ok_a = false, ok_b = false;
        std::string err_a, err_b;
        std::thread ta([&] { ok_a = write_file_atomically(path, a, err_a); });
        std::thread tb([&] { ok_b = write_file_atomically(path, b, err_b); });
        ta.join();
        tb.join();
        EXPECT_TRUE(ok_a) << err_a;
        EXPECT_TRUE(ok_b) << err_b;
        const std::string got = read_all(path);
        EXPECT_TRUE(got == a || got == b) << "round " << round << ": " << got.size() << " bytes";
        EXPECT_EQ(entries(dir.path), std::vector<std::string>{"shared.json"});
    }
}

TEST(AtomicFile, AFailedWriteLeavesTheOldFileAndNoTemporaryFile) {
    TempDir dir;
    const std::string path = dir.path + "/keep.txt";
    write_plain(path, "the old content\n");
    const std::vector<std::string> before = entries(dir.path);

    // The disk fills up half way: EFBIG past 64 KiB.
    const std::string big(1 << 20, 'x');
    EXPECT_EQ(with_file_size_limit(1 << 16, path, [&](std::string& e) { return write_file_atomically(path, big, e); }), 1);
    EXPECT_EQ(read_all(path), "the old content\n");
    EXPECT_EQ(entries(dir.path), before);

    // A missing folder; a commit after a failed open fails too.
    std::string error;
    AtomicFile never(dir.path + "/no/such/folder/x.txt");
    EXPECT_FALSE(never.open(error));
    EXPECT_NE(error.find("x.txt"), std::string::npos) << error;
    EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
    EXPECT_FALSE(never.commit(error));

    // A folder that is a file.
    EXPECT_FALSE(write_file_atomically(path + "/inside.txt", "text", error));
    EXPECT_NE(error.find("not a folder"), std::string::npos) << error;
    // A directory as the target.
    EXPECT_FALSE(write_file_atomically(dir.path, "text", error));
    EXPECT_NE(error.find("directory"), std::string::npos) << error;
    EXPECT_FALSE(write_file_atomically(dir.path + "/", "text", error));
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_EQ(read_all(path), "the old content\n");
    EXPECT_EQ(entries(dir.path), before);
}

TEST(AtomicFile, ErrorSentencesShowControlCharactersEscaped) {
    TempDir dir;
    std::string error;
    EXPECT_FALSE(write_file_atomically(dir.path + "/no\nsuch/x.txt", "text", error));
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_NE(error.find("no\\nsuch"), std::string::npos) << error;
}

TEST(AtomicFile, SessionFilesAreWrittenThroughIt) {
    TempDir dir;
    const std::string path = dir.path + "/lesson.json";
    Session s;
    s.theme = "light";
    std::string error;
    // A writer with one fixed temporary name ("lesson.json.tmp") fails when that name is
    // taken, here by a folder; a fresh name per writer does not care.
    ASSERT_EQ(::mkdir((path + ".tmp").c_str(), 0755), 0);
    ASSERT_TRUE(write_session(path, s, error)) << error;
    Session back;
    ASSERT_TRUE(read_session(path, back, error)) << error;
    EXPECT_EQ(back.theme, "light");
    const std::vector<std::string> before = entries(dir.path);
    // And a full disk leaves the saved session as it was.
    s.tokens.assign(200, std::string(400, 'w'));
    s.config.seq_len = 200;
    EXPECT_EQ(with_file_size_limit(4096, path, [&](std::string& e) { return write_session(path, s, e); }), 1);
    ASSERT_TRUE(read_session(path, back, error)) << error;
    EXPECT_TRUE(back.tokens.empty());
    EXPECT_EQ(entries(dir.path), before);
}
