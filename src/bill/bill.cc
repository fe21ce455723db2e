#include "kvbill/bill/bill.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "kvbill/trace/importers.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace {

Status Overflow(const std::string& where) {
  return Error(where + ": the bill exceeds the $9,223,372 range of an amount");
}

std::int64_t FloorDiv(std::int64_t a, std::int64_t b) { return a / b - (a % b < 0 ? 1 : 0); }

// The entry of `by_model` a call belongs to: fast-mode calls apart.
ModelBill& ModelOf(const LoggedCall& call, GroupBill* group) {
  if (!call.fast) return group->by_model[call.model];
  ModelBill& model = group->by_model[call.model + "-fast"];
  model.fast = true;
  return model;
}

Status AddCall(const CallBill& billed, GroupBill* group) {
  const LoggedCall& call = *billed.call;
  ModelBill& model = ModelOf(call, group);
  if (model.priced_as.empty() && !billed.priced_as.empty()) model.priced_as = billed.priced_as;
  ++model.calls;
  ++group->calls;
  model.usage += call.usage;
  if (call.assumed_model) ++model.assumed_model_calls;
  if (call.time_ns) {
    group->first_ns = std::min(group->first_ns.value_or(*call.time_ns), *call.time_ns);
    group->last_ns = std::max(group->last_ns.value_or(*call.time_ns), *call.time_ns);
  }
  if (billed.unpriced != Unpriced::kNo) {
    ++model.unpriced_calls;
    ++group->unpriced_calls;
    return OkStatus();
  }
  if (billed.recorded) ++model.recorded_cost_calls;
  if (billed.cost.long_context) ++model.long_context_calls;
  if (!AddMoney(billed.cost.cost, &model.cost) || !AddMoney(billed.cost.cost, &group->cost)) {
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

// *sum += add for optional amounts: absent + absent stays absent.
template <class T, class Add>
void AddOptional(const std::optional<T>& add, std::optional<T>* sum, const Add& plus) {
  if (add) *sum = sum->has_value() ? plus(**sum, *add) : *add;
}

// Adds group `from` (a day) into `into` (its week or month). Amounts were
// summed within the range once already, so sums of them are too.
void MergeGroup(const GroupBill& from, GroupBill* into) {
  const auto money = [](Money a, Money b) {
    (void)AddMoney(b, &a);
    return a;
  };
  const auto number = [](double a, double b) { return a + b; };
  into->calls += from.calls;
  into->unpriced_calls += from.unpriced_calls;
  into->cost = money(into->cost, from.cost);
  AddOptional(from.reported_cost_usd, &into->reported_cost_usd, number);
  AddOptional(from.first_ns, &into->first_ns,
              [](std::int64_t a, std::int64_t b) { return std::min(a, b); });
  AddOptional(from.last_ns, &into->last_ns,
              [](std::int64_t a, std::int64_t b) { return std::max(a, b); });
  for (const auto& [id, m] : from.by_model) {
    ModelBill& to = into->by_model[id];
    if (to.priced_as.empty()) to.priced_as = m.priced_as;
    to.calls += m.calls;
    to.long_context_calls += m.long_context_calls;
    to.unpriced_calls += m.unpriced_calls;
    to.recorded_cost_calls += m.recorded_cost_calls;
    to.assumed_model_calls += m.assumed_model_calls;
    to.fast = to.fast || m.fast;
    to.usage += m.usage;
    to.cost = money(to.cost, m.cost);
    AddOptional(m.reported_cost_usd, &to.reported_cost_usd, number);
    AddOptional(m.reported_usage, &to.reported_usage, [](CallUsage a, const CallUsage& b) {
      a += b;
      return a;
    });
    AddOptional(m.reported_usage_cost, &to.reported_usage_cost, money);
  }
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
    const std::int64_t utc_s = FloorDiv(*time_ns, kNsPerS);
    const std::int64_t day = FloorDiv(utc_s + zone_.OffsetAt(utc_s), 86'400);
    if (text_.empty() || day != day_) {
      day_ = day;
      text_ = zone_.Date(*time_ns);
    }
    return text_;
  }

 private:
  const TimeZone& zone_;
  const std::string unknown_ = "unknown";
  std::int64_t day_ = 0;
  std::string text_;
};

// Rows with dated ids ascending, "unknown" last.
void SortByDate(std::vector<GroupBill>* groups) {
  std::sort(groups->begin(), groups->end(), [](const GroupBill& a, const GroupBill& b) {
    return (a.id == "unknown") != (b.id == "unknown") ? b.id == "unknown" : a.id < b.id;
  });
}

// Sums days into weeks or months, in date order.
template <class KeyOf>
std::vector<GroupBill> SumDays(const std::vector<GroupBill>& days, const KeyOf& key_of) {
  std::vector<GroupBill> out;
  GroupIndex index;
  for (const GroupBill& day : days) {
    const std::string key = day.id == "unknown" ? day.id : key_of(day.id);
    MergeGroup(day, index.Get(key, &out));
  }
  SortByDate(&out);
  return out;
}

// The 5-hour blocks of the billed calls (see kBlockSeconds); calls without a
// timestamp form the block "unknown", last, with the result lines.
Result<std::vector<GroupBill>> MakeBlocks(const std::vector<CallBill>& calls) {
  std::vector<std::size_t> order(calls.size());
  std::iota(order.begin(), order.end(), 0);
  const auto time = [&](std::size_t i) { return calls[i].call->time_ns; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (time(a).has_value() != time(b).has_value()) return time(a).has_value();
    return time(a).has_value() && *time(a) < *time(b);
  });
  constexpr std::int64_t kBlockNs = kBlockSeconds * kNsPerS;
  constexpr std::int64_t kHourNs = 3'600 * kNsPerS;
  std::vector<GroupBill> blocks;
  std::optional<std::int64_t> previous;
  for (const std::size_t i : order) {
    const std::optional<std::int64_t> t = time(i);
    GroupBill* block = blocks.empty() ? nullptr : &blocks.back();
    if (!t) {
      if (block == nullptr || block->id != "unknown") {
        blocks.push_back(GroupBill{});
        blocks.back().id = "unknown";
      }
    } else if (block == nullptr || *t - *block->start_ns > kBlockNs || *t - *previous > kBlockNs) {
      blocks.push_back(GroupBill{});
      blocks.back().start_ns = FloorDiv(*t, kHourNs) * kHourNs;
      blocks.back().id = UtcTime(*blocks.back().start_ns);
      previous = t;
    }
    if (t) previous = t;
    if (auto s = AddCall(calls[i], &blocks.back()); !s) return s.error();
  }
  return blocks;
}

// Applies BillOrder to the finished groups.
void Order(BillOrder order, Bill* bill) {
  if (order == BillOrder::kLog) return;
  const bool descending = order == BillOrder::kDescending;
  // Sessions by last activity; sessions without a timestamp last.
  std::stable_sort(bill->sessions.begin(), bill->sessions.end(),
                   [&](const GroupBill& a, const GroupBill& b) {
                     if (a.last_ns.has_value() != b.last_ns.has_value()) {
                       return a.last_ns.has_value();
                     }
                     if (!a.last_ns) return false;
                     return descending ? *a.last_ns > *b.last_ns : *a.last_ns < *b.last_ns;
                   });
  if (!descending) return;
  for (std::vector<GroupBill>* groups : {&bill->days, &bill->weeks, &bill->months, &bill->blocks}) {
    const auto dated_end = std::find_if(groups->begin(), groups->end(),
                                        [](const GroupBill& g) { return g.id == "unknown"; });
    std::reverse(groups->begin(), dated_end);
  }
}

// The sheet's price of one model id, resolved once, with the prices of its
// fast mode and of US-only inference, each made on the first call that
// needs it (a log of US-only calls would otherwise copy a price a call).
struct Resolved {
  const ModelPrice* standard = nullptr;
  std::optional<Result<ModelPrice>> fast;
  std::optional<Result<ModelPrice>> us_only;
  std::optional<Result<ModelPrice>> fast_us_only;
};

// Bills one call by `mode` (see CostMode). `window`: its model's context
// window in the sheet (InputLimit), 0 when unpriced or not listed.
Status BillCall(const LoggedCall& call, CostMode mode, const PriceSheet& sheet,
                std::unordered_map<std::string, Resolved>* resolved, CallBill* billed,
                Tokens* window) {
  auto [it, inserted] = resolved->try_emplace(call.model);
  if (inserted) it->second.standard = sheet.Find(call.model);
  const ModelPrice* price = it->second.standard;
  *window = price != nullptr ? InputLimit(*price) : 0;
  if (mode != CostMode::kCalculate && call.recorded_cost) {
    billed->cost.cost = *call.recorded_cost;
    billed->recorded = true;
    return OkStatus();
  }
  if (mode == CostMode::kDisplay) {
    billed->unpriced = Unpriced::kNoRecordedCost;
    return OkStatus();
  }
  if (price == nullptr) {
    billed->unpriced = Unpriced::kNoPrice;
    return OkStatus();
  }
  billed->priced_as = price->id;  // the sheet's: a fast-mode price keeps it
  if (call.fast) {
    if (!it->second.fast) it->second.fast = FastModePrice(*price);
    if (!*it->second.fast) {
      billed->priced_as = {};
      billed->unpriced = Unpriced::kNoFastPrice;
      return OkStatus();
    }
    price = &**it->second.fast;
  }
  // US-only inference: the sheet's us_multiplier on top (of fast mode too).
  if (call.us_only && price->us_multiplier > 0) {
    std::optional<Result<ModelPrice>>& us =
        call.fast ? it->second.fast_us_only : it->second.us_only;
    if (!us) us = UsOnlyPrice(*price);
    if (!*us) return us->error().Within(call.where);
    price = &**us;
  }
  auto cost = PriceCall(*price, call.usage);
  if (!cost) return cost.error().Within(call.where);
  billed->cost = *cost;
  return OkStatus();
}

}  // namespace

std::string UtcDate(std::int64_t time_ns) {
  const std::chrono::sys_days day = std::chrono::floor<std::chrono::days>(
      std::chrono::sys_time<std::chrono::nanoseconds>(std::chrono::nanoseconds(time_ns)));
  const std::chrono::year_month_day ymd(day);
  // "YYYY-MM-DD" by hand: snprintf took most of the time of dating sessions.
  const int year = static_cast<int>(ymd.year());
  if (year < 0 || year > 9999) {
    char text[32];
    std::snprintf(text, sizeof(text), "%04d-%02u-%02u", year, static_cast<unsigned>(ymd.month()),
                  static_cast<unsigned>(ymd.day()));
    return text;
  }
  const unsigned month = static_cast<unsigned>(ymd.month());
  const unsigned d = static_cast<unsigned>(ymd.day());
  std::string text = "0000-00-00";
  text[0] = static_cast<char>('0' + year / 1000);
  text[1] = static_cast<char>('0' + year / 100 % 10);
  text[2] = static_cast<char>('0' + year / 10 % 10);
  text[3] = static_cast<char>('0' + year % 10);
  text[5] = static_cast<char>('0' + month / 10);
  text[6] = static_cast<char>('0' + month % 10);
  text[8] = static_cast<char>('0' + d / 10);
  text[9] = static_cast<char>('0' + d % 10);
  return text;
}

std::string UtcTime(std::int64_t time_ns) {
  const std::int64_t s = FloorDiv(time_ns, kNsPerS);
  const std::int64_t second_of_day = s - FloorDiv(s, 86'400) * 86'400;  // [0, 86,400)
  char text[32];
  std::snprintf(text, sizeof(text), "T%02d:%02d:%02dZ", static_cast<int>(second_of_day / 3'600),
                static_cast<int>(second_of_day / 60 % 60), static_cast<int>(second_of_day % 60));
  return UtcDate(time_ns) + text;
}

std::string WeekOf(const std::string& date, int start_of_week) {
  using namespace std::chrono;
  const int y = std::stoi(date.substr(0, 4));
  const unsigned m = static_cast<unsigned>(std::stoi(date.substr(5, 2)));
  const unsigned d = static_cast<unsigned>(std::stoi(date.substr(8, 2)));
  const sys_days day{year_month_day{year{y}, month{m}, std::chrono::day{d}}};
  const int weekday_number = static_cast<int>(weekday{day}.c_encoding());  // 0 = Sunday
  const int back = (weekday_number - start_of_week + 7) % 7;
  return UtcDate(duration_cast<nanoseconds>((day - days{back}).time_since_epoch()).count());
}

namespace {

// True when copy `a` of a repeated call is kept over copy `b` (MakeBill).
bool KeepsOver(const LoggedCall& a, const LoggedCall& b) {
  if (a.usage.output != b.usage.output) return a.usage.output > b.usage.output;
  if (a.time_ns != b.time_ns) {
    if (!a.time_ns || !b.time_ns) return a.time_ns.has_value();  // a known time first
    return *a.time_ns < *b.time_ns;
  }
  if (a.session != b.session) return a.session < b.session;
  return a.where < b.where;
}

}  // namespace

Result<Bill> MakeBill(const UsageLog& log, const PriceSheet& sheet, const BillOptions& options) {
  Bill bill;
  bill.total.id = "total";
  // Distinct calls in order of first appearance; a repeat keeps the copy
  // with the most output tokens (streaming stubs record 1 to 10), and among
  // copies with as many the earliest, then the one whose session and place
  // (file:line) sort first: the kept copy, and so its day and session, does
  // not depend on the order the logs are read in.
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
    if (KeepsOver(call, *kept[it->second])) kept[it->second] = &call;
  }
  GroupIndex sessions, days;
  DayNames day_names(options.time_zone);
  std::unordered_map<std::string, Resolved> resolved;
  bill.calls.reserve(kept.size());
  for (const LoggedCall* call : kept) {
    if (!InRange(call->time_ns, options)) {
      if (!call->time_ns) ++bill.undated_left_out;
      continue;
    }
    CallBill billed;
    billed.call = call;
    Tokens window = 0;
    if (auto s = BillCall(*call, options.mode, sheet, &resolved, &billed, &window); !s) {
      return s.error();
    }
    GroupBill* session = sessions.Get(call->session, &bill.sessions);
    if (session->project.empty() && call->project >= 0) {
      session->project = log.projects[static_cast<std::size_t>(call->project)];
    }
    const std::string& day = day_names.Of(call->time_ns);
    for (GroupBill* group : {session, days.Get(day, &bill.days), &bill.total}) {
      if (auto s = AddCall(billed, group); !s) return s.error();
    }
    if (call->claude_code && IsClaudeCodePlaceholderOutput(call->usage.output)) {
      ++bill.placeholder_output_calls;
    }
    if (const Tokens prompt = call->usage.prompt(); window > 0 && prompt > window) {
      ++bill.over_window_calls;
      if (prompt > bill.over_window_prompt) {
        bill.over_window_prompt = prompt;
        bill.over_window_model = call->model;
        bill.over_window_limit = window;
      }
    }
    bill.calls.push_back(std::move(billed));
  }
  if (options.blocks) {
    auto blocks = MakeBlocks(bill.calls);
    if (!blocks) return blocks.error();
    bill.blocks = std::move(*blocks);
  }
  if (options.since || options.until) {  // result lines carry no timestamp
    std::set<std::string> seen;
    for (const ReportedRun& run : log.runs) bill.undated_left_out += seen.insert(run.key).second;
  } else {
    std::set<std::string> seen;
    GroupIndex blocks;
    for (const ReportedRun& run : log.runs) {
      if (!seen.insert(run.key).second) continue;
      std::vector<GroupBill*> groups = {sessions.Get(run.session, &bill.sessions),
                                        days.Get("unknown", &bill.days), &bill.total};
      if (options.blocks) {
        if (bill.blocks.empty() || bill.blocks.back().id != "unknown") {
          bill.blocks.push_back(GroupBill{});
          bill.blocks.back().id = "unknown";
        }
        groups.push_back(&bill.blocks.back());
      }
      for (GroupBill* group : groups) {
        if (auto s = AddRun(run, sheet, group); !s) return s.error();
      }
    }
  }
  SortByDate(&bill.days);
  bill.weeks = SumDays(bill.days,
                       [&](const std::string& day) { return WeekOf(day, options.start_of_week); });
  bill.months = SumDays(bill.days, [](const std::string& day) { return day.substr(0, 7); });
  for (std::vector<GroupBill>* groups :
       {&bill.sessions, &bill.days, &bill.weeks, &bill.months, &bill.blocks}) {
    for (GroupBill& group : *groups) FinishGroup(&group);
  }
  FinishGroup(&bill.total);
  Order(options.order, &bill);
  return bill;
}

}  // namespace kvbill
