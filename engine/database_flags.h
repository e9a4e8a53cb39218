// The command-line flags of every program that opens a database (the shell and tessera-server): --memory-limit,
// --threads, --policy, --admission-threshold and --no-sync, defined once here with their help text.
//
// The flags are gflags defined in database_flags.cc; they exist in a binary only when it calls
// ApplyDatabaseFlags (the linker takes the object file from the static library only then), so a benchmark that
// links tessera_engine may define flags of the same names. A program lists kDatabaseFlagsFile in its
// ProgramDescription::flag_files (common/command_line_flags.h) so that --help shows them.
#pragma once

#include "absl/status/status.h"
#include "engine/session.h"

namespace tessera {

// The source file that defines the flags, for ProgramDescription::flag_files.
extern const char kDatabaseFlagsFile[];

// Sets the options' memory budget, worker threads, scheduling policy, admission threshold and sync_writes from
// the parsed flags (those not given keep `options`' values). InvalidArgument naming the flag and the value when a
// value is out of range or names no policy. Call after ParseProgramFlags.
absl::Status ApplyDatabaseFlags(DatabaseOptions* options);

}  // namespace tessera
