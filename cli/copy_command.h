#pragma once
// The shell's \copy: COPY between a table (or a query) on the database, local or remote, and a file on the
// shell's machine, as psql's \copy does. The file is read or written here, by the shell, and its bytes stream
// through the connection as COPY ... FROM STDIN / TO STDOUT (engine/copy_channel.h; over --connect the gRPC
// CopyIn / CopyOut calls), so a server's --allowed-directories never apply and the file never has to be on the
// server.
//
//   \copy TABLE [(COLUMNS)] FROM 'FILE' [[WITH] (OPTIONS)]      \copy TABLE [(COLUMNS)] TO 'FILE' [...]
//   \copy (QUERY) TO 'FILE' [...]
// FILE may be quoted ('it''s.csv') or a bare word; stdin / stdout name the shell's own. OPTIONS are COPY's
// (FORMAT csv | text | tbl, DELIMITER, HEADER, NULL, QUOTE); without FORMAT the data is PostgreSQL's text format
// (tab-separated, \N for NULL), as for every COPY ... STDIN / STDOUT.

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/copy_channel.h"

namespace tessera {

struct CopyCommand {
  std::string sql;   // the COPY statement with STDIN / STDOUT in place of the file
  std::string path;  // the local file ("" for the shell's own stdin / stdout)
  bool from = true;  // FROM (load the file) or TO (write it)
};

// Parses the text after "\copy"; InvalidArgument naming what is missing.
absl::StatusOr<CopyCommand> ParseCopyCommand(std::string_view argument);

// A local file as the data of a COPY: read in pieces of 1 MiB (FROM) or written as the data arrives (TO). Not
// thread-safe. The file is opened by Open and closed by the destructor; a TO file is complete once Close returned
// OK.
class FileCopyChannel final : public CopyChannel {
 public:
  static absl::StatusOr<std::unique_ptr<FileCopyChannel>> Open(const CopyCommand& command);
  ~FileCopyChannel() override;

  absl::Status BeginCopyIn(const CopyStreamShape&) override { return absl::OkStatus(); }
  absl::StatusOr<bool> ReadCopyData(std::string* data) override;
  absl::Status BeginCopyOut(const CopyStreamShape&) override { return absl::OkStatus(); }
  absl::Status WriteCopyData(std::string_view data) override;
  // Flushes and closes a file written by COPY TO (an error of the disk shows here).
  absl::Status Close();

 private:
  FileCopyChannel(std::FILE* file, bool owned, std::string path) : file_(file), owned_(owned), path_(std::move(path)) {}

  std::FILE* file_;
  const bool owned_;  // false for the shell's stdin / stdout
  const std::string path_;
};

}  // namespace tessera
