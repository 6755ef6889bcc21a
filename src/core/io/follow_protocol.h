// follow_protocol.h: the names of "Follow the teacher" (attnviz --serve, docs/views.md), spelt
// once for both sides: the server (src/serve), the teacher's window (src/app/serve_link.cpp),
// the state layer's parts of a GPT model's message (src/state/follow_gpt*.cpp) and the page
// (src/app/web_follow.cpp, compiled to WebAssembly). Constants only: every layer may include it.
//
//   GET /...              the site's files, each with the header  mark_header: subprotocol
//   GET info_path         {"follow":socket_path,"protocol":subprotocol}
//   GET files_prefix KIND-N file_suffix     a file the window publishes (?code_param=CODE)
//   ws://HOST:PORT socket_path?code_param=CODE, subprotocol `subprotocol`
//     window -> page   the state: the session JSON (session.h) with state_model,
//                      state_weights or state_gpt beside it (the files' URLs; a GPT model's
//                      header, follow_gpt.h, whose gpt_* sections are read apart)
//                      {"answers_cleared":Q}                               (Q = -1: every question)
//     page -> window   {"answer":{"page":"ID","question":Q,"choice":C}}   (ID: page_id_chars, 1 to page_id_max)
//     closes           close_code (the class code is missing, wrong or changed: the page asks
//                      for it), close_full (the class is full: the page explores on its own)
//
// web/page.js cannot include this: the names it spells again are marked "page.js" below, and
// the test follow_protocol_names checks that page.js still spells each of them. The fields of
// a GPT model's header inside its sections are follow_gpt.h's, follow_gpt_probes.h's and
// follow_generate.h's, each written and read by one pair of functions in src/state.
#pragma once
#include <cstddef>

namespace attnviz::follow_protocol {

// HTTP and the WebSocket.
constexpr const char* subprotocol = "attnviz-follow";   // the WebSocket's subprotocol, and the mark's value
constexpr const char* mark_header = "x-attnviz-follow"; // every file the window serves carries it
constexpr const char* socket_path = "/follow";          // where pages follow
constexpr const char* info_path = "/follow.json";       // {"follow":..., "protocol":...}
constexpr const char* info_follow = "follow";
constexpr const char* info_protocol = "protocol";
constexpr const char* files_prefix = "/follow/";        // the files the window publishes, from memory
constexpr const char* file_model = "model";             // /follow/model-N.safetensors: a trained model
constexpr const char* file_weights = "weights";         // /follow/weights-N.safetensors: a weights file's block
constexpr const char* file_gpt = "gpt";                 // /follow/gpt-PART-N.safetensors (PART: to_string(GptPart))
constexpr const char* file_suffix = ".safetensors";
constexpr const char* code_param = "code";              // page.js: the address's ?code=CODE, the class code
constexpr int close_code = 4401;                        // the class code is missing, wrong or changed
constexpr int close_full = 1008;                        // the class is full (policy violation)

// The window's state message: the session JSON and, beside it, the URLs of the files it names.
constexpr const char* state_model = "follow_model";     // a trained model's weights (files_prefix file_model-N)
constexpr const char* state_weights = "follow_weights"; // a weights file's block, read as layer 0
constexpr const char* state_gpt = "follow_gpt";         // a GPT model: what is on screen (follow_gpt.h)
// Sections of follow_gpt's header that other files than its writer read.
constexpr const char* gpt_urls = "urls";                // {PART: URL}, each part's file
constexpr const char* gpt_grid = "grid";                // true when the Model view's grid is sent
constexpr const char* gpt_generate = "generate";        // the Generate view (follow_generate.h)
constexpr const char* gpt_probes = "probes";            // the lens cells and patching tables (follow_gpt_probes.h)

// The window's clear of a question's answers.
constexpr const char* answers_cleared = "answers_cleared";

// A page's answer: the one message a page may send.
constexpr const char* answer = "answer";
constexpr const char* answer_page = "page";
constexpr const char* answer_question = "question";
constexpr const char* answer_choice = "choice";
constexpr size_t page_id_max = 40; // a page ID: 1 to 40 of letters, digits, - and _

} // namespace attnviz::follow_protocol
