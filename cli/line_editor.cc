#include "cli/line_editor.h"

#include <histedit.h>

#include <cerrno>
#include <cstdio>

namespace tessera {
namespace {

constexpr int kHistorySize = 2000;

}  // namespace

struct LineEditor::Impl {
  EditLine* editor = nullptr;
  History* history = nullptr;
  HistEvent event;
  std::string history_path;
  std::string prompt;

  static char* Prompt(EditLine* editor) {
    Impl* impl = nullptr;
    el_get(editor, EL_CLIENTDATA, &impl);
    return impl->prompt.data();
  }
};

LineEditor::LineEditor(std::string history_path) : impl_(std::make_unique<Impl>()) {
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
  el_source(impl_->editor, nullptr);  // ~/.editrc
}

LineEditor::~LineEditor() {
  el_end(impl_->editor);
  history_end(impl_->history);
}

LineEditor::ReadResult LineEditor::ReadLine(const std::string& prompt, std::string* line) {
  impl_->prompt = prompt;
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

void LineEditor::AddHistory(const std::string& entry) {
  if (entry.empty()) return;
  history(impl_->history, &impl_->event, H_ENTER, entry.c_str());
  if (!impl_->history_path.empty()) history(impl_->history, &impl_->event, H_SAVE, impl_->history_path.c_str());
}

}  // namespace tessera
