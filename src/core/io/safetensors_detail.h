// safetensors_detail.h: what safetensors.cpp and safetensors_files.cpp share; not part of
// the public API (safetensors.h).
#pragma once
#include <cstdint>
#include <string>

namespace attnviz::detail {

// "12 bytes", "1.5 MiB", "4 GiB": a file size in error sentences.
std::string bytes_text(uint64_t n);

} // namespace attnviz::detail
