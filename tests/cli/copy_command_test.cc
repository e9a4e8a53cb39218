// The shell's \copy (cli/copy_command.h): the COPY statement it sends with STDIN / STDOUT in place of the local
// file, quoted and bare file names, a query's own FROM, options kept, stdin / stdout, and the errors.

#include "cli/copy_command.h"

#include "gtest/gtest.h"

namespace tessera {
namespace {

TEST(CopyCommandTest, FileBecomesStdinOrStdout) {
  absl::StatusOr<CopyCommand> command = ParseCopyCommand("t FROM '/tmp/it''s data.csv' WITH (FORMAT csv, HEADER)");
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_TRUE(command->from);
  EXPECT_EQ(command->path, "/tmp/it's data.csv");
  EXPECT_EQ(command->sql, "COPY t FROM STDIN WITH (FORMAT csv, HEADER)");

  command = ParseCopyCommand("lineitem (a, b) from data.tbl (format tbl);");
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->path, "data.tbl");
  EXPECT_EQ(command->sql, "COPY lineitem (a, b) FROM STDIN (format tbl)");

  // The query's FROM is inside its parentheses; the COPY's TO follows them.
  command = ParseCopyCommand("(SELECT x FROM t WHERE s = ' to ') TO out.txt");
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_FALSE(command->from);
  EXPECT_EQ(command->path, "out.txt");
  EXPECT_EQ(command->sql, "COPY (SELECT x FROM t WHERE s = ' to ') TO STDOUT");

  command = ParseCopyCommand("t to stdout");
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->path, "");  // the shell's own standard output
  command = ParseCopyCommand("t to 'stdout'");
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->path, "stdout");  // quoted: a file of that name
}

TEST(CopyCommandTest, MalformedCommandsAreErrors) {
  for (const char* bad : {"", "t", "FROM 'x'", "t FROM", "t FROM 'unclosed", "t TO ''"}) {
    absl::StatusOr<CopyCommand> command = ParseCopyCommand(bad);
    EXPECT_FALSE(command.ok()) << bad;
    EXPECT_EQ(command.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(command.status().message().find("\\copy"), std::string::npos) << command.status();
  }
}

}  // namespace
}  // namespace tessera
