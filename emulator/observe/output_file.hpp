// The files of --trace, --chrome-trace and --profile. The writers print to a stdio
// stream; this class decides what the stream does with the bytes: a plain file, or gzip
// when the path ends in ".gz" (zlib, fastest level: a trace is written as fast as the
// guest runs). close() finishes the compressed stream, so a file closed by a run ended
// with SIGINT is a complete .gz.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace padlock::emu {

enum class Compression { None, Gzip };

// By the file name: ".gz" is gzip. Throws LoadError for ".zst", ".zstd", ".xz", ".bz2"
// (compressions this build does not write), so a name never promises what the file is not.
Compression compression_for(const std::string& path);

class OutputFile {
 public:
  // Creates or truncates `path`. Throws LoadError "cannot write the <what> '<path>': ...".
  OutputFile(const std::string& path, const char* what);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  FILE* stream() const { return stream_; }
  Compression compression() const;
  // Flushes, ends the compressed stream and closes the file; true when every byte reached
  // the file. Later calls do nothing.
  bool close();

  struct Sink;

 private:
  FILE* stream_ = nullptr;
  std::unique_ptr<Sink> sink_;
};

}  // namespace padlock::emu
