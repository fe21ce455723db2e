// Helpers shared by the trace tests: fixture paths and draining a reader.
#ifndef KVBILL_TESTS_TRACE_TRACE_TEST_UTIL_H_
#define KVBILL_TESTS_TRACE_TRACE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvbill/trace/importers.h"

namespace kvbill::testing {

inline std::string TraceFixture(const std::string& name) {
  return std::string(KVBILL_SOURCE_DIR) + "/tests/data/traces/" + name;
}

inline std::string SharedTrace(const std::string& name) {
  return std::string(KVBILL_SHARED_DATA_DIR) + "/traces/" + name;
}

// Reads every task; the first error, if any, goes to *error.
inline std::vector<Task> ReadAllTasks(TraceReader* reader, std::string* error = nullptr) {
  std::vector<Task> tasks;
  Task task;
  while (true) {
    auto more = reader->Next(&task);
    if (!more.ok()) {
      if (error != nullptr) *error = more.error().message();
      break;
    }
    if (!*more) break;
    tasks.push_back(task);
  }
  return tasks;
}

}  // namespace kvbill::testing

#endif  // KVBILL_TESTS_TRACE_TRACE_TEST_UTIL_H_
