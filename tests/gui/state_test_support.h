// state_test_support.h: helpers for tests of AppState without a window.
#pragma once
#include "app_state.h"
#include "gpt_test_dir.h"
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <string>

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

// A trained model file read for the views (a failure fails the test and gives nullptr).
inline std::shared_ptr<const attnviz::TrainedInput> trained_input(const std::string& path, const std::string& text = "") {
    std::shared_ptr<const attnviz::TrainedInput> in;
    std::string error;
    EXPECT_TRUE(attnviz::read_trained_input(path, text, in, error)) << error;
    return in;
}

// The tiny GPT-2 (gpt_test_dir.h, with its tokenizer) on `text`.
inline std::shared_ptr<const attnviz::TrainedInput> tiny_gpt_input(const std::string& text) {
    std::shared_ptr<const attnviz::TrainedInput> in;
    std::string error;
    EXPECT_TRUE(attnviz::read_gpt_input(tiny_gpt_dir(true), std::nullopt, text, "", in, error)) << error;
    return in;
}

// The window's state showing `in` (nullptr: the lesson), after its recompute.
inline attnviz::AppState shown_model(const std::shared_ptr<const attnviz::TrainedInput>& in) {
    attnviz::AppState s = lesson_state();
    if (in) attnviz::request_trained_model(s, in);
    attnviz::recompute(s);
    return s;
}

// The same in the Generate view.
inline attnviz::AppState generating(const std::shared_ptr<const attnviz::TrainedInput>& in) {
    attnviz::AppState s = lesson_state();
    if (in) attnviz::request_trained_model(s, in);
    s.screen.view = attnviz::View::generate;
    attnviz::recompute(s);
    return s;
}

} // namespace attnviz_gui_test
