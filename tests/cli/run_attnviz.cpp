// run_attnviz.cpp: the child-process helper of the command-line tests; see run_attnviz.h.
#include "run_attnviz.h"
#include "sanitizers/lsan_tracer.h"
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace attnviz_test {

int RunResult::err_lines() const {
    int n = 0;
    for (char ch : err) n += ch == '\n';
    if (!err.empty() && err.back() != '\n') ++n;
    return n;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

nlohmann::json load_json(const std::string& path) { return nlohmann::json::parse(read_file(path)); }

static std::string temp_file_path(const char* stem) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + stem + ".XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    if (fd >= 0) close(fd);
    return name.data();
}

RunResult run_program(std::vector<std::string> argv_text, const char* stdout_path) {
    RunResult r;
    std::string out_path = temp_file_path("attnviz-cli-out"), err_path = temp_file_path("attnviz-cli-err");
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, stdout_path ? stdout_path : out_path.c_str(), O_WRONLY | O_TRUNC, 0);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_TRUNC, 0);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc == 0) {
        int wstatus = 0;
        while (waitpid(pid, &wstatus, 0) < 0) {}
        r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    }
    r.out = read_file(out_path);
    r.err = read_file(err_path);
    std::remove(out_path.c_str());
    std::remove(err_path.c_str());
    return r;
}

static RunResult run_once(const std::vector<std::string>& args, const char* stdout_path) {
    std::vector<std::string> argv_text = {ATTNVIZ_BIN};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    return run_program(std::move(argv_text), stdout_path);
}

RunResult run_attnviz(const std::vector<std::string>& args, const char* stdout_path) {
    RunResult r = run_once(args, stdout_path);
    if (attnviz_sanitizers::lsan_tracer_crashed(r.err)) {
        attnviz_sanitizers::note_lsan_retry("attnviz" + (args.empty() ? std::string() : " " + args[0] + " ..."));
        r = run_once(args, stdout_path);
    }
    return r;
}

bool same_float32(const nlohmann::json& ours, const nlohmann::json& ref, const std::string& path,
                  std::string& where) {
    if (ref.is_null() || ours.is_null()) {
        if (ref.is_null() && ours.is_null()) return true;
        where = path + ": ours " + ours.dump() + ", reference " + ref.dump();
        return false;
    }
    if (ref.is_number()) {
        if (ours.is_number() && float(ours.get<double>()) == float(ref.get<double>())) return true;
        where = path + ": ours " + ours.dump() + ", reference " + ref.dump();
        return false;
    }
    if (ref.is_array()) {
        if (!ours.is_array() || ours.size() != ref.size()) {
            where = path + ": ours has " + (ours.is_array() ? std::to_string(ours.size()) : "no") +
                    " elements, reference " + std::to_string(ref.size());
            return false;
        }
        for (size_t i = 0; i < ref.size(); ++i)
            if (!same_float32(ours[i], ref[i], path + "[" + std::to_string(i) + "]", where)) return false;
        return true;
    }
    if (ref.is_object()) {
        for (auto it = ref.begin(); it != ref.end(); ++it) {
            if (!ours.is_object() || !ours.contains(it.key())) {
                where = path + "." + it.key() + ": missing";
                return false;
            }
            if (!same_float32(ours[it.key()], it.value(), path + "." + it.key(), where)) return false;
        }
        return true;
    }
    if (ours == ref) return true;
    where = path + ": ours " + ours.dump() + ", reference " + ref.dump();
    return false;
}

} // namespace attnviz_test
