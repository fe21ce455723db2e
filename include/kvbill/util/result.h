// Result<T>: a value or an Error, shaped like std::expected.
//
// Core code returns Result instead of throwing. An Error carries one
// human-readable message that already says where the problem is
// ("config.json: num_hidden_layers: missing") and the process exit status the
// CLI should end with (2 for bad input, the default).
#ifndef KVBILL_UTIL_RESULT_H_
#define KVBILL_UTIL_RESULT_H_

#include <string>
#include <utility>
#include <variant>

namespace kvbill {

class Error {
 public:
  // Exit status for errors in what the user gave us: files, flags, fields.
  static constexpr int kInputExitStatus = 2;

  explicit Error(std::string message, int exit_status = kInputExitStatus)
      : message_(std::move(message)), exit_status_(exit_status) {}

  // An error in input that is right in itself but that the deployment
  // cannot serve (its weights or one request beyond its memory): a sweep
  // shows it as a row of that point, where other errors stop the sweep.
  static Error CannotServe(std::string message) {
    Error e(std::move(message));
    e.cannot_serve_ = true;
    return e;
  }

  const std::string& message() const { return message_; }
  int exit_status() const { return exit_status_; }
  bool cannot_serve() const { return cannot_serve_; }

  // Returns a copy whose message is prefixed with `where` and ": ".
  Error Within(const std::string& where) const {
    Error e(where + ": " + message_, exit_status_);
    e.cannot_serve_ = cannot_serve_;
    return e;
  }

 private:
  std::string message_;
  int exit_status_;
  bool cannot_serve_ = false;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  // Preconditions: ok() for value(), !ok() for error().
  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const Error& error() const { return std::get<Error>(state_); }

  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Error> state_;
};

// A Result with no value: success or an Error.
using Status = Result<std::monostate>;
inline Status OkStatus() { return std::monostate{}; }

}  // namespace kvbill

#endif  // KVBILL_UTIL_RESULT_H_
