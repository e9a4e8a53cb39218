#pragma once
// Line editing and history for the interactive shell, on libedit (emacs key bindings; ~/.editrc is read).
// For a terminal on standard input and output only. Sets LC_CTYPE to a UTF-8 locale (see line_editor.cc).

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

class LineEditor {
 public:
  enum class ReadResult { kLine, kInterrupted, kEndOfInput };

  // `history_path`: the file history is loaded from and saved to after every entry; empty = no file.
  explicit LineEditor(std::string history_path);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // Shows `prompt` and reads one line (without its newline) into `line`. kInterrupted: Ctrl-C (the line typed so
  // far is dropped); kEndOfInput: Ctrl-D on an empty line.
  ReadResult ReadLine(const std::string& prompt, std::string* line);
  // Tab completes the word before the cursor from these words (cli/completion.h); `words` is called on each Tab.
  void SetCompletionWords(std::function<std::vector<std::string>()> words);
  // Adds an entry (a statement or a meta-command) to the history and saves the history file.
  void AddHistory(const std::string& entry);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
