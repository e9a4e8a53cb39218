#include "cli/line_editor.h"

#include <histedit.h>
#include <langinfo.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstring>
#include <cwchar>

#include "cli/completion.h"
#include "cli/statement_monitor.h"

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

  // libedit's character reader, which also ends the read when a Ctrl-C arrived (InterruptSignal's pipe): a SIGINT
  // that lands while libedit is processing typed characters, not blocked in read(), would otherwise be noticed only
  // at the next key press. Returns 1 with a character, 0 at end of input, -1 with errno EINTR on Ctrl-C.
  static int ReadCharacter(EditLine*, wchar_t* out) {
    static std::mbstate_t state{};
    while (true) {
      pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {InterruptSignal::fd(), POLLIN, 0}};
      const int nfds = InterruptSignal::fd() >= 0 ? 2 : 1;
      if (poll(fds, nfds, -1) < 0) {
        if (errno == EINTR) continue;  // the handler wrote to the pipe: seen at the next poll
        return -1;
      }
      if (nfds == 2 && (fds[1].revents & POLLIN) != 0) {
        state = std::mbstate_t{};
        errno = EINTR;
        return -1;
      }
      char byte = 0;
      const ssize_t n = read(STDIN_FILENO, &byte, 1);
      if (n == 0) return 0;
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return -1;
      }
      wchar_t character = 0;
      const size_t converted = std::mbrtowc(&character, &byte, 1, &state);
      if (converted == static_cast<size_t>(-2)) continue;  // more bytes of a multibyte character to come
      if (converted == static_cast<size_t>(-1)) {
        state = std::mbstate_t{};
        character = static_cast<unsigned char>(byte);  // not valid in the locale: pass the byte through
      }
      *out = character;
      return 1;
    }
  }

  // Tab: inserts the completion, or lists the candidates under the line and redraws it.
  static unsigned char Complete(EditLine* editor, int) {
    Impl* impl = Of(editor);
    const LineInfo* line = el_line(editor);
    if (!impl->completion_words) return CC_ERROR;
    Completion completion =
        CompleteWord(std::string_view(line->buffer, line->cursor - line->buffer), impl->completion_words());
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
  el_set(impl_->editor, EL_GETCFN, &Impl::ReadCharacter);
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
  // Raw mode before the prompt is drawn. el_gets draws the prompt and only then leaves cooked mode (at its first
  // read), so a key typed as the prompt appears would meet the cooked line discipline: a Ctrl-D there becomes a
  // pending end-of-file that raw mode then delivers as a NUL byte, and the shell would not exit.
  el_set(impl_->editor, EL_PREP_TERM, 1);
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
