// Headless Chromium for the rendering tests: Debian's /usr/bin/chromium
// (installed by `tools/setup --tests`), started as this machine needs it
// (no sandbox, no GPU, no network chatter, a fresh profile per run).
//
// A rendering test that cannot start Chromium fails: CI must never pass
// without having rendered. Only an explicit KVBILL_SKIP_CHROMIUM_TESTS=1 in
// the environment makes such tests skip, for a machine without Chromium;
// .ci/run unsets it.
#ifndef KVBILL_TESTS_CLI_CHROMIUM_H_
#define KVBILL_TESTS_CLI_CHROMIUM_H_

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kvbill::testing {

inline constexpr char kChromium[] = "/usr/bin/chromium";

// Whether the rendering tests are to be skipped (KVBILL_SKIP_CHROMIUM_TESTS
// set to anything but "" or "0").
inline bool SkipChromiumTests() {
  const char* skip = std::getenv("KVBILL_SKIP_CHROMIUM_TESTS");
  return skip != nullptr && std::string(skip) != "" && std::string(skip) != "0";
}

// In a TEST body: skip when asked to, fail when Chromium is not installed.
#define KVBILL_REQUIRE_CHROMIUM()                                                            \
  do {                                                                                       \
    if (::kvbill::testing::SkipChromiumTests()) {                                            \
      GTEST_SKIP() << "KVBILL_SKIP_CHROMIUM_TESTS is set";                                   \
    }                                                                                        \
    ASSERT_TRUE(std::filesystem::exists(::kvbill::testing::kChromium))                       \
        << ::kvbill::testing::kChromium                                                      \
        << " is not installed: run `tools/setup --tests` (or set "                           \
           "KVBILL_SKIP_CHROMIUM_TESTS=1 to skip the rendering tests on this machine only)"; \
  } while (false)

inline std::string ReadWhole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs headless Chromium on the local file `html` with `flags` and a fresh
// profile in `profile`; stdout goes to `out_path`, stderr to `err_path`.
// Returns its exit status (-1 when it did not exit normally).
inline int RunChromium(const std::filesystem::path& profile, const std::string& flags,
                       const std::filesystem::path& html, const std::filesystem::path& out_path,
                       const std::filesystem::path& err_path) {
  std::filesystem::remove_all(profile);
  const std::string cmd =
      std::string(kChromium) +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync "
      "--user-data-dir=" +
      profile.string() + " " + flags + " 'file://" + std::filesystem::absolute(html).string() +
      "' >'" + out_path.string() + "' 2>'" + err_path.string() + "'";
  const int status = std::system(cmd.c_str());
  std::filesystem::remove_all(profile);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The page's DOM after its scripts ran, as Chromium serialises it; "" when
// Chromium failed (the failure is recorded in the test).
inline std::string DumpDom(const std::filesystem::path& html, const std::filesystem::path& dir) {
  const int status =
      RunChromium(dir / "profile-dom", "--dump-dom", html, dir / "dom.html", dir / "dom.err");
  EXPECT_EQ(status, 0) << "chromium --dump-dom " << html << ":\n" << ReadWhole(dir / "dom.err");
  return status == 0 ? ReadWhole(dir / "dom.html") : "";
}

}  // namespace kvbill::testing

#endif  // KVBILL_TESTS_CLI_CHROMIUM_H_
