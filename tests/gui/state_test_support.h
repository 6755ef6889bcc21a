// state_test_support.h: helpers for tests of AppState without a window.
#pragma once
#include "app_state.h"
#include <cstring>

namespace attnviz_gui_test {

// Same shape and the same float bits.
inline bool same_bits(const attnviz::Mat& a, const attnviz::Mat& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           (a.size() == 0 || std::memcmp(a.data(), b.data(), sizeof(float) * size_t(a.size())) == 0); // empty: no data to compare
}

// The window's state on the lesson's example, after its first recompute.
inline attnviz::AppState lesson_state() {
    attnviz::AppState s;
    attnviz::init_app_state(s, attnviz::lesson_config(), attnviz::KernelChoice::reference);
    attnviz::recompute(s);
    return s;
}

} // namespace attnviz_gui_test
