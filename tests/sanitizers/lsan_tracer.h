// lsan_tracer.h: recognises LeakSanitizer's own crash at a child's exit, so that the test
// helpers that start attnviz can run the child once more instead of failing the test.
//
// In a SANITIZE=1 build, LeakSanitizer stops every thread at exit and scans memory from a
// tracer thread. That tracer itself sometimes dies of a segfault when a thread is in the
// middle of exiting (google/sanitizers#1353: intermittent, not a leak report, the program's
// own work already done). It prints exactly these two lines and the child exits 1. It was
// seen once in about 300 sanitized GUI runs (a screenshot whose test passed on the rerun).
// A second cause repeats on every run of the same layout (the runtime's __tls_get_addr
// interceptor misreading a dynamic TLS block): tests/CMakeLists.txt turns that interceptor
// off (intercept_tls_get_addr=0), and this retry stays for the first.
// A leak report, an ASan or UBSan error or any other failure is never retried.
#pragma once
#include <cstdio>
#include <string>

namespace attnviz_sanitizers {

inline bool lsan_tracer_crashed(const std::string& err) {
    return err.find("Tracer caught signal") != std::string::npos &&
           err.find("LeakSanitizer has encountered a fatal error") != std::string::npos;
}

// Says on the test's own stderr that a run is repeated, and why, so the log shows it.
inline void note_lsan_retry(const std::string& what) {
    std::fprintf(stderr, "note: LeakSanitizer's tracer crashed at the exit of `%s`; running it once more\n",
                 what.c_str());
}

} // namespace attnviz_sanitizers
