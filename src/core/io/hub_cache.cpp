// hub_cache.cpp: the Hugging Face cache, files only; see hub_cache.h.
#include "hub_cache.h"
#include "text_util.h" // quote
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace attnviz {

namespace fs = std::filesystem;

const std::vector<std::string>& hub_required_files() {
    static const std::vector<std::string> files = {"config.json", "model.safetensors", "vocab.json", "merges.txt"};
    return files;
}

static std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::string hub_cache_dir() {
    if (std::string v = env_or_empty("HF_HUB_CACHE"); !v.empty()) return v;
    if (std::string v = env_or_empty("HF_HOME"); !v.empty()) return v + "/hub";
    if (std::string v = env_or_empty("XDG_CACHE_HOME"); !v.empty()) return v + "/huggingface/hub";
    return env_or_empty("HOME") + "/.cache/huggingface/hub";
}

static bool id_char(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
           ch == '.';
}

// One part of an id (NAME or ORG): the Hub's rules for repository names.
static bool valid_id_part(const std::string& part, std::string& why) {
    if (part.empty()) return why = "has an empty part", false;
    for (char ch : part)
        if (!id_char(ch)) return why = "has a character other than letters, digits, '-', '_' and '.'", false;
    if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.')
        return why = "starts or ends a part with '-' or '.'", false;
    if (part.find("--") != std::string::npos || part.find("..") != std::string::npos)
        return why = "has \"--\" or \"..\"", false;
    return true;
}

bool valid_hub_repo_id(const std::string& id, std::string& error) {
    std::string why;
    const size_t slash = id.find('/');
    if (id.size() > 96) why = "is longer than 96 characters";
    else if (slash != std::string::npos && id.find('/', slash + 1) != std::string::npos) why = "has more than one '/'";
    else if (slash == std::string::npos) valid_id_part(id, why);
    else if (valid_id_part(id.substr(0, slash), why)) valid_id_part(id.substr(slash + 1), why);
    if (why.empty()) return true;
    error = quote(id, 40) + " is not a Hub model id: it " + why + "; give NAME or ORG/NAME, e.g. gpt2 or openai-community/gpt2";
    return false;
}

std::string hub_repo_folder(const std::string& id) {
    std::string folder = "models--";
    for (char ch : id) {
        if (ch == '/') folder += "--";
        else folder += ch;
    }
    return folder;
}

static bool is_commit_hash(const std::string& s) {
    if (s.size() != 40) return false;
    for (char ch : s)
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
    return true;
}

std::optional<std::string> hub_id_of_snapshot(const std::string& path) {
    std::filesystem::path p(path);
    while (!p.empty() && p.filename().empty()) p = p.parent_path(); // a trailing '/'
    if (!p.has_parent_path()) return std::nullopt;
    if (!is_commit_hash(p.filename().string())) p = p.parent_path(); // a file inside the snapshot
    if (!is_commit_hash(p.filename().string()) || p.parent_path().filename() != "snapshots") return std::nullopt;
    const std::string folder = p.parent_path().parent_path().filename().string();
    if (folder.rfind("models--", 0) != 0) return std::nullopt;
    std::string id = folder.substr(8);
    for (size_t at; (at = id.find("--")) != std::string::npos;) id.replace(at, 2, "/");
    std::string why;
    if (!valid_hub_repo_id(id, why)) return std::nullopt;
    return id;
}

bool valid_hub_revision(const std::string& revision, std::string& error) {
    // A branch or tag name: refs/<revision> is a file path, so no "..", no leading '/', no
    // control bytes or backslashes; "/" inside (refs/pr/1) is allowed as git allows it.
    bool ok = !revision.empty() && revision.size() <= 200 && revision.front() != '/' && revision.back() != '/' &&
              revision.find("..") == std::string::npos && revision.find("//") == std::string::npos;
    for (char ch : revision)
        if (static_cast<unsigned char>(ch) < 0x21 || ch == '\\' || ch == '~' || ch == '^' || ch == ':' || ch == '?' ||
            ch == '*' || ch == '[' || ch == 0x7f)
            ok = false;
    if (ok) return true;
    error = "--revision " + quote(revision, 40) + " is not a branch, tag or commit; give e.g. main or a 40-hex commit hash";
    return false;
}

static std::string read_small_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::optional<std::string> hub_cached_snapshot(const std::string& cache_dir, const std::string& id,
                                               const std::string& revision, std::string* why) {
    auto missing = [&](const std::string& what) -> std::optional<std::string> {
        if (why) *why = what;
        return std::nullopt;
    };
    const fs::path repo = fs::path(cache_dir) / hub_repo_folder(id);
    std::error_code ec;
    if (!fs::is_directory(repo, ec)) return missing("it is not in the cache " + quote_path(cache_dir));
    std::string commit = revision;
    if (!is_commit_hash(revision)) {
        const fs::path ref = repo / "refs" / revision;
        if (!fs::is_regular_file(ref, ec)) return missing("the cache has no revision " + quote(revision, 40) + " of it");
        commit = read_small_file(ref);
        while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r' || commit.back() == ' ')) commit.pop_back();
        if (!is_commit_hash(commit)) return missing("its refs/" + revision + " does not hold a commit hash");
    }
    const fs::path snapshot = repo / "snapshots" / commit;
    for (const std::string& file : hub_required_files()) {
        const fs::path p = snapshot / file;
        // is_regular_file and file_size follow a symlink to its blob: a dangling link fails.
        if (!fs::is_regular_file(p, ec) || fs::file_size(p, ec) == 0 || ec)
            return missing("its snapshot " + commit.substr(0, 12) + " lacks " + file);
    }
    return snapshot.string();
}

bool resolve_model_arg(const std::string& value, const std::string& revision, std::string& path,
                       std::string& shown_name, std::string& error) {
    std::error_code ec;
    if (fs::exists(value, ec)) {
        path = shown_name = value;
        return true;
    }
    // Plainly a path (absolute, ./, ~, a file name with a model file's extension, not an
    // id): left to the loader, whose message names the missing file.
    std::string why;
    auto ends_with = [&](const char* ext) {
        const std::string e = ext;
        return value.size() >= e.size() && value.compare(value.size() - e.size(), e.size(), e) == 0;
    };
    if (value.empty() || value[0] == '/' || value[0] == '.' || value[0] == '~' || ends_with(".safetensors") ||
        ends_with(".json") || ends_with(".bin") || !valid_hub_repo_id(value, why)) {
        path = shown_name = value;
        return true;
    }
    const std::string rev = revision.empty() ? "main" : revision;
    if (!valid_hub_revision(rev, error)) return false;
    const std::optional<std::string> snapshot = hub_cached_snapshot(hub_cache_dir(), value, rev, &why);
    if (!snapshot) {
        error = "--model " + quote(value, 60) + " is not a file or folder and " + why + "; download it first with `attnviz get " +
                value + (revision.empty() || revision == "main" ? "" : " --revision " + revision) + "`";
        return false;
    }
    path = *snapshot;
    shown_name = value;
    return true;
}

} // namespace attnviz
