#include "cli/copy_command.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tessera {
namespace {

bool IsWord(std::string_view text, size_t at, std::string_view upper_word) {
  if (at + upper_word.size() > text.size()) return false;
  for (size_t i = 0; i < upper_word.size(); ++i) {
    if (absl::ascii_toupper(static_cast<unsigned char>(text[at + i])) != upper_word[i]) return false;
  }
  const size_t end = at + upper_word.size();
  const bool starts = at == 0 || absl::ascii_isspace(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == ')';
  return starts && (end == text.size() || absl::ascii_isspace(static_cast<unsigned char>(text[end])));
}

std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && absl::ascii_isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && absl::ascii_isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

}  // namespace

absl::StatusOr<CopyCommand> ParseCopyCommand(std::string_view argument) {
  // The first FROM or TO outside parentheses and quotes (a query's own FROM is inside its parentheses).
  int depth = 0;
  char quote = 0;
  size_t keyword = std::string_view::npos;
  CopyCommand command;
  for (size_t i = 0; i < argument.size() && keyword == std::string_view::npos; ++i) {
    const char c = argument[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (depth == 0 && (IsWord(argument, i, "FROM") || IsWord(argument, i, "TO"))) {
      keyword = i;
      command.from = IsWord(argument, i, "FROM");
    }
  }
  if (keyword == std::string_view::npos || keyword == 0) {
    return absl::InvalidArgumentError(
        "\\copy needs TABLE [(COLUMNS)] FROM 'FILE' or TABLE | (QUERY) TO 'FILE', with optional (OPTIONS)");
  }
  size_t at = keyword + (command.from ? 4 : 2);
  while (at < argument.size() && absl::ascii_isspace(static_cast<unsigned char>(argument[at]))) ++at;
  if (at == argument.size()) return absl::InvalidArgumentError("\\copy needs a file name after FROM or TO");
  std::string path;
  bool quoted = argument[at] == '\'';
  if (quoted) {
    for (++at;; ++at) {
      if (at >= argument.size()) return absl::InvalidArgumentError("\\copy: the file name's quote is not closed");
      if (argument[at] == '\'') {
        if (at + 1 < argument.size() && argument[at + 1] == '\'') {
          path.push_back('\'');
          ++at;
          continue;
        }
        ++at;
        break;
      }
      path.push_back(argument[at]);
    }
  } else {
    while (at < argument.size() && !absl::ascii_isspace(static_cast<unsigned char>(argument[at])) &&
           argument[at] != '(' && argument[at] != ';') {
      path.push_back(argument[at++]);
    }
  }
  const std::string lower = absl::AsciiStrToLower(path);
  if (!quoted && (lower == (command.from ? "stdin" : "stdout"))) path.clear();
  else if (path.empty()) return absl::InvalidArgumentError("\\copy: the file name is empty");
  std::string_view rest = TrimSpaces(argument.substr(at));
  if (!rest.empty() && rest.back() == ';') rest.remove_suffix(1);
  command.sql = absl::StrCat("COPY ", std::string(TrimSpaces(argument.substr(0, keyword))),
                             command.from ? " FROM STDIN" : " TO STDOUT", rest.empty() ? "" : " ", std::string(rest));
  command.path = std::move(path);
  return command;
}

absl::StatusOr<std::unique_ptr<FileCopyChannel>> FileCopyChannel::Open(const CopyCommand& command) {
  if (command.path.empty()) {
    return std::unique_ptr<FileCopyChannel>(
        new FileCopyChannel(command.from ? stdin : stdout, /*owned=*/false, command.from ? "stdin" : "stdout"));
  }
  std::FILE* file = std::fopen(command.path.c_str(), command.from ? "rb" : "wb");
  if (file == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("cannot ", command.from ? "read " : "write ", command.path, ": ", std::strerror(errno)));
  }
  return std::unique_ptr<FileCopyChannel>(new FileCopyChannel(file, /*owned=*/true, command.path));
}

FileCopyChannel::~FileCopyChannel() { Close().IgnoreError(); }

absl::StatusOr<bool> FileCopyChannel::ReadCopyData(std::string* data) {
  constexpr size_t kPiece = 1 << 20;
  data->resize(kPiece);
  const size_t got = std::fread(data->data(), 1, kPiece, file_);
  data->resize(got);
  if (got == 0 && std::ferror(file_)) {
    return absl::DataLossError(absl::StrCat("cannot read ", path_, ": ", std::strerror(errno)));
  }
  return got > 0;
}

absl::Status FileCopyChannel::WriteCopyData(std::string_view data) {
  if (std::fwrite(data.data(), 1, data.size(), file_) != data.size()) {
    return absl::DataLossError(absl::StrCat("cannot write ", path_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status FileCopyChannel::Close() {
  if (file_ == nullptr) return absl::OkStatus();
  const bool flushed = std::fflush(file_) == 0;
  const int error = errno;
  const bool closed = !owned_ || std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    return absl::DataLossError(absl::StrCat("cannot write ", path_, ": ", std::strerror(flushed ? errno : error)));
  }
  return absl::OkStatus();
}

}  // namespace tessera
