// A libFuzzer-compatible driver for builds without libFuzzer (gcc, the fast test suite): it runs a fuzz target's
// LLVMFuzzerTestOneInput over every file of the given corpus directories, then over random mutations of them
// (byte flips, insertions, deletions, splices, interesting bytes) until the time is up. It has no coverage guidance,
// so it only smoke-tests a target; the real fuzzing is the libFuzzer build (tests/fuzz/README.md). A target that
// finds a bug aborts, which fails the test.
//
//   <target>_smoke [--seconds=3] [--seed=1] corpus_dir_or_file...
//
// Flags are gflags (common/command_line_flags.h: --help lists them; a usage error exits with 2).

#include <gflags/gflags.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/command_line_flags.h"

DEFINE_double(seconds, 3, "how long to run random mutations of the corpus after the corpus itself");
DEFINE_uint64(seed, 1, "seed of the mutations");

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

void RunOne(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

std::string Mutate(const std::vector<std::string>& corpus, std::mt19937_64& random) {
  static const char kInteresting[] = {'\0', '\n', '\r', ',', '|', '"', '\'', '\\', '-', '9', '\xff', '\x80', ' '};
  std::string input = corpus[random() % corpus.size()];
  const int edits = 1 + static_cast<int>(random() % 8);
  for (int e = 0; e < edits; ++e) {
    const size_t at = input.empty() ? 0 : random() % (input.size() + 1);
    switch (random() % 6) {
      case 0:  // flip a bit
        if (!input.empty()) input[at % input.size()] ^= static_cast<char>(1u << (random() % 8));
        break;
      case 1:  // insert an interesting byte
        input.insert(at, 1, kInteresting[random() % sizeof(kInteresting)]);
        break;
      case 2:  // delete a range
        if (!input.empty()) input.erase(at % input.size(), 1 + random() % 16);
        break;
      case 3: {  // splice in a piece of another input
        const std::string& other = corpus[random() % corpus.size()];
        if (other.empty()) break;
        const size_t from = random() % other.size();
        input.insert(at, other.substr(from, 1 + random() % 64));
        break;
      }
      case 4:  // overwrite with a random byte
        if (!input.empty()) input[at % input.size()] = static_cast<char>(random());
        break;
      default:  // duplicate a range
        if (!input.empty()) input.insert(at, input.substr(at % input.size(), 1 + random() % 32));
        break;
    }
  }
  if (input.size() > 1 << 16) input.resize(1 << 16);
  return input;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  const tessera::ProgramDescription program{
      argv[0],
      std::string("usage: ") + argv[0] +
          " [--seconds=S] [--seed=N] corpus_dir_or_file...\n"
          "Runs the fuzz target over the corpus, then over random mutations of it until the time is up.",
      {__FILE__}};
  tessera::ParseProgramFlags(&argc, &argv, program);
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    if (std::filesystem::is_directory(argv[i])) {
      for (const auto& entry : std::filesystem::directory_iterator(argv[i])) corpus.push_back(ReadFile(entry.path()));
    } else {
      corpus.push_back(ReadFile(argv[i]));
    }
  }
  if (corpus.empty()) tessera::ExitWithUsageError(program, "no corpus given");
  int64_t executions = 0;
  for (const std::string& input : corpus) {
    RunOne(input);
    ++executions;
  }
  std::mt19937_64 random(FLAGS_seed);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(FLAGS_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    RunOne(Mutate(corpus, random));
    ++executions;
  }
  std::printf("%s: %zu corpus inputs, %lld executions, no crash\n", argv[0], corpus.size(),
              static_cast<long long>(executions));
  return 0;
}
