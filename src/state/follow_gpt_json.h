// follow_gpt_json.h: follow_gpt's numbers as JSON and back (follow_gpt.cpp), for its two
// sides. A finite float is a JSON number (its double's shortest text, exact); NaN and the
// infinities are the strings "nan", "inf", "-inf". Missing or malformed values read as NaN,
// 0 or empty: the page shows them as absent, never as numbers the teacher did not send.
#pragma once
#include "app_state.h"
#include <nlohmann/json.hpp>

namespace attnviz::follow_gpt_detail {

nlohmann::json num(double v);
double get_num(const nlohmann::json& j);
int get_int(const nlohmann::json& j, const char* key, int otherwise);
nlohmann::json ranges(const Ranges& r);
Ranges get_ranges(const nlohmann::json& j);
nlohmann::json summary(const DySummary& d);
DySummary get_summary(const nlohmann::json& j);
nlohmann::json tops(const std::vector<TokenProb>& v);
std::vector<TokenProb> get_tops(const nlohmann::json& j);
nlohmann::json detection(const HeadDetection& d);
HeadDetection get_detection(const nlohmann::json& j);
nlohmann::json sharpness(const SharpnessTable& t);
SharpnessTable get_sharpness(const nlohmann::json& j);
nlohmann::json run_summary(const RunSummary& r);
RunSummary get_run_summary(const nlohmann::json& j);

} // namespace attnviz::follow_gpt_detail
