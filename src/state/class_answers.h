// class_answers.h: the class's answers to the check view's questions, as the teacher's window
// counts them (AppState::follow.answers, follow.h). The server (src/serve) only takes the
// answers off the socket, in order; the loop (src/app/serve_link.cpp) hands each one here, with
// every connection that left and every Clear, after each frame. Each connection answers as
// one page ID, fixed by its first answer; a page's latest choice per question counts. The
// tally holds one entry per connected page that answered, plus the answers of pages that
// left (a laptop that sleeps still counts) until they are cleared or, past `keep_dropped` of
// them, the oldest that left first: never a connected page's. Generic over the number of
// questions and their choices. The frame thread's alone.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnviz {

class ClassAnswers {
public:
    // Empty, for questions with these numbers of choices.
    void reset(const std::vector<int>& choices, size_t keep_dropped);
    // Connection `conn` (non-zero) answers question q with choice c as page `id`; false (and
    // nothing changes) when q or c is out of range, the connection answered as another page,
    // or another connected page holds the ID.
    bool answer(uint64_t conn, const std::string& id, int q, int c);
    // The connection closed: its page's answers are kept as a dropped page's.
    void dropped(uint64_t conn);
    // Forgets question q's answers (every question's for q = -1).
    void clear(int q);
    // [question][choice]: how many pages chose it.
    // Empty (no question) until reset: the check view then shows no tally.
    const std::vector<std::vector<int>>& counts() const { return counts_; }
    // Question q's answers in all, and its most chosen choice's count (the longest bar); 0
    // for a question out of range.
    int total(int q) const;
    int most(int q) const;
    size_t size() const { return entries_.size(); }
    size_t dropped_count() const { return dropped_n_; }

private:
    struct Entry {
        std::vector<int> choice; // by question, -1 for none
        uint64_t conn = 0;       // the connection answering as this page, 0 once it left
        uint64_t left = 0;       // when it left (order), to find the oldest
    };
    void forget(const std::string& id);
    std::vector<int> choices_;
    size_t keep_dropped_ = 0, dropped_n_ = 0;
    uint64_t order_ = 0;
    std::unordered_map<std::string, Entry> entries_;
    std::unordered_map<uint64_t, std::string> page_of_; // connection -> its page ID
    std::deque<std::pair<uint64_t, std::string>> left_; // (order, ID), oldest first; stale ones skipped
    std::vector<std::vector<int>> counts_;
};

} // namespace attnviz
