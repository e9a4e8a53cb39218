#include "cli/line_editor.h"

#include <histedit.h>
#include <langinfo.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstring>

#include "cli/completion.h"

namespace tessera {
namespace {

constexpr int kHistorySize = 2000;

// libedit reads multibyte characters only under a UTF-8 LC_CTYPE; in the "C" locale it drops them. Takes the
// environment's, or C.UTF-8 when that is not UTF-8. (Only LC_CTYPE: number formatting stays as it is.)
void UseUtf8CharacterType() {
  std::setlocale(LC_CTYPE, "");
  const char* codeset = nl_langinfo(CODESET);
  if (codeset == nullptr || std::strcmp(codeset, "UTF-8") != 0) std::setlocale(LC_CTYPE, "C.UTF-8");
}

}  // namespace

struct LineEditor::Impl {
  EditLine* editor = nullptr;
  History* history = nullptr;
  HistEvent event;
  std::string history_path;
  std::string prompt;
  std::function<std::vector<std::string>()> completion_words;

  static Impl* Of(EditLine* editor) {
    Impl* impl = nullptr;
    el_get(editor, EL_CLIENTDATA, &impl);
    return impl;
  }

  static char* Prompt(EditLine* editor) { return Of(editor)->prompt.data(); }

  // Tab: inserts the completion, or lists the candidates under the line and redraws it.
  static unsigned char Complete(EditLine* editor, int) {
    Impl* impl = Of(editor);
    const LineInfo* line = el_line(editor);
    if (!impl->completion_words) return CC_ERROR;
    Completion completion = CompleteWord(std::string_view(line->buffer, line->cursor - line->buffer),
                                         impl->completion_words());
    if (!completion.insert.empty()) {
      el_insertstr(editor, completion.insert.c_str());
      return CC_REFRESH;
    }
    if (completion.candidates.empty()) return CC_REFRESH_BEEP;
    winsize size{};
    const size_t width = ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 80;
    std::string listing = "\n";
    size_t column = 0;
    for (const std::string& candidate : completion.candidates) {
      if (column > 0 && column + 2 + candidate.size() > width) {
        listing += "\n";
        column = 0;
      }
      if (column > 0) {
        listing += "  ";
        column += 2;
      }
      listing += candidate;
      column += candidate.size();
    }
    listing += "\n";
    std::fwrite(listing.data(), 1, listing.size(), stdout);
    std::fflush(stdout);
    return CC_REDISPLAY;
  }
};

LineEditor::LineEditor(std::string history_path) : impl_(std::make_unique<Impl>()) {
  UseUtf8CharacterType();
  impl_->history_path = std::move(history_path);
  impl_->history = history_init();
  history(impl_->history, &impl_->event, H_SETSIZE, kHistorySize);
  history(impl_->history, &impl_->event, H_SETUNIQUE, 1);
  if (!impl_->history_path.empty()) history(impl_->history, &impl_->event, H_LOAD, impl_->history_path.c_str());
  impl_->editor = el_init("tessera", stdin, stdout, stderr);
  el_set(impl_->editor, EL_CLIENTDATA, impl_.get());
  el_set(impl_->editor, EL_PROMPT, &Impl::Prompt);
  el_set(impl_->editor, EL_EDITOR, "emacs");
  el_set(impl_->editor, EL_HIST, history, impl_->history);
  el_set(impl_->editor, EL_ADDFN, "tessera-complete", "complete a keyword or name", &Impl::Complete);
  el_set(impl_->editor, EL_BIND, "^I", "tessera-complete", nullptr);
  el_source(impl_->editor, nullptr);  // ~/.editrc
}

LineEditor::~LineEditor() {
  el_end(impl_->editor);
  history_end(impl_->history);
}

LineEditor::ReadResult LineEditor::ReadLine(const std::string& prompt, std::string* line) {
  impl_->prompt = prompt;
  el_resize(impl_->editor);  // the terminal may have changed size since the last line
  int count = 0;
  errno = 0;
  const char* text = el_gets(impl_->editor, &count);
  if (text == nullptr || count < 0) {
    if (count < 0 || errno == EINTR) {
      el_reset(impl_->editor);
      return ReadResult::kInterrupted;
    }
    return ReadResult::kEndOfInput;
  }
  line->assign(text, count);
  if (!line->empty() && line->back() == '\n') line->pop_back();
  return ReadResult::kLine;
}

void LineEditor::SetCompletionWords(std::function<std::vector<std::string>()> words) {
  impl_->completion_words = std::move(words);
}

void LineEditor::AddHistory(const std::string& entry) {
  if (entry.empty()) return;
  history(impl_->history, &impl_->event, H_ENTER, entry.c_str());
  if (impl_->history_path.empty()) return;
  history(impl_->history, &impl_->event, H_SAVE, impl_->history_path.c_str());
  chmod(impl_->history_path.c_str(), 0600);  // statements may hold secrets: the owner's only, as shells do
}

}  // namespace tessera
