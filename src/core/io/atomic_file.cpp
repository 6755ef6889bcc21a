// atomic_file.cpp: see atomic_file.h.
#include "atomic_file.h"
#include "text_util.h"
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace attnviz {

namespace {

std::string parent_dir(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

bool write_all(int fd, const char* p, size_t n) {
    while (n > 0) {
        const ssize_t put = ::write(fd, p, n);
        if (put < 0 && errno == EINTR) continue;
        if (put == 0) errno = EIO;
        if (put <= 0) return false;
        p += put;
        n -= size_t(put);
    }
    return true;
}

// Why the temporary file beside `path` could not be made, as the end of a sentence.
std::string create_failure(int e, const std::string& path) {
    const std::string dir = quote_path(parent_dir(path));
    if (e == ENOENT) return "the folder " + dir + " does not exist; give a path in an existing folder";
    if (e == EACCES || e == EPERM || e == EROFS) return "the folder " + dir + " is not writable; choose another folder";
    if (e == ENOTDIR) return dir + " is not a folder; give a path in an existing folder";
    return std::string(std::strerror(e)) + "; give a file path in a writable folder";
}

constexpr size_t buffer_bytes = 1 << 20;

} // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {}

AtomicFile::~AtomicFile() { abandon(); }

bool AtomicFile::open(std::string& error) {
    abandon();
    errno_ = 0;
    const size_t slash = path_.find_last_of('/');
    const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
    struct stat st {};
    if (base.empty() || (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode)))
        return fail("it is a directory, not a file; give a file name", error);
    // A fresh name per writer (O_EXCL), so two writers to one path never share a temporary
    // file; hidden, and the base cut short so the name stays within NAME_MAX.
    const std::string prefix =
        (slash == std::string::npos ? std::string() : path_.substr(0, slash + 1)) + "." + base.substr(0, 200) + ".tmp-";
    std::random_device rd;
    int e = 0;
    for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
        char suffix[32];
        std::snprintf(suffix, sizeof suffix, "%d-%08x", int(::getpid()), unsigned(rd()));
        tmp_ = prefix + suffix;
        // 0666: the kernel applies the umask, as it does for any new file.
        fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        e = errno;
        if (fd_ < 0 && e != EEXIST) break;
    }
    if (fd_ < 0) {
        tmp_.clear();
        return fail(create_failure(e, path_), error);
    }
    buf_.reserve(buffer_bytes);
    return true;
}

bool AtomicFile::flush_buffer() {
    if (errno_ == 0 && !buf_.empty() && !write_all(fd_, buf_.data(), buf_.size())) errno_ = errno ? errno : EIO;
    buf_.clear();
    return errno_ == 0;
}

bool AtomicFile::write(const void* data, size_t n) {
    if (fd_ < 0 && errno_ == 0) errno_ = EBADF; // not opened
    if (errno_ != 0) return false;
    const char* p = static_cast<const char*>(data);
    if (buf_.size() + n <= buffer_bytes) {
        buf_.append(p, n);
        return true;
    }
    if (!flush_buffer()) return false;
    if (n >= buffer_bytes) {
        if (!write_all(fd_, p, n)) errno_ = errno ? errno : EIO;
        return errno_ == 0;
    }
    buf_.append(p, n);
    return true;
}

bool AtomicFile::commit(std::string& error) {
    if (fd_ < 0) return fail(errno_ ? std::strerror(errno_) : "the file was not opened", error);
    flush_buffer();
    // EINVAL: the file system cannot sync (a pipe, some FUSE mounts); the data is written.
    if (errno_ == 0 && ::fsync(fd_) != 0 && errno != EINVAL) errno_ = errno;
    const int rc = ::close(fd_);
    fd_ = -1;
    if (errno_ == 0 && rc != 0) errno_ = errno;
    if (errno_ != 0)
        return fail(std::string("writing it failed (") + std::strerror(errno_) + "); nothing was changed", error);
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
        const int e = errno;
        return fail(std::string("cannot replace it (") + std::strerror(e) + "); nothing was changed", error);
    }
    tmp_.clear();
    // The rename is durable once the folder is synced. It has already happened, so a
    // failure here changes nothing the caller could act on and is not reported.
    const int dir = ::open(parent_dir(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
    return true;
}

void AtomicFile::abandon() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
    buf_.clear();
}

bool AtomicFile::fail(const std::string& reason, std::string& error) {
    abandon();
    error = escaped(path_) + ": cannot write the file: " + reason;
    return false;
}

bool write_file_atomically(const std::string& path, const std::string& data, std::string& error) {
    AtomicFile f(path);
    if (!f.open(error)) return false;
    f.write(data); // a failure here is reported by commit
    return f.commit(error);
}

} // namespace attnviz
