// fuzz_session: the session-file reader (session.h) over arbitrary text.
//
// Besides "no crash, no undefined behaviour, no hang", it checks the reader's promises:
// a failure is one non-empty line that names the file and leaves the session untouched;
// a success gives values in range, and writing that session and reading it back gives
// the same session (so whatever the reader accepts, the app can save again).
#include "session.h"
#include <cstdio>
#include <cstdlib>

using namespace attnviz;

static void require(bool ok, const char* what, const std::string& detail) {
    if (ok) return;
    std::fprintf(stderr, "broken promise: %s: %s\n", what, detail.c_str());
    std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const Session before; // defaults
    Session s = before;
    std::string error;
    if (!parse_session(text, "fuzz.json", s, error)) {
        require(!error.empty() && error.find('\n') == std::string::npos, "error is one non-empty line", error);
        require(error.find("fuzz.json") != std::string::npos, "error names the file", error);
        require(session_to_json(s) == session_to_json(before), "a refused file leaves the session alone", error);
        return 0;
    }
    const Config& c = s.config;
    require(validate(c).empty(), "an accepted session holds a valid config", validate(c));
    require(s.font_scale >= 1 && s.font_scale <= 3, "font scale in 1..3", std::to_string(s.font_scale));
    require(s.strength >= 0 && s.strength <= 1, "strength in 0..1", std::to_string(s.strength));
    require(s.perturb >= -1 && s.perturb < c.seq_len, "perturb is -1 or a position", std::to_string(s.perturb));
    require(s.tokens.empty() || int(s.tokens.size()) == c.seq_len, "T follows the words", std::to_string(c.seq_len));

    const std::string saved = session_to_json(s);
    Session again;
    require(parse_session(saved, "saved.json", again, error), "a saved session reads back", error);
    require(session_to_json(again) == saved, "a saved session reads back the same", saved);
    return 0;
}
