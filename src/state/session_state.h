// session_state.h: the window's state as a session file (session.h) and back.
#pragma once
#include "app_state.h"
#include "session.h"

namespace attnviz {

// What a session file records of the state on screen.
Session to_session(const AppState& s);
// Checks the session against what the window can show (sizes under its memory cap, a known
// view and theme, words that match T, a weights file that still reads and matches C); on
// failure `error` is one sentence and `s`
// is untouched. On success the state is set to the session's and the next recompute applies it.
bool apply_session(AppState& s, const Session& ss, std::string& error);

// The screen's part of a session alone (view, step, theme, palette, font scale, answers
// shown), checked as apply_session checks it: a page showing a teacher's GPT layer
// (follow_gpt.h), whose numbers come beside the session.
bool apply_session_screen(AppState& s, const Session& ss, std::string& error);

// Writes the session file and, when the Train view was used, its weights beside it
// (train_weights_path); on failure `error` is one sentence and the session file is not written.
bool write_session_files(const std::string& path, const AppState& s, std::string& error);

// The side panel's Save / Open (and Ctrl+S / Ctrl+O): the result, or why it failed, goes to
// s.status; a failed open keeps the current state.
void save_session_file(AppState& s, const std::string& path);
void open_session_file(AppState& s, const std::string& path);

// The numbers on screen, to tell two windows (the teacher's and a page that follows it)
// show the same: "T C H " and a 64-bit FNV-1a hash, in hex, of the bits of the shown
// trace's x, every head's weights and y. Equal only when every float is equal bit for bit.
std::string shown_fingerprint(const AppState& s);
// The Model view's grid the same way: "HEADS HASH" of every layer's softmax weights in
// model_base ("0 ..." when it holds none).
std::string grid_fingerprint(const AppState& s);
// The Train view's run the same way: "STEP HASH SUM SUM_ABS", the hash of every parameter
// of its latest model in parameters() order, and their sum and sum of magnitudes (for
// builds whose products round differently: the web's Eigen, the window's OpenBLAS); "none"
// without a run.
std::string train_fingerprint(const AppState& s);
// The Generate view's generation the same way: "T PROMPT STEPS HASH", the hash of its tokens,
// the picture's rows a following page has (follow_generate.h) and the next-token bars'
// tokens and chances; "none" before it follows the shown input.
std::string generate_fingerprint(const AppState& s);

} // namespace attnviz
