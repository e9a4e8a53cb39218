// The typed settings registry (engine/settings.h): every declaration is whole, every session setting's default
// parses in its own syntax and applies as QueryRunOptions' default, and SET / SHOW / Apply go through it.

#include "engine/settings.h"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/statement_handlers.h"
#include "gtest/gtest.h"
#include "test_database.h"

namespace tessera {
namespace {

class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / absl::StrCat("settings_test_", getpid());
    std::filesystem::remove_all(directory_);
    absl::StatusOr<std::unique_ptr<Database>> database = OpenTestDatabase(directory_);
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
  }
  void TearDown() override {
    database_.reset();
    std::filesystem::remove_all(directory_);
  }

  std::filesystem::path directory_;
  std::unique_ptr<Database> database_;
};

TEST_F(SettingsTest, EveryDeclarationIsWholeAndSorted) {
  const std::vector<SettingDefinition>& settings = AllSettings();
  ASSERT_FALSE(settings.empty());
  for (size_t i = 0; i < settings.size(); ++i) {
    const SettingDefinition& setting = settings[i];
    SCOPED_TRACE(setting.name);
    if (i > 0) {
      EXPECT_LT(settings[i - 1].name, setting.name);
    }
    EXPECT_FALSE(setting.help.empty());
    EXPECT_FALSE(setting.type.empty());
    ASSERT_TRUE(setting.parse);
    if (setting.scope == SettingScope::kSession) {
      ASSERT_TRUE(setting.default_text && setting.apply);
      EXPECT_FALSE(setting.set_on_database || setting.show_from_database);
      absl::StatusOr<ParsedSetting> parsed = setting.parse(setting.default_text(*database_));
      EXPECT_TRUE(parsed.ok()) << parsed.status();
    } else {
      EXPECT_TRUE(setting.set_on_database && setting.show_from_database);
      EXPECT_FALSE(setting.default_text || setting.apply);
    }
  }
}

TEST_F(SettingsTest, DefaultsApplyAsTheQueryOptionsDefaults) {
  SessionSettings settings;
  QueryRunOptions applied;
  applied.pipelining = false;
  applied.priority = 9;
  settings.Apply(*database_, &applied);
  const QueryRunOptions defaults;
  EXPECT_EQ(applied.pipelining, defaults.pipelining);
  EXPECT_EQ(applied.priority, defaults.priority);
  EXPECT_EQ(applied.compress_loads, defaults.compress_loads);
  EXPECT_EQ(applied.statement_timeout_ms, defaults.statement_timeout_ms);
  EXPECT_EQ(applied.auto_analyze_threshold, defaults.auto_analyze_threshold);
  EXPECT_EQ(applied.compaction_threshold, defaults.compaction_threshold);
  EXPECT_EQ(applied.optimizer.max_recursion_depth, optimizer::OptimizerOptions::kDefaultMaxRecursionDepth);
  EXPECT_TRUE(applied.optimizer.disabled_rules.empty());
  EXPECT_EQ(applied.scan_sharing, database_->options().scan_sharing);  // the server's default, not QueryRunOptions'
}

TEST_F(SettingsTest, SetValuesApplyTyped) {
  SessionSettings settings;
  ASSERT_TRUE(settings.Set(*database_, "pipelining", "FALSE").ok());
  ASSERT_TRUE(settings.Set(*database_, "priority", "7").ok());
  ASSERT_TRUE(settings.Set(*database_, "statement_timeout", "2min").ok());
  ASSERT_TRUE(settings.Set(*database_, "compaction_threshold", "0.5").ok());
  ASSERT_TRUE(settings.Set(*database_, "scan_sharing", "Batch").ok());
  ASSERT_TRUE(settings.Set(*database_, "disabled_rules", "join_ordering").ok());
  ASSERT_TRUE(settings.Set(*database_, "max_recursion_depth", "12").ok());
  QueryRunOptions applied;
  settings.Apply(*database_, &applied);
  EXPECT_FALSE(applied.pipelining);
  EXPECT_EQ(applied.priority, 7);
  EXPECT_EQ(applied.statement_timeout_ms, 120'000);
  EXPECT_EQ(applied.compaction_threshold, 0.5);
  EXPECT_EQ(applied.scan_sharing, ScanSharing::kBatch);
  EXPECT_EQ(applied.optimizer.disabled_rules, std::set<std::string>{"join_ordering"});
  EXPECT_EQ(applied.optimizer.max_recursion_depth, 12);

  // Shown as written, except what the type normalizes (milliseconds).
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> shown = settings.Show(*database_, "pipelining");
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ(*shown, (std::vector<std::pair<std::string, std::string>>{{"pipelining", "FALSE"}}));
  shown = settings.Show(*database_, "statement_timeout");
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ((*shown)[0].second, "120000");
}

TEST_F(SettingsTest, BadValuesKeepThePreviousOne) {
  SessionSettings settings;
  ASSERT_TRUE(settings.Set(*database_, "priority", "3").ok());
  absl::Status refused = settings.Set(*database_, "priority", "2147483648");  // beyond int
  EXPECT_EQ(refused.message(), "priority must be a positive integer, not '2147483648'");
  EXPECT_EQ(settings.Set(*database_, "pipelining", "maybe").message(),
            "pipelining must be eager (on), lazy (off) or elastic, not 'maybe'");
  EXPECT_EQ(settings.Set(*database_, "compression", "2").message(), "compression must be on or off, not '2'");
  QueryRunOptions applied;
  settings.Apply(*database_, &applied);
  EXPECT_EQ(applied.priority, 3);
  EXPECT_TRUE(applied.pipelining);
}

TEST_F(SettingsTest, ShowAllListsSessionSettingsOnly) {
  SessionSettings settings;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> all = settings.Show(*database_, "all");
  ASSERT_TRUE(all.ok());
  size_t session_settings = 0;
  for (const SettingDefinition& setting : AllSettings()) session_settings += setting.scope == SettingScope::kSession;
  EXPECT_EQ(all->size(), session_settings);
  for (const auto& [name, value] : *all) EXPECT_NE(name, "scheduler_policy");
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> policy =
      settings.Show(*database_, "scheduler_policy");
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ((*policy)[0].second, "fair");
  EXPECT_EQ(settings.Show(*database_, "pipelinig").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessera
