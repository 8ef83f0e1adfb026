#include "emulator/observe/output_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "emulator/loader/elf_loader.hpp"

namespace padlock::emu {

namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Extensions of compressions this build does not write.
constexpr const char* kUnsupported[] = {".zst", ".zstd", ".xz", ".bz2", ".lz4"};

bool write_all(int fd, const unsigned char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

struct OutputFile::Sink {
  int fd = -1;
  Compression compression = Compression::None;
  z_stream z{};
  std::vector<unsigned char> out = std::vector<unsigned char>(1 << 16);
  bool ok = true;

  // Deflates `n` bytes (flush: Z_NO_FLUSH or Z_FINISH) and writes what zlib produced.
  bool deflate_some(const char* p, size_t n, int flush) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p));
    z.avail_in = static_cast<uInt>(n);
    int rc;
    do {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      rc = deflate(&z, flush);
      if (rc == Z_STREAM_ERROR) return false;
      if (!write_all(fd, out.data(), out.size() - z.avail_out)) return false;
    } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    return true;
  }

  static ssize_t write(void* cookie, const char* p, size_t n) {
    Sink& s = *static_cast<Sink*>(cookie);
    const bool done = s.compression == Compression::Gzip
                          ? s.deflate_some(p, n, Z_NO_FLUSH)
                          : write_all(s.fd, reinterpret_cast<const unsigned char*>(p), n);
    if (!done) {
      s.ok = false;
      return -1;
    }
    return static_cast<ssize_t>(n);
  }

  static int close(void* cookie) {
    Sink& s = *static_cast<Sink*>(cookie);
    if (s.compression == Compression::Gzip) {
      if (!s.deflate_some(nullptr, 0, Z_FINISH)) s.ok = false;
      deflateEnd(&s.z);
    }
    if (::close(s.fd) != 0) s.ok = false;
    s.fd = -1;
    return s.ok ? 0 : -1;
  }
};

Compression compression_for(const std::string& path) {
  if (ends_with(path, ".gz")) return Compression::Gzip;
  for (const char* ext : kUnsupported) {
    if (ends_with(path, ext)) {
      throw LoadError("'" + path + "': this build writes gzip (.gz) compressed outputs, not " +
                      ext);
    }
  }
  return Compression::None;
}

OutputFile::OutputFile(const std::string& path, const char* what) : sink_(new Sink) {
  sink_->compression = compression_for(path);
  sink_->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (sink_->fd < 0) {
    throw LoadError(std::string("cannot write the ") + what + " '" + path +
                    "': " + std::strerror(errno));
  }
  if (sink_->compression == Compression::Gzip) {
    // windowBits 15 + 16: a gzip header and trailer (zlib.h, deflateInit2).
    if (deflateInit2(&sink_->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      ::close(sink_->fd);
      throw LoadError(std::string("cannot start gzip for the ") + what + " '" + path + "'");
    }
  }
  const cookie_io_functions_t io = {nullptr, &Sink::write, nullptr, &Sink::close};
  stream_ = fopencookie(sink_.get(), "w", io);
  if (stream_ == nullptr) {
    if (sink_->compression == Compression::Gzip) deflateEnd(&sink_->z);
    ::close(sink_->fd);
    throw LoadError(std::string("cannot write the ") + what + " '" + path + "'");
  }
  static constexpr size_t kBuffer = 1 << 20;
  std::setvbuf(stream_, nullptr, _IOFBF, kBuffer);
}

OutputFile::~OutputFile() {
  close();
}

Compression OutputFile::compression() const {
  return sink_->compression;
}

bool OutputFile::close() {
  if (stream_ == nullptr) return true;
  const bool ok = std::fclose(stream_) == 0;
  stream_ = nullptr;
  return ok;
}

}  // namespace padlock::emu
