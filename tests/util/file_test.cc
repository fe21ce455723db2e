#include "kvbill/util/file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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

// A device that never ends is read up to the bound, then refused: it took
// all memory (`simulate -s /dev/zero`). 1 MiB here; ReadFile's is 1 GiB.
TEST(FileTest, AnEndlessFileStopsAtTheBound) {
  auto text = ReadFileUpTo("/dev/zero", std::size_t{1} << 20);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message(),
            "/dev/zero: more than 1.00 MiB, more than kvbill reads whole (a scenario, model "
            "config, price sheet or log is far smaller)");
  // A file of exactly the bound is read.
  const fs::path path =
      fs::path(::testing::TempDir()) / ("kvbill_bound_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path, std::ios::binary) << std::string(std::size_t{1} << 20, 'x');
  auto whole = ReadFileUpTo(path.string(), std::size_t{1} << 20);
  ASSERT_TRUE(whole.ok()) << whole.error().message();
  EXPECT_EQ(whole->size(), std::size_t{1} << 20);
  fs::remove(path);
}

// The run's inputs are remembered by device and inode: an output path that
// names one, by another name too, is refused.
TEST(FileTest, AnOutputOverAnInputIsRefused) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("kvbill_in_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "in.json") << "{}";
  fs::create_hard_link(dir / "in.json", dir / "alias.json");
  std::ofstream(dir / "other.json") << "{}";
  EXPECT_TRUE(CheckNotAnInput((dir / "in.json").string()).ok());  // not read yet
  ASSERT_TRUE(ReadFile((dir / "in.json").string()).ok());
  const auto over = WriteFileAtomically((dir / "alias.json").string(), "out");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message(),
            (dir / "alias.json").string() +
                ": is an input of this run; kvbill does not write its output over a file it reads "
                "(give another output path)");
  EXPECT_TRUE(WriteFileAtomically((dir / "other.json").string(), "out").ok());
  std::ifstream in(dir / "in.json");
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "{}");
  // Read to be rewritten: not an input.
  ASSERT_TRUE(ReadFile((dir / "other.json").string(), /*to_rewrite=*/true).ok());
  EXPECT_TRUE(WriteFileAtomically((dir / "other.json").string(), "again").ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
