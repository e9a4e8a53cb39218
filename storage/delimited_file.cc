#include "storage/delimited_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <thread>

#include "absl/strings/str_cat.h"
#include "catalog/text_conversion.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "storage/block_builder.h"
#include "storage/block_statistics.h"

namespace tessera {
namespace {

constexpr size_t kMaxShownValueBytes = 80;

std::string ShownValue(std::string_view value) {
  if (value.size() <= kMaxShownValueBytes) return std::string(value);
  return std::string(value.substr(0, kMaxShownValueBytes)) + "...";
}

// Number of characters (UTF-8 code points) in `text`.
size_t CharacterCount(std::string_view text) {
  size_t count = 0;
  for (unsigned char c : text) count += (c & 0xC0) != 0x80;
  return count;
}

// Where a parse error happened, to be turned into a message once the line number is known.
struct LineError {
  size_t line_offset = 0;  // byte offset of the line's start in the file
  std::string message;     // "column x: ..." or "expected 16 fields, found 15"
};

// Converts one field's text into the builder. Returns false and fills `error` on bad input.
bool AppendField(BlockBuilder& builder, int column, const ColumnSchema& schema, std::string_view text,
                 std::string* error) {
  const Type& type = schema.type;
  bool ok = true;
  switch (type.id()) {
    case TypeId::kBoolean: {
      bool v;
      ok = ParseBoolean(text, &v);
      if (ok) builder.Append<uint8_t>(column, v ? 1 : 0);
      break;
    }
    case TypeId::kInteger: {
      int32_t v;
      ok = ParseInt32(text, &v);
      if (ok) builder.Append<int32_t>(column, v);
      break;
    }
    case TypeId::kBigInt: {
      int64_t v;
      ok = ParseInt64(text, &v);
      if (ok) builder.Append<int64_t>(column, v);
      break;
    }
    case TypeId::kDouble: {
      double v;
      ok = ParseDouble(text, &v);
      if (ok) builder.Append<double>(column, v);
      break;
    }
    case TypeId::kDecimal: {
      int128 v;
      ok = ParseDecimal(text, type.precision(), type.scale(), &v);
      if (ok) {
        if (type.IsWideDecimal()) {
          builder.Append<int128>(column, v);
        } else {
          builder.Append<int64_t>(column, static_cast<int64_t>(v));
        }
      }
      break;
    }
    case TypeId::kDate: {
      int32_t v;
      ok = ParseDate(text, &v);
      if (ok) builder.Append<int32_t>(column, v);
      break;
    }
    case TypeId::kTimestamp: {
      int64_t v;
      ok = ParseTimestamp(text, &v);
      if (ok) builder.Append<int64_t>(column, v);
      break;
    }
    case TypeId::kInterval: {
      Interval v;
      ok = ParseInterval(text, "", &v);
      if (ok) builder.Append<Interval>(column, v);
      break;
    }
    case TypeId::kChar:
    case TypeId::kVarchar:
      if (type.length() > 0 && text.size() > type.length() && CharacterCount(text) > type.length()) {
        *error =
            absl::StrCat("column ", schema.name, ": value '", ShownValue(text), "' is too long for ", type.ToString());
        return false;
      }
      builder.AppendString(column, text);
      return true;
    case TypeId::kNull:
      builder.AppendNull(column);
      return true;
  }
  if (!ok) {
    *error =
        absl::StrCat("column ", schema.name, ": invalid input for ", type.ToString(), ": '", ShownValue(text), "'");
  }
  return ok;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of a text-format field (DelimitedFormat::backslash_escapes), as PostgreSQL's COPY reads it.
void UnescapeText(std::string_view raw, std::string* out) {
  for (size_t k = 0; k < raw.size(); ++k) {
    if (raw[k] != '\\' || k + 1 == raw.size()) {
      out->push_back(raw[k]);
      continue;
    }
    const char c = raw[++k];
    switch (c) {
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'v':
        out->push_back('\v');
        break;
      case 'x':
        if (k + 1 < raw.size() && HexDigit(raw[k + 1]) >= 0) {
          int value = HexDigit(raw[++k]);
          if (k + 1 < raw.size() && HexDigit(raw[k + 1]) >= 0) value = value * 16 + HexDigit(raw[++k]);
          out->push_back(static_cast<char>(value));
        } else {
          out->push_back('x');
        }
        break;
      default:
        if (c >= '0' && c <= '7') {
          int value = c - '0';
          for (int digits = 1; digits < 3 && k + 1 < raw.size() && raw[k + 1] >= '0' && raw[k + 1] <= '7'; ++digits) {
            value = value * 8 + (raw[++k] - '0');
          }
          out->push_back(static_cast<char>(value));
        } else {
          out->push_back(c);
        }
    }
  }
}

// Splits and converts delimited lines of one chunk. One instance per chunk.
class ChunkParser {
 public:
  ChunkParser(const TableDescriptor& table, const std::vector<int>& target_columns, const DelimitedFormat& format)
      : table_(table),
        format_(format),
        field_to_column_(target_columns),
        builder_(table.columns, table.block_size_bytes) {
    if (field_to_column_.empty()) {
      for (size_t i = 0; i < table.columns.size(); ++i) field_to_column_.push_back(static_cast<int>(i));
    }
    column_is_loaded_.assign(table.columns.size(), false);
    for (int c : field_to_column_) column_is_loaded_[c] = true;
    fields_.resize(field_to_column_.size() + 1);
    quoted_.resize(field_to_column_.size() + 1);
  }

  // Parses [begin, end) of `file` (line-aligned) and writes the last, partly filled block. On a bad line fills
  // `error` and returns false; on a failed block allocation or write fills `system_error` and returns false;
  // returns true early when `abandon` is set.
  bool ParseChunk(std::string_view file, size_t begin, size_t end, LoadBlockWriter& out,
                  const std::atomic<bool>& abandon, LineError* error, absl::Status* system_error) {
    return ParseLines(file, begin, end, out, abandon, error, system_error) && FlushRest(out, system_error);
  }

  // ParseChunk without the last block's flush: the rows of a line that does not fill a block stay in the builder
  // for the next call (a stream's pieces).
  bool ParseLines(std::string_view file, size_t begin, size_t end, LoadBlockWriter& out,
                  const std::atomic<bool>& abandon, LineError* error, absl::Status* system_error) {
    size_t position = begin;
    int64_t rows = 0;
    while (position < end) {
      if ((rows & 1023) == 0 && abandon.load(std::memory_order_relaxed)) return true;
      const char* line_start = file.data() + position;
      const char* newline = static_cast<const char*>(std::memchr(line_start, '\n', end - position));
      size_t line_end = newline == nullptr ? end : static_cast<size_t>(newline - file.data());
      std::string_view line(line_start, line_end - position);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      size_t line_offset = position;
      position = line_end + 1;
      if (line.empty()) continue;                                // blank lines (e.g. a final newline) carry no row
      if (format_.backslash_escapes && line == "\\.") continue;  // the text format's end-of-data marker

      if (!ParseLine(line, &error->message)) {
        error->line_offset = line_offset;
        return false;
      }
      if (!builder_.CommitRow()) {
        if (absl::Status flushed = out.Flush(builder_); !flushed.ok()) {
          *system_error = std::move(flushed);
          return false;
        }
        if (!ParseLine(line, &error->message)) {
          error->line_offset = line_offset;
          return false;
        }
        if (!builder_.CommitRow()) {
          error->line_offset = line_offset;
          error->message =
              absl::StrCat("row is too large for the table's block size of ", table_.block_size_bytes, " bytes");
          return false;
        }
      }
      ++rows;
    }
    return true;
  }

  // Writes the rows in the builder, if any, as the last block.
  bool FlushRest(LoadBlockWriter& out, absl::Status* system_error) {
    if (builder_.empty()) return true;
    *system_error = out.Flush(builder_);
    return system_error->ok();
  }

 private:
  // Splits `line` into fields and appends one row to the builder (not yet committed).
  bool ParseLine(std::string_view line, std::string* error) {
    // The previous line's unescaped fields are done with; this line's must live until its fields are converted.
    unescaped_fields_.clear();
    const size_t expected = field_to_column_.size();
    size_t count = 0;
    size_t i = 0;
    const char delimiter = format_.delimiter;
    while (true) {
      if (count > expected) break;  // too many fields; counted below
      bool quoted = false;
      std::string_view field;
      if (format_.quote != '\0' && i < line.size() && line[i] == format_.quote) {
        quoted = true;
        size_t start = ++i;
        bool has_escapes = false;
        while (true) {
          if (i >= line.size()) {
            *error = "unterminated quoted field (quoted fields may not span lines)";
            return false;
          }
          if (line[i] == format_.quote) {
            if (i + 1 < line.size() && line[i + 1] == format_.quote) {
              has_escapes = true;
              i += 2;
              continue;
            }
            break;
          }
          ++i;
        }
        field = line.substr(start, i - start);
        ++i;  // closing quote
        if (has_escapes) {
          unescaped_fields_.emplace_back();
          std::string& buffer = unescaped_fields_.back();
          for (size_t k = 0; k < field.size(); ++k) {
            buffer.push_back(field[k]);
            if (field[k] == format_.quote) ++k;
          }
          field = buffer;
        }
        if (i < line.size() && line[i] != delimiter) {
          *error = "unexpected character after a closing quote";
          return false;
        }
      } else if (format_.backslash_escapes) {
        const size_t start = i;
        bool has_escapes = false;
        while (i < line.size() && line[i] != delimiter) {
          if (line[i] == '\\') {
            has_escapes = true;
            if (i + 1 < line.size()) ++i;
          }
          ++i;
        }
        field = line.substr(start, i - start);
        if (has_escapes && field != format_.null_string) {
          unescaped_fields_.emplace_back();
          UnescapeText(field, &unescaped_fields_.back());
          field = unescaped_fields_.back();
          quoted = true;  // an escaped field is a value, never NULL (only the raw null string is)
        }
      } else {
        const char* start = line.data() + i;
        const void* found = std::memchr(start, delimiter, line.size() - i);
        size_t field_end =
            found == nullptr ? line.size() : static_cast<size_t>(static_cast<const char*>(found) - line.data());
        field = line.substr(i, field_end - i);
        i = field_end;
      }
      if (count < fields_.size()) {
        fields_[count] = field;
        quoted_[count] = quoted;
      }
      ++count;
      if (i >= line.size()) break;
      ++i;  // delimiter
      if (i == line.size()) {
        // A delimiter ends the line. In .tbl files it terminates the last field (dbgen's trailing '|'); in CSV it
        // is dbgen's trailing delimiter when all fields are there, else it separates an empty last field.
        if (format_.trailing_delimiter || count == expected) break;
        if (count < fields_.size()) {
          fields_[count] = std::string_view();
          quoted_[count] = false;
        }
        ++count;
        break;
      }
    }
    if (count != expected) {
      *error = absl::StrCat("expected ", expected, " fields, found ", count);
      return false;
    }
    for (size_t f = 0; f < expected; ++f) {
      int column = field_to_column_[f];
      const ColumnSchema& schema = table_.columns[column];
      if (!quoted_[f] && fields_[f] == format_.null_string) {
        if (schema.not_null) {
          *error = absl::StrCat("column ", schema.name, ": NULL in a NOT NULL column");
          return false;
        }
        builder_.AppendNull(column);
      } else if (!AppendField(builder_, column, schema, fields_[f], error)) {
        return false;
      }
    }
    if (expected != table_.columns.size()) AppendDefaults();
    return true;
  }

  // Columns not in the COPY column list: fill with their defaults. The builder requires appends in column
  // order per row, which holds because every column gets exactly one append per row before CommitRow.
  void AppendDefaults() {
    for (size_t c = 0; c < table_.columns.size(); ++c) {
      if (column_is_loaded_[c]) continue;
      const ColumnSchema& schema = table_.columns[c];
      if (schema.default_value.has_value()) {
        builder_.AppendValue(static_cast<int>(c), *schema.default_value);
      } else {
        builder_.AppendNull(static_cast<int>(c));
      }
    }
  }

  const TableDescriptor& table_;
  const DelimitedFormat& format_;
  std::vector<int> field_to_column_;
  std::vector<bool> column_is_loaded_;
  BlockBuilder builder_;
  std::vector<std::string_view> fields_;
  std::vector<bool> quoted_;
  std::deque<std::string> unescaped_fields_;  // deque: growing it keeps earlier fields' views valid
};

// A COPY column list: no column twice, and every NOT NULL column without a default in it.
absl::Status CheckTargetColumns(const TableDescriptor& table, const std::vector<int>& target_columns) {
  for (size_t i = 0; i < target_columns.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (target_columns[i] == target_columns[j]) {
        return absl::InvalidArgumentError(
            absl::StrCat("column '", table.columns[target_columns[i]].name, "' listed twice"));
      }
    }
  }
  if (!target_columns.empty()) {
    std::vector<bool> listed(table.columns.size(), false);
    for (int c : target_columns) listed[c] = true;
    for (size_t c = 0; c < table.columns.size(); ++c) {
      if (!listed[c] && table.columns[c].not_null && !table.columns[c].default_value.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("column '", table.columns[c].name, "' is NOT NULL without a default and must be loaded"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

LoadBlockWriter::LoadBlockWriter(const std::vector<ColumnSchema>& columns, StorageManager& storage,
                                 SegmentWriter& writer, BufferPool* account, bool compress)
    : columns_(columns), storage_(storage), writer_(writer), account_(account), compress_(compress) {
  loaded_.statistics.resize(columns.size());
}

absl::Status LoadBlockWriter::Flush(BlockBuilder& builder) {
  const int64_t rows = builder.row_count();
  const size_t bytes = compress_ ? builder.PlanCompressed() : builder.PlanPlain();
  TESSERA_ASSIGN_OR_RETURN(PendingBlock block, storage_.AllocatePendingBlock(bytes, account_));
  builder.FinishCompressed(block.data());
  AccumulateBlockStatistics(block.view(), columns_, &loaded_.statistics);
  TESSERA_RETURN_IF_ERROR(writer_.Append(block));
  loaded_.blocks.push_back(std::move(block));
  loaded_.row_count += rows;
  return absl::OkStatus();
}

void LoadedRows::Append(LoadedRows other) {
  row_count += other.row_count;
  if (statistics.empty()) {
    statistics = std::move(other.statistics);
  } else {
    for (size_t c = 0; c < other.statistics.size(); ++c) statistics[c].Merge(other.statistics[c]);
  }
  for (PendingBlock& block : other.blocks) blocks.push_back(std::move(block));
}

DelimitedFileChunks::DelimitedFileChunks(std::string path, const TableDescriptor& table,
                                         std::vector<int> target_columns, DelimitedFormat format, int fd,
                                         size_t file_size)
    : path_(std::move(path)),
      table_(table),
      target_columns_(std::move(target_columns)),
      format_(std::move(format)),
      fd_(fd),
      file_size_(file_size) {}

DelimitedFileChunks::~DelimitedFileChunks() { ::close(fd_); }

absl::Status DelimitedFileChunks::ReadRange(size_t begin, size_t end, char* out) const {
  const size_t size = end - begin;
  size_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd_, out + done, size - done, static_cast<off_t>(begin + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return absl::InternalError(
          absl::StrCat("COPY ", table_.name, ": cannot read '", path_, "': ", std::strerror(errno)));
    }
    if (got == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("COPY ", table_.name, ": file '", path_, "' changed while being read (it was truncated)"));
    }
    done += static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> DelimitedFileChunks::NextLineStart(size_t from) const {
  constexpr size_t kWindow = 64 << 10;
  std::unique_ptr<char[]> window(new char[kWindow]);
  while (from < file_size_) {
    const size_t end = std::min(file_size_, from + kWindow);
    TESSERA_RETURN_IF_ERROR(ReadRange(from, end, window.get()));
    if (const void* newline = std::memchr(window.get(), '\n', end - from); newline != nullptr) {
      return from + static_cast<size_t>(static_cast<const char*>(newline) - window.get()) + 1;
    }
    from = end;
  }
  return file_size_;
}

absl::StatusOr<std::unique_ptr<DelimitedFileChunks>> DelimitedFileChunks::Open(
    const std::string& path, const TableDescriptor& table, const std::vector<int>& target_columns,
    const DelimitedFormat& format, ChunkSizing sizing, const std::function<absl::Status(int fd)>& verify_opened) {
  TESSERA_RETURN_IF_ERROR(CheckTargetColumns(table, target_columns));
  // O_NONBLOCK: opening a FIFO must not wait for a writer (FIFOs are refused below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    const std::string message = absl::StrCat("COPY ", table.name, ": cannot open '", path, "': ", std::strerror(error));
    if (error == ENOENT) return absl::NotFoundError(message);
    if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
    return absl::InternalError(message);
  }
  if (verify_opened) {
    absl::Status verified = verify_opened(fd);
    if (!verified.ok()) {
      ::close(fd);
      return verified;
    }
  }
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const bool directory = S_ISDIR(info.st_mode);
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("COPY ", table.name, ": '", path, "' is ",
                     directory ? "a directory, not a file" : "not a regular file (named pipes are not supported)"));
  }
  ::fcntl(fd, F_SETFL, 0);
  const size_t size = static_cast<size_t>(info.st_size);
  std::unique_ptr<DelimitedFileChunks> chunks(new DelimitedFileChunks(path, table, target_columns, format, fd, size));
  size_t data_begin = 0;
  if (format.header) {
    TESSERA_ASSIGN_OR_RETURN(data_begin, chunks->NextLineStart(0));
  }
  const size_t chunk_bytes =
      std::max<size_t>(1, std::clamp((size - data_begin) / std::max<size_t>(1, sizing.target_chunks) + 1,
                                     sizing.min_bytes, std::max(sizing.min_bytes, sizing.max_bytes)));
  for (size_t begin = data_begin; begin < size;) {
    size_t end = size - begin > chunk_bytes ? begin + chunk_bytes : size;
    if (end < size) {
      TESSERA_ASSIGN_OR_RETURN(end, chunks->NextLineStart(end));
    }
    chunks->chunks_.emplace_back(begin, end);
    begin = end;
  }
  return chunks;
}

absl::Status DelimitedFileChunks::ParseChunk(size_t chunk, LoadBlockWriter& out,
                                             const std::atomic<bool>& abandon) const {
  const auto [begin, end] = chunks_[chunk];
  // Not a std::string: its zero-filling resize would be one more pass over the chunk.
  std::unique_ptr<char[]> buffer(new char[end - begin]);
  TESSERA_RETURN_IF_ERROR(ReadRange(begin, end, buffer.get()));
  const std::string_view text(buffer.get(), end - begin);
  ChunkParser parser(table_, target_columns_, format_);
  LineError error;
  absl::Status system_error;
  if (parser.ParseChunk(text, 0, text.size(), out, abandon, &error, &system_error)) {
    if (abandon.load()) return absl::CancelledError(absl::StrCat("COPY ", table_.name, " abandoned"));
    return absl::OkStatus();
  }
  if (!system_error.ok()) {
    return absl::Status(system_error.code(), absl::StrCat("COPY ", table_.name, ": ", system_error.message()));
  }
  // Error path only: count the lines before the bad one (those of earlier chunks read again).
  int64_t line = 1 + std::count(text.data(), text.data() + error.line_offset, '\n');
  constexpr size_t kPiece = 8 << 20;
  std::unique_ptr<char[]> before(new char[kPiece]);
  for (size_t from = 0; from < begin; from += kPiece) {
    const size_t to = std::min(begin, from + kPiece);
    if (!ReadRange(from, to, before.get()).ok()) break;
    line += std::count(before.get(), before.get() + (to - from), '\n');
  }
  return absl::InvalidArgumentError(
      absl::StrCat("COPY ", table_.name, ": '", path_, "' line ", line, ", ", error.message));
}

class DelimitedStreamParser::Impl {
 public:
  Impl(const TableDescriptor& table, const std::vector<int>& target_columns, const DelimitedFormat& format)
      : format_(format), parser_(table, target_columns, format_) {}
  ChunkParser& parser() { return parser_; }

 private:
  const DelimitedFormat format_;  // before parser_, which keeps a reference to it
  ChunkParser parser_;
};

absl::StatusOr<std::unique_ptr<DelimitedStreamParser>> DelimitedStreamParser::Create(
    const TableDescriptor& table, const std::vector<int>& target_columns, const DelimitedFormat& format,
    std::string source, LoadBlockWriter* out) {
  TESSERA_RETURN_IF_ERROR(CheckTargetColumns(table, target_columns));
  return std::unique_ptr<DelimitedStreamParser>(new DelimitedStreamParser(
      std::make_unique<Impl>(table, target_columns, format), table, std::move(source), out, format.header));
}

DelimitedStreamParser::DelimitedStreamParser(std::unique_ptr<Impl> impl, const TableDescriptor& table,
                                             std::string source, LoadBlockWriter* out, bool skip_header)
    : impl_(std::move(impl)), table_(table), source_(std::move(source)), out_(out), skip_header_(skip_header) {}

DelimitedStreamParser::~DelimitedStreamParser() = default;

absl::Status DelimitedStreamParser::ParseLines(std::string_view text, const std::atomic<bool>& abandon) {
  size_t begin = 0;
  if (skip_header_) {
    const void* newline = std::memchr(text.data(), '\n', text.size());
    begin = newline == nullptr ? text.size() : static_cast<size_t>(static_cast<const char*>(newline) - text.data()) + 1;
    skip_header_ = false;
  }
  LineError error;
  absl::Status system_error;
  if (impl_->parser().ParseLines(text, begin, text.size(), *out_, abandon, &error, &system_error)) {
    if (abandon.load()) return absl::CancelledError(absl::StrCat("COPY ", table_.name, " cancelled"));
    lines_ += std::count(text.begin(), text.end(), '\n') + (text.empty() || text.back() == '\n' ? 0 : 1);
    return absl::OkStatus();
  }
  if (!system_error.ok()) {
    return absl::Status(system_error.code(), absl::StrCat("COPY ", table_.name, ": ", system_error.message()));
  }
  const int64_t line = lines_ + 1 + std::count(text.data(), text.data() + error.line_offset, '\n');
  return absl::InvalidArgumentError(
      absl::StrCat("COPY ", table_.name, ": ", source_, " line ", line, ", ", error.message));
}

absl::Status DelimitedStreamParser::Feed(std::string_view data, const std::atomic<bool>& abandon) {
  if (!partial_line_.empty()) {
    const void* newline = std::memchr(data.data(), '\n', data.size());
    if (newline != nullptr) {
      const size_t taken = static_cast<size_t>(static_cast<const char*>(newline) - data.data()) + 1;
      partial_line_.append(data.data(), taken);
      data.remove_prefix(taken);
      absl::Status parsed = ParseLines(partial_line_, abandon);
      partial_line_.clear();
      TESSERA_RETURN_IF_ERROR(parsed);
    }
  }
  if (partial_line_.empty()) {
    const void* last = ::memrchr(data.data(), '\n', data.size());
    if (last != nullptr) {
      const size_t complete = static_cast<size_t>(static_cast<const char*>(last) - data.data()) + 1;
      TESSERA_RETURN_IF_ERROR(ParseLines(data.substr(0, complete), abandon));
      data.remove_prefix(complete);
    }
  }
  partial_line_.append(data);
  if (partial_line_.size() > kMaxLineBytes) {
    return absl::InvalidArgumentError(absl::StrCat("COPY ", table_.name, ": ", source_, " line ", lines_ + 1,
                                                   " is longer than ", kMaxLineBytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status DelimitedStreamParser::Finish(const std::atomic<bool>& abandon) {
  if (!partial_line_.empty()) {
    absl::Status parsed = ParseLines(partial_line_, abandon);
    partial_line_.clear();
    TESSERA_RETURN_IF_ERROR(parsed);
  }
  absl::Status system_error;
  if (!impl_->parser().FlushRest(*out_, &system_error)) {
    return absl::Status(system_error.code(), absl::StrCat("COPY ", table_.name, ": ", system_error.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadedRows> LoadDelimitedFile(const std::string& path, const TableDescriptor& table,
                                             const std::vector<int>& target_columns, const DelimitedFormat& format,
                                             StorageManager& storage, SegmentWriter& writer, int threads) {
  threads = std::max(1, threads);
  // A few chunks per thread so that threads finish together.
  ChunkSizing sizing;
  sizing.target_chunks = static_cast<size_t>(threads) * 4;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<DelimitedFileChunks> chunks,
                           DelimitedFileChunks::Open(path, table, target_columns, format, sizing));

  struct ChunkResult {
    LoadedRows loaded;
    absl::Status status;
  };
  std::vector<ChunkResult> results(chunks->chunk_count());
  std::atomic<size_t> next_chunk{0};
  std::atomic<bool> abandon{false};
  auto work = [&]() {
    while (!abandon.load()) {
      size_t k = next_chunk.fetch_add(1);
      if (k >= results.size()) break;
      LoadBlockWriter out(table.columns, storage, writer);
      results[k].status = chunks->ParseChunk(k, out, abandon);
      results[k].loaded = std::move(out.loaded());
      if (!results[k].status.ok()) abandon.store(true);
    }
  };
  int thread_count = static_cast<int>(std::min<size_t>(threads, std::max<size_t>(1, results.size())));
  std::vector<std::thread> workers;
  for (int t = 1; t < thread_count; ++t) workers.emplace_back(work);
  work();
  for (std::thread& worker : workers) worker.join();

  // The first failed chunk in file order names the error (chunks abandoned because of it say Cancelled).
  for (ChunkResult& result : results) {
    if (!result.status.ok() && !absl::IsCancelled(result.status)) return result.status;
  }
  LoadedRows loaded;
  loaded.statistics.resize(table.columns.size());
  for (ChunkResult& result : results) loaded.Append(std::move(result.loaded));
  return loaded;
}

SegmentDescriptor DescribeSegment(uint64_t segment_id, const LoadedRows& loaded) {
  SegmentDescriptor segment;
  segment.segment_id = segment_id;
  for (const PendingBlock& block : loaded.blocks) {
    segment.blocks.push_back(block.location());
    segment.row_count += block.location().rows;
  }
  return segment;
}

absl::StatusOr<LoadedRows> LoadRows(const TableDescriptor& table, const std::vector<std::vector<Value>>& rows,
                                    StorageManager& storage, SegmentWriter& writer) {
  LoadBlockWriter out(table.columns, storage, writer);
  BlockBuilder builder(table.columns, table.block_size_bytes);
  for (const std::vector<Value>& row : rows) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      for (size_t c = 0; c < table.columns.size(); ++c) builder.AppendValue(static_cast<int>(c), row[c]);
      if (builder.CommitRow()) break;
      if (attempt == 1 || builder.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("row is too large for the table's block size of ", table.block_size_bytes, " bytes"));
      }
      TESSERA_RETURN_IF_ERROR(out.Flush(builder));
    }
  }
  if (!builder.empty()) TESSERA_RETURN_IF_ERROR(out.Flush(builder));
  return std::move(out.loaded());
}

namespace {

void AppendFieldText(const BlockView& block, int column, uint32_t row, const Type& type, std::string* out) {
  switch (type.id()) {
    case TypeId::kBoolean:
      out->append(block.Values<uint8_t>(column)[row] ? "true" : "false");
      break;
    case TypeId::kInteger:
      AppendInt64(block.GetFixed<int32_t>(column, row), out);
      break;
    case TypeId::kBigInt:
      AppendInt64(block.GetFixed<int64_t>(column, row), out);
      break;
    case TypeId::kDouble:
      AppendDouble(block.Values<double>(column)[row], out);
      break;
    case TypeId::kDecimal:
      // GetFixed copies a 128-bit value out, never loading it as an int128 lvalue from an 8-byte-aligned column.
      AppendDecimal(type.IsWideDecimal() ? block.GetFixed<int128>(column, row) : block.GetFixed<int64_t>(column, row),
                    type.scale(), out);
      break;
    case TypeId::kDate:
      AppendDate(block.GetFixed<int32_t>(column, row), out);
      break;
    case TypeId::kTimestamp:
      AppendTimestamp(block.GetFixed<int64_t>(column, row), out);
      break;
    case TypeId::kInterval:
      AppendInterval(block.Values<Interval>(column)[row], out);
      break;
    case TypeId::kChar:
    case TypeId::kVarchar:
      out->append(block.GetString(column, row));
      break;
    case TypeId::kNull:
      break;
  }
}

}  // namespace

void AppendDelimitedField(std::string_view text, bool is_string, const DelimitedFormat& format, std::string* out) {
  if (format.backslash_escapes) {
    for (char c : text) {
      switch (c) {
        case '\\':
          out->append("\\\\");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\t':
          out->append("\\t");
          break;
        default:
          if (c == format.delimiter) out->push_back('\\');
          out->push_back(c);
      }
    }
    return;
  }
  const bool needs_quotes = format.quote != '\0' && is_string &&
                            (text.find(format.delimiter) != std::string_view::npos ||
                             text.find('\n') != std::string_view::npos || text.find('\r') != std::string_view::npos ||
                             (!text.empty() && text[0] == format.quote) || (text == format.null_string));
  if (!needs_quotes) {
    out->append(text);
    return;
  }
  out->push_back(format.quote);
  for (char c : text) {
    if (c == format.quote) out->push_back(c);
    out->push_back(c);
  }
  out->push_back(format.quote);
}

absl::StatusOr<int64_t> ExportDelimitedFile(const std::string& path, const TableDescriptor& table,
                                            const DelimitedFormat& format, StorageManager& storage) {
  // Written beside the target and renamed over it at the end: a failed or interrupted COPY TO leaves the target as
  // it was (or absent) and no partial file under its name.
  const std::string temporary = absl::StrCat(path, ".tessera-", getpid(), ".tmp");
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("COPY TO: cannot create", temporary);
  std::string buffer;
  std::string field;
  absl::Status status;
  auto flush = [&]() {
    size_t done = 0;
    while (status.ok() && done < buffer.size()) {
      ssize_t n = ::write(fd, buffer.data() + done, buffer.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) status = ErrnoStatus("COPY TO: cannot write", path);
      else done += static_cast<size_t>(n);
    }
    buffer.clear();
  };
  auto append_field = [&](std::string_view text, bool is_string) {
    AppendDelimitedField(text, is_string, format, &buffer);
  };
  if (format.header) {
    for (size_t c = 0; c < table.columns.size(); ++c) {
      if (c > 0) buffer.push_back(format.delimiter);
      append_field(table.columns[c].name, true);
    }
    if (format.trailing_delimiter) buffer.push_back(format.delimiter);
    buffer.push_back('\n');
  }
  int64_t rows = 0;
  for (const SegmentDescriptor& segment : table.segments) {
    for (uint32_t b = 0; b < segment.blocks.size() && status.ok(); ++b) {
      absl::StatusOr<BlockHandle> handle = storage.PinBlock(BlockId{segment.segment_id, b});
      if (!handle.ok()) {
        status = handle.status();
        break;
      }
      BlockView block = handle->view();
      const DeletedRows* deleted = segment.DeletedIn(b);
      for (uint32_t r = 0; r < block.row_count(); ++r) {
        if (deleted != nullptr && deleted->IsDeleted(r)) continue;
        for (size_t c = 0; c < table.columns.size(); ++c) {
          if (c > 0) buffer.push_back(format.delimiter);
          const int column = static_cast<int>(c);
          if (block.IsNull(column, r)) {
            buffer.append(format.null_string);
            continue;
          }
          const Type& type = table.columns[c].type;
          if (type.IsString()) {
            append_field(block.GetString(column, r), true);
          } else {
            AppendFieldText(block, column, r, type, &buffer);
          }
        }
        if (format.trailing_delimiter) buffer.push_back(format.delimiter);
        buffer.push_back('\n');
        if (buffer.size() >= (1 << 20)) flush();
      }
      rows += block.row_count() - (deleted != nullptr ? deleted->deleted_count() : 0);
    }
  }
  flush();
  if (status.ok() && ::fsync(fd) != 0) status = ErrnoStatus("COPY TO: cannot write", path);
  if (::close(fd) != 0 && status.ok()) status = ErrnoStatus("COPY TO: cannot write", path);
  if (status.ok() && ::rename(temporary.c_str(), path.c_str()) != 0) {
    status = ErrnoStatus("COPY TO: cannot create", path);
  }
  if (!status.ok()) {
    ::unlink(temporary.c_str());
    return status;
  }
  return rows;
}

}  // namespace tessera
