#include "tests/sqllogictest/sql_placeholders.h"

#include "gtest/gtest.h"

namespace tessera::sqllogictest {
namespace {

TEST(ReplacePlaceholdersTest, ReplacesEveryOccurrence) {
  PlaceholderPaths paths{"/tmp/x/test_dir", "/work/shared", "/repo/tests/data"};
  EXPECT_EQ(ReplacePlaceholders("COPY t FROM '__DATA_DIR__/t.csv'; COPY u FROM '__DATA_DIR__/u.csv'", paths),
            "COPY t FROM '/repo/tests/data/t.csv'; COPY u FROM '/repo/tests/data/u.csv'");
  EXPECT_EQ(ReplacePlaceholders("'__TEST_DIR__/out.tbl' '__SHARED_DIR__/tpch'", paths),
            "'/tmp/x/test_dir/out.tbl' '/work/shared/tpch'");
  EXPECT_EQ(ReplacePlaceholders("SELECT '__OTHER__'", paths), "SELECT '__OTHER__'");
}

}  // namespace
}  // namespace tessera::sqllogictest
