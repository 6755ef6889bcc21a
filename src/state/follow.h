// follow.h: "Follow the teacher" as the panels see it: plain data the loop fills and the
// panels read, and the requests the panels leave for the loop. The teacher's window serves
// (attnviz --serve, src/serve); a page it served follows (web_main.cpp). Neither side's
// networking is here: the loop (src/app) does it and copies what the panels show.
#pragma once
#include "check_questions.h"
#include "class_answers.h"
#include <string>
#include <vector>

namespace attnviz {

enum class FollowMode { follow, explore };

struct FollowStatus {
    // The teacher's window.
    bool can_serve = false;        // the native window (the side panel offers Start / Stop)
    bool serving = false;
    bool toggle_request = false;   // the side panel's switch: the loop starts or stops serving
    bool show_large = false;       // the address and its QR code over the view, for the room
    std::vector<std::string> urls; // what the pages open
    int qr_size = 0;               // the first URL's QR code: qr_size² modules, 1 = dark
    std::vector<unsigned char> qr;
    int clients = 0;               // pages following now
    std::string error;             // why serving could not start (one sentence), "" when fine
    std::string code;              // the class code pages give ("" with --no-code); in the QR code's URL
    bool new_code_request = false; // the panel's New code: a new one, and every page is dropped
    int per_address = 0;           // --per-address (0: no limit)
    unsigned long long refused_address = 0; // pages refused: too many from one address
    // The class's answers to the check view's questions, counted here (class_answers.h):
    // [question][choice] pages that chose it (no question when not serving), and the check
    // view's "Clear" (-1: every question).
    ClassAnswers answers;
    static constexpr int no_clear = -2;
    int clear_request = no_clear;

    // A page served by a teacher's window.
    bool page = false;             // this page can follow (it was served by attnviz --serve)
    bool connected = false;        // the teacher's window is reachable
    FollowMode mode = FollowMode::follow;
    bool back_request = false;     // "Back to the teacher": the loop applies the latest state
    std::string note;              // what happened last ("following", "the class is full", ...)

    // This screen's own answers to the check view's questions (-1: none), on a page and in
    // the lesson alike; on a page each new one is sent to the teacher's window (pending
    // until it is: the connection may be down), and the teacher's Clear forgets it.
    int my_answer[check_question_count] = {-1, -1, -1, -1, -1, -1};
    bool answer_pending[check_question_count] = {};
};

// The teacher's window: why pages were refused for --per-address, naming the option (a class
// behind one router shares one address, so the limit that keeps one machine from taking the
// class then refuses real students); "" when none was.
inline std::string refused_pages_text(const FollowStatus& f) {
    if (f.refused_address == 0) return "";
    return std::to_string(f.refused_address) + (f.refused_address == 1 ? " page was" : " pages were") +
           " refused: more than " + std::to_string(f.per_address) +
           " from one address. If the class shares one (behind one router), start with --per-address 0 or a larger number.";
}

} // namespace attnviz
