#include "kvbill/util/file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kvbill {
namespace {

namespace fs = std::filesystem;

TEST(FileTest, ReadsAWholeFile) {
  const fs::path path =
      fs::path(::testing::TempDir()) / ("kvbill_file_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path, std::ios::binary) << "a\nb";
  auto text = ReadFile(path.string());
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(*text, "a\nb");
  fs::remove(path);
}

TEST(FileTest, AMissingFileIsFileNotFound) {
  auto text = ReadFile("/nonexistent/kvbill/x.json");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message(), "/nonexistent/kvbill/x.json: file not found");
}

TEST(FileTest, AnUnreadablePathSaysWhy) {
  // A path through a regular file fails with ENOTDIR: the file is there, so
  // the message gives the system's reason instead of "file not found".
  const fs::path file =
      fs::path(::testing::TempDir()) / ("kvbill_file_" + std::to_string(::getpid()) + ".dir");
  std::ofstream(file) << "x";
  auto text = ReadFile((file / "inner.json").string());
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message(),
            (file / "inner.json").string() + ": cannot open: Not a directory");
  fs::remove(file);
}

// A directory opens for reading on Linux and then fails to read: named as
// a directory, not "read failed".
TEST(FileTest, ADirectoryIsNamedAsOne) {
  const std::string dir = ::testing::TempDir();
  auto text = ReadFile(dir);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message(), dir + ": a directory, not a file");
}

}  // namespace
}  // namespace kvbill
