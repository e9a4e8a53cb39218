#include "distributed/cluster_layout.h"

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_io.h"
#include "common/status_macros.h"

namespace tessera::distributed {
namespace {

constexpr char kLayoutFileName[] = "CLUSTER";
constexpr char kCatalogFileName[] = "catalog.tcat";  // catalog/catalog.cc's name, to recognize a database

struct Layout {
  int rank = -1;
  int ranks = -1;
};

// The CLUSTER file: "tessera-cluster 1\nranks N\nrank K\n".
std::string FormatLayout(const Layout& layout) {
  return absl::StrCat("tessera-cluster 1\nranks ", layout.ranks, "\nrank ", layout.rank, "\n");
}

absl::StatusOr<Layout> ReadLayout(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  Layout layout;
  bool versioned = false;
  for (absl::string_view line : absl::StrSplit(contents, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    if (fields.size() != 2) continue;
    if (fields[0] == "tessera-cluster") versioned = fields[1] == "1";
    if (fields[0] == "ranks" && !absl::SimpleAtoi(fields[1], &layout.ranks)) layout.ranks = -1;
    if (fields[0] == "rank" && !absl::SimpleAtoi(fields[1], &layout.rank)) layout.rank = -1;
  }
  if (!versioned || layout.ranks < 1 || layout.rank < 0 || layout.rank >= layout.ranks) {
    return absl::DataLossError(absl::StrCat("cluster layout file '", path, "' is corrupt"));
  }
  return layout;
}

}  // namespace

absl::StatusOr<std::string> PrepareRankDirectory(const std::string& base, int rank, int ranks) {
  std::error_code error;
  if (std::filesystem::exists(absl::StrCat(base, "/", kCatalogFileName), error)) {
    return absl::FailedPreconditionError(
        absl::StrCat("data directory '", base,
                     "' holds a single server's database; a distributed cluster keeps "
                     "one directory per rank below its --data directory (rank-0, rank-1, ...): use a new one"));
  }
  const std::string directory = absl::StrCat(base, "/rank-", rank);
  const std::string layout_path = absl::StrCat(directory, "/", kLayoutFileName);
  if (std::filesystem::exists(layout_path, error)) {
    TESSERA_ASSIGN_OR_RETURN(Layout layout, ReadLayout(layout_path));
    if (layout.ranks != ranks || layout.rank != rank) {
      return absl::FailedPreconditionError(absl::StrCat(
          "data directory '", directory, "' belongs to rank ", layout.rank, " of a ", layout.ranks,
          "-rank cluster, but this is rank ", rank, " of ", ranks, ": start the cluster with mpirun -np ", layout.ranks,
          " (partitioned rows are placed by hash modulo the rank count), or use a new --data "
          "directory"));
    }
    return directory;
  }
  if (std::filesystem::exists(absl::StrCat(directory, "/", kCatalogFileName), error)) {
    return absl::FailedPreconditionError(absl::StrCat("data directory '", directory,
                                                      "' holds a database without a cluster layout record (",
                                                      kLayoutFileName, "): refusing to guess its layout"));
  }
  TESSERA_RETURN_IF_ERROR(CreateDirectories(directory));
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(layout_path, FormatLayout(Layout{rank, ranks}), /*sync=*/true));
  return directory;
}

absl::Status CheckNotRankDirectory(const std::string& data_directory) {
  std::error_code error;
  if (!std::filesystem::exists(absl::StrCat(data_directory, "/", kLayoutFileName), error)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "data directory '", data_directory, "' is one rank's part of a distributed cluster (it has a ", kLayoutFileName,
      " record): open the cluster with mpirun ... tessera-server --distributed --data on the "
      "directory above it"));
}

}  // namespace tessera::distributed
