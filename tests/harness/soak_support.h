// soak_support.h: what the soak (soak.h) measures with and opens: the process's memory,
// and a private directory of good and bad session and weights files.
#pragma once
#include <string>

namespace attnviz {

// Resident set size in MB (-1 if unreadable); under AddressSanitizer, the bytes allocated
// and not yet freed instead, since RSS there only grows (the quarantine, the shadow).
double rss_mb();

// Writes the files the run opens into a new temporary directory, whose path is in `dir` as
// soon as it exists (so that remove_soak_files can clean up after a throw).
// Bad ones: not JSON, JSON that is no session, a newer version, sizes over the limits, an
// empty file, a directory; weights cut short, a header past the end, a NaN, text, empty.
// Good ones: weights at (C, H) = (8, 2) and (24, 4) as save-weights writes them (good-8,
// good-24); good sessions are saved from the state itself during the run. Throws
// std::runtime_error when the directory or a file cannot be made.
void make_soak_files(std::string& dir);
// Removes that directory and everything in it.
void remove_soak_files(const std::string& dir);

} // namespace attnviz
