#include "kvbill/bill/bill.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace kvbill {
namespace {

Status Overflow(const std::string& where) {
  return Error(where + ": the bill exceeds the $9,223,372 range of an amount");
}

Status AddCall(const CallBill& priced, GroupBill* group) {
  const LoggedCall& call = *priced.call;
  ModelBill& model = group->by_model[call.model];
  model.priced_as = priced.priced_as;
  ++model.calls;
  ++group->calls;
  model.usage += call.usage;
  if (priced.priced_as.empty()) {
    ++group->unpriced_calls;
    return OkStatus();
  }
  if (priced.cost.long_context) ++model.long_context_calls;
  if (!AddMoney(priced.cost.cost, &model.cost) || !AddMoney(priced.cost.cost, &group->cost)) {
    return Overflow(call.where);
  }
  return OkStatus();
}

Status AddRun(const ReportedRun& run, const PriceSheet& sheet, GroupBill* group) {
  group->reported_cost_usd = group->reported_cost_usd.value_or(0) + run.total_cost_usd;
  for (const auto& [id, reported] : run.by_model) {
    ModelBill& model = group->by_model[id];
    model.reported_cost_usd = model.reported_cost_usd.value_or(0) + reported.cost_usd;
    CallUsage usage = model.reported_usage.value_or(CallUsage{});
    usage += reported.usage;
    model.reported_usage = usage;
    const ModelPrice* price = sheet.Find(id);
    if (price == nullptr) continue;
    if (model.priced_as.empty() && model.calls == 0) model.priced_as = price->id;
    auto cost = PriceTotal(*price, reported.usage);
    if (!cost) return cost.error().Within(run.where);
    Money sum = model.reported_usage_cost.value_or(Money{});
    if (!AddMoney(*cost, &sum)) return Overflow(run.where);
    model.reported_usage_cost = sum;
  }
  return OkStatus();
}

// Σ kvbill's price of the reported models, when every one of them is priced.
void FinishGroup(GroupBill* group) {
  std::optional<Money> total;
  for (const auto& [id, model] : group->by_model) {
    if (!model.reported_usage) continue;
    if (!model.reported_usage_cost) return;  // a reported model without a price
    Money sum = total.value_or(Money{});
    if (!AddMoney(*model.reported_usage_cost, &sum)) return;
    total = sum;
  }
  group->reported_usage_cost = total;
}

bool InRange(const std::optional<std::int64_t>& time_ns, const BillOptions& options) {
  if (!options.since && !options.until) return true;
  if (!time_ns) return false;
  const std::string day = options.time_zone.Date(*time_ns);
  if (options.since && day < *options.since) return false;
  if (options.until && day > *options.until) return false;
  return true;
}

// Groups by id in order of first appearance. Consecutive calls mostly share
// a session and a day, so the last group found is tried first.
class GroupIndex {
 public:
  GroupBill* Get(const std::string& id, std::vector<GroupBill>* groups) {
    if (last_ < groups->size() && (*groups)[last_].id == id) return &(*groups)[last_];
    const auto [it, inserted] = index_.try_emplace(id, groups->size());
    if (inserted) {
      groups->push_back(GroupBill{});
      groups->back().id = id;
    }
    last_ = it->second;
    return &(*groups)[last_];
  }

 private:
  std::unordered_map<std::string, std::size_t> index_;
  std::size_t last_ = SIZE_MAX;
};

// The date of a call in the bill's zone, or "unknown". Consecutive calls
// mostly fall on one day, so the text of the last local day is kept and
// reused while the local day number (whole days since 1970-01-01 in the
// zone) stays the same.
class DayNames {
 public:
  explicit DayNames(const TimeZone& zone) : zone_(zone) {}

  const std::string& Of(const std::optional<std::int64_t>& time_ns) {
    if (!time_ns) return unknown_;
    const std::int64_t utc_s = FloorDiv(*time_ns, 1'000'000'000);
    const std::int64_t day = FloorDiv(utc_s + zone_.OffsetAt(utc_s), 86'400);
    if (text_.empty() || day != day_) {
      day_ = day;
      text_ = zone_.Date(*time_ns);
    }
    return text_;
  }

 private:
  static std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
    return a / b - (a % b < 0 ? 1 : 0);
  }

  const TimeZone& zone_;
  const std::string unknown_ = "unknown";
  std::int64_t day_ = 0;
  std::string text_;
};

}  // namespace

std::string UtcDate(std::int64_t time_ns) {
  using std::chrono::duration_cast;
  const std::chrono::sys_days day = std::chrono::floor<std::chrono::days>(
      std::chrono::sys_time<std::chrono::nanoseconds>(std::chrono::nanoseconds(time_ns)));
  const std::chrono::year_month_day ymd(day);
  char text[16];
  std::snprintf(text, sizeof(text), "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return text;
}

Result<Bill> MakeBill(const UsageLog& log, const PriceSheet& sheet, const BillOptions& options) {
  Bill bill;
  bill.total.id = "total";
  // Distinct calls in order of first appearance; a repeat keeps the copy
  // with the most output tokens.
  std::vector<const LoggedCall*> kept;
  std::unordered_map<std::string_view, std::size_t> by_key;  // views into `log`
  kept.reserve(log.calls.size());
  by_key.reserve(log.calls.size());
  for (const LoggedCall& call : log.calls) {
    const auto [it, inserted] = by_key.try_emplace(call.key, kept.size());
    if (inserted) {
      kept.push_back(&call);
      continue;
    }
    ++bill.duplicate_lines;
    if (call.usage.output > kept[it->second]->usage.output) kept[it->second] = &call;
  }
  GroupIndex sessions, days;
  DayNames day_names(options.time_zone);
  std::unordered_map<std::string, const ModelPrice*> resolved;
  bill.calls.reserve(kept.size());
  for (const LoggedCall* call : kept) {
    if (!InRange(call->time_ns, options)) continue;
    auto [it, inserted] = resolved.try_emplace(call->model, nullptr);
    if (inserted) it->second = sheet.Find(call->model);
    CallBill priced;
    priced.call = call;
    if (it->second != nullptr) {
      priced.priced_as = it->second->id;
      auto cost = PriceCall(*it->second, call->usage);
      if (!cost) return cost.error().Within(call->where);
      priced.cost = *cost;
    }
    const std::string& day = day_names.Of(call->time_ns);
    for (GroupBill* group :
         {sessions.Get(call->session, &bill.sessions), days.Get(day, &bill.days), &bill.total}) {
      if (auto s = AddCall(priced, group); !s) return s.error();
    }
    bill.calls.push_back(std::move(priced));
  }
  if (!options.since && !options.until) {  // result lines carry no timestamp
    std::set<std::string> seen;
    for (const ReportedRun& run : log.runs) {
      if (!seen.insert(run.key).second) continue;
      for (GroupBill* group : {sessions.Get(run.session, &bill.sessions),
                               days.Get("unknown", &bill.days), &bill.total}) {
        if (auto s = AddRun(run, sheet, group); !s) return s.error();
      }
    }
  }
  std::sort(bill.days.begin(), bill.days.end(), [](const GroupBill& a, const GroupBill& b) {
    return (a.id == "unknown") != (b.id == "unknown") ? b.id == "unknown" : a.id < b.id;
  });
  for (GroupBill& group : bill.sessions) FinishGroup(&group);
  for (GroupBill& group : bill.days) FinishGroup(&group);
  FinishGroup(&bill.total);
  return bill;
}

}  // namespace kvbill
