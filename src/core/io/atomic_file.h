// atomic_file.h: every file attnviz writes appears whole or not at all.
//
// The bytes go to a new, uniquely named file beside the target (so two writers never share
// one), which is flushed to disk, renamed over the target and made durable by syncing the
// directory. On any failure the temporary file is removed and the target, if it existed,
// is left exactly as it was; the error is one sentence, "<path>: cannot write the file:
// <reason>; <what to do>".
#pragma once
#include <cstddef>
#include <string>

namespace attnviz {

class AtomicFile {
public:
    explicit AtomicFile(std::string path);
    ~AtomicFile(); // abandons an uncommitted file
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    // Creates the temporary file. False, with `error` set, when the target cannot be
    // written (a directory, a missing or read-only folder).
    bool open(std::string& error);
    // Appends bytes; after the first failure every call returns false and writes nothing,
    // and commit() reports that failure. Buffered: call with pieces of any size.
    bool write(const void* data, size_t n);
    bool write(const std::string& s) { return write(s.data(), s.size()); }
    // Flushes, syncs and renames the file into place. False, with `error` set, when any
    // step (or an earlier write) failed; the target is then untouched.
    bool commit(std::string& error);

    const std::string& path() const { return path_; }

private:
    std::string path_, tmp_;
    int fd_ = -1;
    int errno_ = 0;  // first failure of write()
    std::string buf_;

    bool flush_buffer();
    void abandon();
    bool fail(const std::string& reason, std::string& error);
};

// `data` as the whole content of `path`, through AtomicFile.
bool write_file_atomically(const std::string& path, const std::string& data, std::string& error);

} // namespace attnviz
