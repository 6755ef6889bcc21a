// class_answers.cpp: see class_answers.h.
#include "class_answers.h"
#include <algorithm>

namespace attnviz {

void ClassAnswers::reset(const std::vector<int>& choices, size_t keep_dropped) {
    choices_ = choices;
    keep_dropped_ = keep_dropped;
    dropped_n_ = 0;
    entries_.clear();
    page_of_.clear();
    left_.clear();
    counts_.assign(choices.size(), {});
    for (size_t q = 0; q < choices.size(); ++q) counts_[q].assign(size_t(std::max(choices[q], 0)), 0);
}

bool ClassAnswers::answer(uint64_t conn, const std::string& id, int q, int c) {
    if (conn == 0 || q < 0 || size_t(q) >= choices_.size() || c < 0 || c >= choices_[size_t(q)]) return false;
    if (auto p = page_of_.find(conn); p != page_of_.end() && p->second != id) return false; // one page per connection
    auto it = entries_.find(id);
    if (it != entries_.end() && it->second.conn != 0 && it->second.conn != conn) return false; // held by another
    if (it == entries_.end()) {
        it = entries_.emplace(id, Entry{std::vector<int>(choices_.size(), -1), conn, 0}).first;
    } else if (it->second.conn == 0) { // a page that left, back
        it->second.conn = conn;
        --dropped_n_;
    }
    page_of_[conn] = id;
    int& mine = it->second.choice[size_t(q)];
    if (mine >= 0) --counts_[size_t(q)][size_t(mine)];
    mine = c;
    ++counts_[size_t(q)][size_t(mine)];
    return true;
}

void ClassAnswers::forget(const std::string& id) {
    auto it = entries_.find(id);
    if (it == entries_.end()) return;
    for (size_t q = 0; q < it->second.choice.size(); ++q)
        if (const int mine = it->second.choice[q]; mine >= 0) --counts_[q][size_t(mine)];
    if (it->second.conn == 0) --dropped_n_;
    entries_.erase(it);
}

void ClassAnswers::dropped(uint64_t conn) {
    auto p = page_of_.find(conn);
    if (p == page_of_.end()) return;
    const std::string id = p->second;
    page_of_.erase(p);
    auto it = entries_.find(id);
    if (it == entries_.end() || it->second.conn != conn) return;
    it->second.conn = 0;
    it->second.left = ++order_;
    ++dropped_n_;
    left_.emplace_back(order_, id);
    // Marks of pages that came back are stale: dropped now and then, so the queue stays bounded.
    if (left_.size() > 2 * keep_dropped_ + 64) {
        std::deque<std::pair<uint64_t, std::string>> live;
        for (auto& m : left_) {
            auto e = entries_.find(m.second);
            if (e != entries_.end() && e->second.conn == 0 && e->second.left == m.first) live.push_back(std::move(m));
        }
        left_.swap(live);
    }
    // The oldest that left go first (stale marks are skipped on the way).
    while (dropped_n_ > keep_dropped_ && !left_.empty()) {
        const auto [order, old] = left_.front();
        left_.pop_front();
        auto e = entries_.find(old);
        if (e != entries_.end() && e->second.conn == 0 && e->second.left == order) forget(old);
    }
}

void ClassAnswers::clear(int q) {
    for (size_t i = 0; i < counts_.size(); ++i) {
        if (q != -1 && int(i) != q) continue;
        for (int& n : counts_[i]) n = 0;
        for (auto& [id, e] : entries_) e.choice[i] = -1;
    }
}

int ClassAnswers::total(int q) const {
    int n = 0;
    if (q >= 0 && size_t(q) < counts_.size())
        for (int c : counts_[size_t(q)]) n += c;
    return n;
}

int ClassAnswers::most(int q) const {
    int m = 0;
    if (q >= 0 && size_t(q) < counts_.size())
        for (int c : counts_[size_t(q)]) m = std::max(m, c);
    return m;
}

} // namespace attnviz
