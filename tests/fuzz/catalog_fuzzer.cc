// Fuzz target for the catalog file reader (Catalog::Open reading <data dir>/catalog.tcat, catalog/catalog.h). The
// input is the file's body: the target appends the right checksum, so that mutations reach the decoder instead of
// stopping at the checksum (an input whose first byte is 0xFF is written as it is, to test that path too). Beyond
// "never crash, hang or allocate without bound":
//  - a file that does not open fails with DataLoss naming the catalog file;
//  - a catalog that opens is written back unchanged: after a commit (CREATE VIEW then DROP VIEW) and a reopen it
//    has the same tables, columns, types, segments and views.
//
// Build and run: tests/fuzz/README.md.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "common/hash.h"

namespace tessera {
namespace {

void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "catalog_fuzzer: %s\n%.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

const std::string& Directory() {
  static const std::string* directory = [] {
    const std::filesystem::path base =
        std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    auto* path = new std::string((base / ("tessera_catalog_fuzzer_" + std::to_string(::getpid()))).string());
    std::filesystem::remove_all(*path);
    std::filesystem::create_directories(*path);
    return path;
  }();
  return *directory;
}

// Everything the reader decodes, as text, to compare two catalogs.
std::string Describe(const Catalog& catalog) {
  std::string text;
  for (const auto& table : catalog.ListTables()) {
    absl::StrAppend(&text, "table ", table->name, " id ", table->table_id, " block ", table->block_size_bytes, " rows ",
                    table->row_count, "\n");
    for (size_t c = 0; c < table->columns.size(); ++c) {
      const ColumnSchema& column = table->columns[c];
      absl::StrAppend(&text, "  column ", column.name, " ", column.type.ToString(), column.not_null ? " not null" : "",
                      column.default_value ? absl::StrCat(" default ", column.default_value->ToString()) : "");
      const ColumnStatistics& statistics = table->statistics[c];
      absl::StrAppend(&text, " nulls ", statistics.null_count, " min ", statistics.min.ToString(), " max ",
                      statistics.max.ToString(), " sketch ", HashString(statistics.distinct.Serialize()), "\n");
    }
    for (const SegmentDescriptor& segment : table->segments) {
      absl::StrAppend(&text, "  segment ", segment.segment_id, " rows ", segment.row_count, ":");
      for (const BlockLocation& block : segment.blocks) {
        absl::StrAppend(&text, " ", block.file_offset, "/", block.bytes, "/", block.rows);
      }
      absl::StrAppend(&text, "\n");
    }
  }
  for (const auto& view : catalog.ListViews()) {
    absl::StrAppend(&text, "view ", view->name, " (", view->column_names.size(), " columns) ", view->query_text, "\n");
  }
  return text;
}

}  // namespace
}  // namespace tessera

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  const std::string& directory = Directory();
  std::string contents(reinterpret_cast<const char*>(data), size);
  if (!contents.empty() && static_cast<uint8_t>(contents[0]) == 0xFF) {
    contents.erase(0, 1);
  } else {
    const uint64_t checksum = HashBytes(contents.data(), contents.size());
    contents.append(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
  }
  const std::string path = directory + "/catalog.tcat";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  }
  std::string loaded;
  {
    auto catalog = Catalog::Open(directory, /*sync=*/false);
    if (!catalog.ok()) {
      if (catalog.status().code() != absl::StatusCode::kDataLoss ||
          std::string(catalog.status().message()).find("catalog.tcat") == std::string::npos) {
        Fail("unexpected error", catalog.status().ToString());
      }
      return 0;
    }
    loaded = Describe(**catalog);
    const std::string view_name = "fuzz_view_that_no_input_names";
    if ((*catalog)->HasTable(view_name) || (*catalog)->HasView(view_name)) return 0;
    absl::Status created = (*catalog)->CreateView(ViewDescriptor{view_name, {"x"}, "SELECT 1 AS x"}, false);
    if (!created.ok()) Fail("cannot commit to a catalog that opened", created.ToString());
    absl::Status dropped = (*catalog)->DropView(view_name);
    if (!dropped.ok()) Fail("cannot commit to a catalog that opened", dropped.ToString());
  }
  auto reopened = Catalog::Open(directory, /*sync=*/false);
  if (!reopened.ok()) Fail("a catalog written back does not open", reopened.status().ToString());
  const std::string again = Describe(**reopened);
  if (again != loaded) Fail("a catalog written back reads differently", loaded + "\n---\n" + again);
  return 0;
}
