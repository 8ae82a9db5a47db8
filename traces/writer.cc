// TraceWriter; see writer.h.
#include "traces/writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "traces/format.h"

namespace iorr::trace {

Result<std::unique_ptr<TraceWriter>> TraceWriter::Create(const std::string& path, Header header,
                                                         const WriterOptions& options) {
  if (!ValidTimeUnit(options.time_unit_ns))
    return Status::Error("time resolution must be 1, 10, 100 or 1000 ns");
  std::FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (f == nullptr) return Status::Error("cannot create " + path + ": " + std::strerror(errno));
  std::unique_ptr<TraceWriter> w(new TraceWriter(f, path != "-", options));
  if (!w->compressor_.Init(options.limits.zstd_level))
    return Status::Error("cannot set up zstd at level " +
                         std::to_string(options.limits.zstd_level));
  header.core.version = kFormatVersion;
  header.core.time_unit_ns = options.time_unit_ns;
  std::vector<HeaderField> fields;
  for (const auto& [k, v] : header.fields) fields.push_back({k, v});
  std::vector<uint8_t> buf(HeaderRecordSize(fields.data(), fields.size()));
  size_t n = EncodeHeaderRecord(header.core, fields.data(), fields.size(), buf.data(), buf.size());
  if (n == 0) return Status::Error("trace header too large");
  if (Status s = w->Write(buf.data(), n); !s.ok()) return s;
  return w;
}

TraceWriter::TraceWriter(std::FILE* f, bool owned, const WriterOptions& options)
    : file_(f), owned_(owned), options_(options) {
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
}

TraceWriter::~TraceWriter() {
  if (owned_ && file_) std::fclose(file_);
}

Status TraceWriter::Write(const void* p, size_t n) {
  if (std::fwrite(p, 1, n, file_) != n)
    return Status::Error(std::string("cannot write trace: ") + std::strerror(errno));
  bytes_ += n;
  return {};
}

int64_t TraceWriter::Watermark(const Stream* except) const {
  int64_t w = promise_;
  for (const auto& [key, s] : streams_)
    if (&s != except && !s.encoder->empty() && s.encoder->min_start_ns() < w)
      w = s.encoder->min_start_ns();
  return w;
}

Status TraceWriter::Flush(Stream& s) { return Flush(s, Watermark(&s)); }

Status TraceWriter::Flush(Stream& s, int64_t watermark) {
  if (s.encoder->empty()) return {};
  size_t need = s.encoder->MaxOutputBytes();
  if (out_cap_ < need) {
    out_.reset(new uint8_t[need]);
    out_cap_ = need;
  }
  size_t n = s.encoder->Finish(compressor_, watermark, out_.get(), out_cap_);
  if (n == 0) return Status::Error("chunk compression failed");
  ++chunks_;
  return Write(out_.get(), n);
}

Status TraceWriter::Add(const Event& e) {
  auto key = std::make_pair(e.pid, e.tid);
  // Consecutive events mostly come from the same thread: skip the map lookup then.
  auto it = last_ != streams_.end() && last_->first == key ? last_ : streams_.find(key);
  if (it == streams_.end()) {
    Stream s;
    s.id = next_stream_id_++;
    if (!spare_.empty()) {
      s.encoder = std::move(spare_.back());
      spare_.pop_back();
    } else {
      s.encoder = std::make_unique<ChunkEncoder>();
      if (!s.encoder->Init(options_.limits, options_.time_unit_ns))
        return Status::Error("out of memory for a chunk encoder");
    }
    s.encoder->Begin(s.id, e.pid, e.tid);
    if (options_.compact_start) s.encoder->StartCompact();
    it = streams_.emplace(key, std::move(s)).first;
  }
  last_ = it;
  ChunkEncoder& enc = *it->second.encoder;
  auto r = enc.Add(e);
  if (r == ChunkEncoder::AddResult::kFull) {
    if (Status st = Flush(it->second); !st.ok()) return st;
    r = enc.Add(e);
  }
  if (r != ChunkEncoder::AddResult::kOk)
    return Status::Error(
        "event cannot be stored (unknown call, argument too long, or a listing of more names "
        "than a chunk's string table holds)");
  it->second.last_start_ns = e.start_ns;
  ++events_;
  if ((events_ & 4095) == 0 && options_.idle_flush_ns > 0 &&
      promise_ > std::numeric_limits<int64_t>::min() + options_.idle_flush_ns)
    return FlushIdle(promise_ - options_.idle_flush_ns);
  return {};
}

Status TraceWriter::EndStream(uint32_t pid, uint32_t tid) {
  auto it = streams_.find({pid, tid});
  if (it == streams_.end()) return {};
  Status st = Flush(it->second);
  spare_.push_back(std::move(it->second.encoder));
  streams_.erase(it);
  last_ = streams_.end();
  return st;
}

Status TraceWriter::FlushIdle(int64_t ns) {
  return FlushAll([ns](const Stream& s) { return s.last_start_ns < ns; });
}

template <typename Pred>
Status TraceWriter::FlushAll(Pred pred) {
  // In order of first pending event, so that each chunk's watermark is as high as it can be:
  // the first pending event of the streams left, which is the next one's in the order or that of
  // a stream not flushed. One pass and a sort, not a scan of every stream per chunk (20,000
  // threads took 17 s to close).
  std::vector<Stream*> flush;
  int64_t rest = promise_;
  for (auto& [key, s] : streams_) {
    if (s.encoder->empty()) continue;
    if (pred(s))
      flush.push_back(&s);
    else
      rest = std::min(rest, s.encoder->min_start_ns());
  }
  std::stable_sort(flush.begin(), flush.end(), [](const Stream* a, const Stream* b) {
    return a->encoder->min_start_ns() < b->encoder->min_start_ns();
  });
  for (size_t i = 0; i < flush.size(); ++i) {
    int64_t w = rest;
    if (i + 1 < flush.size()) w = std::min(w, flush[i + 1]->encoder->min_start_ns());
    if (Status st = Flush(*flush[i], w); !st.ok()) return st;
  }
  return {};
}

Status TraceWriter::AddNote(std::string_view text) {
  std::vector<uint8_t> buf(text.size() + 16);
  size_t n = FrameRecord(RecordType::kNote, reinterpret_cast<const uint8_t*>(text.data()),
                         text.size(), buf.data());
  return Write(buf.data(), n);
}

Status TraceWriter::Close(uint64_t dropped_events, bool incomplete) {
  if (closed_) return {};
  closed_ = true;
  promise_ = std::numeric_limits<int64_t>::max();
  if (Status st = FlushAll([](const Stream&) { return true; }); !st.ok()) return st;
  EndRecord end{events_, chunks_, dropped_events, incomplete ? 1u : 0u};
  uint8_t buf[kMaxEndRecordBytes];
  if (Status st = Write(buf, EncodeEndRecord(end, buf)); !st.ok()) return st;
  if (std::fflush(file_) != 0)
    return Status::Error(std::string("cannot write trace: ") + std::strerror(errno));
  if (owned_) {
    int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) return Status::Error(std::string("cannot close trace: ") + std::strerror(errno));
  }
  return {};
}

}  // namespace iorr::trace
