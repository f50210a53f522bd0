// Fuzz entry points for the parsers that take untrusted input. Each is wrapped twice: as a
// libFuzzer target (tests/fuzz/*_main.cc, built with clang -DEVALD_FUZZ=ON) and by the
// fuzz_smoke test, which feeds it seeded random and mutated inputs in every CI run (under
// ASan+UBSan in the sanitizer build).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace evald::fuzz {

inline std::string_view View(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Code extraction for both tasks, plus the benchmark's log scan over the same bytes.
int ExtractAndClassify(const uint8_t* data, size_t size);
// The samples JSONL reader.
int ParseSamples(const uint8_t* data, size_t size);
// In grader_fuzz_targets.cc (they need only the harness, so CI fuzzes them with libFuzzer):
// the Verilog tokenizer and the integrity check;
int CheckIntegrity(const uint8_t* data, size_t size);
// the tokenizer alone, checking that every token is a view into the input, in order;
int LexVerilog(const uint8_t* data, size_t size);
// the simulator-output classifiers: result lines (anchored and anywhere) and the benchmark's
// log categories, over each line and the whole text.
int ClassifyOutput(const uint8_t* data, size_t size);
// Yosys's SAT table, `stat` and `ltp` reports, the replay bench built from a table, and the
// mutant generator over the same text.
int ParseYosysOutput(const uint8_t* data, size_t size);
// A GGUF model file (header, metadata, tensor table) and, when it parses, the model loader.
int ParseGguf(const uint8_t* data, size_t size);
// A completion server's response body: SSE events split at arbitrary points, each event and
// the whole body parsed as OpenAI JSON (response and request), UTF-8 sanitizing.
int ParseServerStream(const uint8_t* data, size_t size);
// What a submitter reads back from a spool and from Slurm: result and shard records, pending
// markers, squeue's task lines.
int ParseSpoolFiles(const uint8_t* data, size_t size);
// A model file's chat template recognised (with each family's marker in front too) and, when
// it is, a conversation made of the same bytes rendered; Jinja's trim over them.
int ParseChatTemplate(const uint8_t* data, size_t size);
// A model file's chat template run by the template engine: parsed and, when it parses,
// rendered for a conversation made of the same bytes, within the engine's limits (small ones
// here, so that loops and recursion end quickly); any failure is a Status, never a crash.
int RenderChatTemplate(const uint8_t* data, size_t size);
// A sandbox response frame read from a pipe (what the host reads from the init).
int ReadSandboxFrame(const uint8_t* data, size_t size);

}  // namespace evald::fuzz
