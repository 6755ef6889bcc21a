// safetensors_files.cpp: safetensors files on disk, see safetensors.h: a header read with
// bounded reads, one tensor read on demand, and whole files mapped with mmap. The path is
// checked (a regular file of a sensible size) before anything is read or mapped.
#include "safetensors.h"
#include "safetensors_detail.h"
#include "text_util.h"
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnviz {

using detail::bytes_text;

// ---------------------------------------------------------------------------------------
// [SECTION] files
// ---------------------------------------------------------------------------------------

// An open file descriptor, closed on every path out.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

// Read exactly n bytes at offset, retrying short reads and EINTR.
static bool read_at(int fd, uint64_t offset, uint8_t* dst, uint64_t n) {
    while (n > 0) {
        size_t chunk = size_t(std::min<uint64_t>(n, uint64_t(1) << 30));
        ssize_t got = ::pread(fd, dst, chunk, off_t(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        dst += got;
        offset += uint64_t(got);
        n -= uint64_t(got);
    }
    return true;
}

// Open a path for reading after checking it is a regular file of a sensible size.
static bool open_checked(const std::string& path, Fd& f, uint64_t& size, std::string& error) {
    if (path.empty()) return fail(error, "''", "no file name given; give the path of a .safetensors weights file");
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (f.fd < 0) {
        int e = errno;
        if (e == ENOENT) return fail(error, path, "no such file; check the path");
        if (e == ENOTDIR) return fail(error, path, "a part of this path is not a directory; check the path");
        if (e == EACCES) return fail(error, path, "permission denied; make the file readable or copy it somewhere readable");
        return fail(error, path, std::string("cannot open the file (") + std::strerror(e) + ")");
    }
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) return fail(error, path, std::string("cannot inspect the file (") + std::strerror(errno) + ")");
    if (S_ISDIR(st.st_mode))
        return fail(error, path, "this is a directory, not a weights file; give the path of a .safetensors file");
    if (!S_ISREG(st.st_mode))
        return fail(error, path, "this is not a regular file (a device, FIFO or socket); give the path of a .safetensors file");
    size = uint64_t(st.st_size);
    if (size > max_safetensors_file_bytes)
        return fail(error, path,
                    "the file is " + bytes_text(size) + ", more than the " + bytes_text(max_safetensors_file_bytes) +
                        " a weights file may be; save only the attention layer you want to see");
    return true;
}

bool read_safetensors_header(const std::string& path, SafetensorsFile& out, std::string& error) {
    out = SafetensorsFile{};
    out.name = path;
    Fd f;
    uint64_t size = 0;
    if (!open_checked(path, f, size, error)) return false;
    uint8_t first8[8] = {};
    if (size >= 8 && !read_at(f.fd, 0, first8, 8))
        return fail(error, path, std::string("cannot read the file (") + std::strerror(errno) + ")");
    uint64_t n = 0;
    if (!parse_header_length(first8, size, path, n, error)) return false;
    std::string header(size_t(n), '\0'); // n <= max_safetensors_header_bytes and <= size - 8
    if (n > 0 && !read_at(f.fd, 8, (uint8_t*)&header[0], n))
        return fail(error, path, "the file could not be read to the end of its header; it may have changed while reading");
    return parse_header(header.data(), n, size, path, out, error);
}

bool read_tensor(const SafetensorsFile& file, const TensorInfo& t, std::vector<float>& out, std::string& error) {
    if (!dtype_supported(t.dtype)) {
        std::vector<float> none;
        return decode_tensor(file, t, nullptr, none, error); // the dtype sentence
    }
    Fd f;
    uint64_t size = 0;
    if (!open_checked(file.name, f, size, error)) return false;
    if (t.end < t.begin || t.end > file.data_bytes || file.data_start() + file.data_bytes != size)
        return fail(error, file.name, "the file changed since its header was read; load it again");
    std::vector<uint8_t> raw(size_t(t.end - t.begin)); // within the file, which is <= 4 GiB
    if (!raw.empty() && !read_at(f.fd, file.data_start() + t.begin, raw.data(), raw.size()))
        return fail(error, file.name, "tensor " + quote(t.name) + " could not be read; the file may have changed while reading");
    return decode_tensor(file, t, raw.data(), out, error);
}

// ---------------------------------------------------------------------------------------
// [SECTION] mapped files
// ---------------------------------------------------------------------------------------

bool MappedSafetensors::open(const std::string& path, std::string& error) {
    close();
    Fd f;
    uint64_t size = 0;
    if (!open_checked(path, f, size, error)) return false;
    if (size < 8) {
        uint64_t n = 0;
        const uint8_t zeros[8] = {};
        if (!parse_header_length(zeros, size, path, n, error)) return false;
    }
    void* p = ::mmap(nullptr, size_t(size), PROT_READ, MAP_PRIVATE, f.fd, 0);
    if (p == MAP_FAILED) return fail(error, path, std::string("cannot map the file (") + std::strerror(errno) + ")");
    bytes_ = static_cast<const uint8_t*>(p);
    size_ = size_t(size);
    // The weights are read once, front to back.
    ::madvise(p, size_, MADV_SEQUENTIAL);
    if (!parse_safetensors(bytes_, size_, path, file_, error)) {
        close();
        return false;
    }
    return true;
}

void MappedSafetensors::close() {
    if (bytes_) ::munmap(const_cast<uint8_t*>(bytes_), size_);
    bytes_ = nullptr;
    size_ = 0;
}

bool MappedSafetensors::decode(const TensorInfo& t, float* out, std::string& error) const {
    if (!bytes_) return fail(error, file_.name, "the file is not open; open it first");
    if (t.end < t.begin || t.end > file_.data_bytes)
        return fail(error, file_.name, "tensor " + quote(t.name) + " lies outside the file's data");
    const uint8_t* raw = bytes_ + file_.data_start() + t.begin;
    if (!decode_tensor_into(file_, t, raw, out, error)) return false;
    // Each tensor is read once: hand its whole pages back now, so that the file's pages and
    // the model's floats are not both in memory at the end of a load.
    const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
    const uintptr_t lo = (reinterpret_cast<uintptr_t>(raw) + page - 1) & ~(page - 1);
    const uintptr_t hi = (reinterpret_cast<uintptr_t>(raw) + (t.end - t.begin)) & ~(page - 1);
    if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
    return true;
}

} // namespace attnviz
