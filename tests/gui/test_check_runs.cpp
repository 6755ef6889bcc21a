// test_check_runs.cpp: question 2's second "Show me" in the check view (Alt+4 or its button).
// It trains `both` at its recipe with H = 1 and then with H = 4, at the same C, and shows each
// run's accuracies and heads, then the sentence that reads them. The numbers are read from
// the layout record the panel writes as it draws them, at text size 1 and 2.
#include "gui_test_support.h"
#include <gtest/gtest.h>
#include <map>

using namespace attnviz_gui_test;

namespace {

struct Seen {
    std::map<std::string, double> accuracy; // "H=1 dup" -> value
    std::map<int, std::vector<std::string>> labels; // H -> each head's label
    std::string sentence;
};

Seen read(const Shot& s) {
    Seen out;
    for (const nlohmann::json& it : s.layout.at("items")) {
        const std::string kind = it.at("kind");
        if (kind == "check_accuracy") out.accuracy[it.at("name")] = it.at("value").get<double>();
        if (kind == "check_head") out.labels[it.at("position").get<int>()].push_back(it.at("name"));
        if (kind == "check_sentence") out.sentence = it.at("name");
    }
    return out;
}

int count_starting(const std::vector<std::string>& v, const std::string& prefix) {
    int n = 0;
    for (const std::string& s : v) n += s.rfind(prefix, 0) == 0;
    return n;
}

void expect_one_head_holds_one_relation(const Shot& shot, const std::string& what) {
    ASSERT_EQ(shot.result.status, 0) << what << ": " << shot.result.err;
    EXPECT_EQ(shot.layout.at("view"), "check") << what;
    Seen s = read(shot);
    // The recipe's runs: H = 1 leaves "appeared before" near 0.69, H = 4 learns both.
    ASSERT_TRUE(s.accuracy.count("H=1 dup") && s.accuracy.count("H=4 dup")) << what << ": " << shot.layout.dump();
    EXPECT_LT(s.accuracy.at("H=1 dup"), 0.8) << what;
    EXPECT_GT(s.accuracy.at("H=4 dup"), 0.95) << what;
    EXPECT_GT(s.accuracy.at("H=4 prev"), 0.95) << what;
    // One head, a previous-token head; four, a previous-token and a duplicate head at least.
    ASSERT_EQ(s.labels[1].size(), 1u) << what;
    EXPECT_EQ(count_starting(s.labels[1], "previous-token head ("), 1) << what;
    ASSERT_EQ(s.labels[4].size(), 4u) << what;
    EXPECT_GE(count_starting(s.labels[4], "previous-token head ("), 1) << what;
    EXPECT_GE(count_starting(s.labels[4], "duplicate-token head ("), 1) << what;
    EXPECT_NE(s.sentence.find("One head has one softmax"), std::string::npos) << what << ": " << s.sentence;
    EXPECT_NE(s.sentence.find("split the two relations"), std::string::npos) << what << ": " << s.sentence;
    // Everything the record holds was drawn inside the window (the view scrolls to it).
    for (const nlohmann::json& it : shot.layout.at("items")) {
        if (std::string(it.at("kind")).rfind("check_", 0) != 0) continue;
        EXPECT_GE(it.at("y").get<double>(), 0) << what << ": " << it.dump();
        EXPECT_LE(it.at("x").get<double>() + it.at("w").get<double>(), 1280) << what << ": " << it.dump();
        EXPECT_LE(it.at("y").get<double>() + it.at("h").get<double>(), 720) << what << ": " << it.dump();
    }
}

} // namespace

TEST(CheckRuns, AltFourTrainsOneHeadThenFourAndSaysWhatTheyShow) {
    Shot plain = take_shot("check_plain", {"--size", "1280x720", "--view", "check"});
    Shot shot = take_shot("check_runs", {"--size", "1280x720", "--view", "check", "--keys", "alt+4"});
    expect_one_head_holds_one_relation(shot, "text size 1");
    ASSERT_EQ(plain.result.status, 0) << plain.result.err;
    const Seen none = read(plain);
    EXPECT_TRUE(none.accuracy.empty() && none.sentence.empty()) << "nothing is trained before it is asked for";
    EXPECT_GT(differing_fraction(plain.image, shot.image), 0.02);
}

TEST(CheckRuns, AtTextSizeTwoTheResultIsInSight) {
    Shot shot = take_shot("check_runs_2x", {"--size", "1280x720", "--font-scale", "2", "--view", "check", "--keys", "alt+4"});
    expect_one_head_holds_one_relation(shot, "text size 2");
}
