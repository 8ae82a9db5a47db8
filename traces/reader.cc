// TraceReader, ChunkCursor and MergedReader; see reader.h.
#include "traces/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "traces/crc32c.h"
#include "traces/varint.h"

namespace iorr::trace {
namespace {

uint32_t Le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

std::string At(uint64_t offset) { return "at byte " + std::to_string(offset); }

// How to decode each call's arguments, worked out once from the table.
enum ArgOp : uint8_t { kOpSkip, kOpFd, kOpInt, kOpStr };
struct DecodePlan {
  uint8_t nargs = 0;
  bool strings = false;
  int8_t count_idx = -1;  // Ret::kCount: the argument the result is predicted from
  ArgOp op[kMaxArgs] = {};
};
struct DecodePlans {
  DecodePlan plan[kMaxTag + 1];
};
// version: the chunk's format version (readlink's target is stored from version 3 on).
constexpr DecodePlans MakePlans(uint16_t version) {
  DecodePlans t{};
  for (const auto& c : kCalls) {
    DecodePlan& p = t.plan[c.tag];
    p.nargs = c.nargs;
    p.count_idx = static_cast<int8_t>(c.ret == Ret::kCount ? CountArgIndex(c) : -1);
    for (int i = 0; i < c.nargs; ++i) {
      ArgKind k = c.args[i].kind;
      bool unstored = k == ArgKind::kBuf || (StoredSinceVersion3(k) && version < 3) ||
                      (StoredSinceVersion4(k) && version < 4);
      p.op[i] = unstored                                      ? kOpSkip
                : IsString(k)                                 ? kOpStr
                : (k == ArgKind::kFd || k == ArgKind::kDirFd) ? kOpFd
                                                              : kOpInt;
      p.strings = p.strings || p.op[i] == kOpStr;
    }
  }
  return t;
}
constexpr DecodePlans kPlans = MakePlans(kFormatVersion);
constexpr DecodePlans kPlansV3 = MakePlans(3);
constexpr DecodePlans kPlansV2 = MakePlans(2);  // versions 1 and 2

}  // namespace

Result<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path, Options options) {
  std::unique_ptr<TraceReader> r(new TraceReader());
  r->options_ = options;
  if (path == "-") {
    r->fd_ = 0;
  } else {
    r->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (r->fd_ < 0) return Status::Error("cannot open " + path + ": " + std::strerror(errno));
    r->own_fd_ = true;
  }
  r->buf_.resize(64 << 10);
  struct stat st {};
  if (::fstat(r->fd_, &st) == 0 && S_ISREG(st.st_mode))
    r->file_size_ = static_cast<uint64_t>(st.st_size);
  r->dctx_ = ZSTD_createDCtx();
  if (Status s = r->ReadHeader(); !s.ok()) return Status::Error(path + ": " + s.message());
  return r;
}

TraceReader::~TraceReader() {
  if (own_fd_) ::close(fd_);
  if (dctx_) ZSTD_freeDCtx(dctx_);
}

bool TraceReader::Fill(size_t n) {
  if (end_ - begin_ >= n) return true;
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  // A claimed size past the end of a regular file is a truncation: don't allocate for it.
  if (file_size_ && offset_ + n > file_size_) n = static_cast<size_t>(file_size_ - offset_) + 1;
  if (buf_.size() < n) buf_.resize(std::max(n, buf_.size() * 2));
  while (end_ < n && !eof_) {
    ssize_t got = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
    if (got < 0) {
      if (errno == EINTR) continue;
      Fail(offset_ + end_, std::string("read error: ") + std::strerror(errno));
      return false;
    }
    if (got == 0) eof_ = true;
    end_ += static_cast<size_t>(got);
  }
  return end_ >= n;
}

bool TraceReader::Fail(uint64_t offset, const std::string& what) {
  if (status_.ok()) status_ = Status::Error(what + " " + At(offset));
  return false;
}

Status TraceReader::ReadHeader() {
  if (!Fill(8)) {
    if (!status_.ok()) return status_;
    return Status::Error(end_ == 0 ? "empty file, not an iorr trace"
                                   : "not an iorr trace (too short)");
  }
  const uint8_t* p = buf_.data() + begin_;
  uint32_t magic = Le32(p), size = Le32(p + 4);
  if (magic != kSkippableMagic) {
    if (magic == kZstdFrameMagic)
      return Status::Error("a zstd file, but not an iorr trace (no header)");
    return Status::Error("not an iorr trace (bad magic)");
  }
  if (size < 1 + sizeof(kFileMagic) + 2 + 4 || size > kMaxRecordBytes)
    return Status::Error("not an iorr trace (bad header size)");
  if (!Fill(8 + size)) {
    if (!status_.ok()) return status_;
    return Status::Error("trace truncated inside its header");
  }
  p = buf_.data() + begin_;
  const uint8_t* rec = p + 8;
  if (rec[0] != static_cast<uint8_t>(RecordType::kHeader) ||
      std::memcmp(rec + 1, kFileMagic, sizeof(kFileMagic)) != 0)
    return Status::Error("not an iorr trace (bad magic)");
  if (Crc32c(rec, size - 4) != Le32(rec + size - 4))
    return Status::Error("trace header checksum mismatch");
  uint16_t version = static_cast<uint16_t>(rec[1 + 8] | rec[1 + 9] << 8);
  if (version > kFormatVersion)
    return Status::Error("trace format version " + std::to_string(version) +
                         " is newer than this iorr reads (" + std::to_string(kFormatVersion) +
                         "); use a newer iorr");
  if (version == 0) return Status::Error("bad trace format version 0");
  ByteReader br(rec + 1 + 10, rec + size - 4);
  header_.core.version = version;
  uint64_t unit = br.Varint();
  header_.core.start_mono_ns = br.Signed();
  header_.core.start_wall_ns = br.Signed();
  uint64_t n = br.Varint();
  if (!br.ok() || !ValidTimeUnit(unit)) return Status::Error("corrupt trace header");
  header_.core.time_unit_ns = static_cast<uint32_t>(unit);
  for (uint64_t i = 0; i < n && br.ok(); ++i) {
    uint64_t kl = br.Varint();
    const uint8_t* k = br.Bytes(kl);
    uint64_t vl = br.Varint();
    const uint8_t* v = br.Bytes(vl);
    if (!br.ok()) break;
    header_.fields.emplace_back(std::string(reinterpret_cast<const char*>(k), kl),
                                std::string(reinterpret_cast<const char*>(v), vl));
  }
  if (!br.ok() || !br.empty()) return Status::Error("corrupt trace header");
  begin_ += 8 + size;
  offset_ += 8 + size;
  info_.bytes = offset_;
  return {};
}

bool TraceReader::NextChunk(Chunk* chunk) {
  while (status_.ok()) {
    if (!Fill(8)) {
      if (!status_.ok()) return false;
      info_.truncated_bytes = end_ - begin_;
      return false;  // clean end of file (or a few stray bytes: truncated)
    }
    const uint8_t* p = buf_.data() + begin_;
    uint64_t rec_offset = offset_;
    uint32_t magic = Le32(p), size = Le32(p + 4);
    bool ours = magic == kSkippableMagic;
    if ((magic & kSkippableMask) != kSkippableBase ||
        (ours && (size < 5 || size > kMaxRecordBytes))) {
      if (options_.salvage) {  // resynchronise at the next iorr record
        if (!Resync()) return false;
        continue;
      }
      if (ours) return Fail(rec_offset, "corrupt trace: bad record size");
      return Fail(rec_offset, magic == kZstdFrameMagic ? "zstd frame without a chunk record"
                                                       : "corrupt trace: bad frame magic");
    }
    if (size > kMaxRecordBytes) return Fail(rec_offset, "corrupt trace: record too large");
    if (!Fill(8 + size)) {
      if (!status_.ok()) return false;
      info_.truncated_bytes = end_ - begin_;
      return false;
    }
    p = buf_.data() + begin_;
    const uint8_t* rec = p + 8;
    auto consume = [&](size_t n) {
      begin_ += n;
      offset_ += n;
      info_.bytes = offset_;
    };
    if (!ours) {  // someone else's skippable frame
      consume(8 + size);
      ++info_.skipped_records;
      continue;
    }
    if (Crc32c(rec, size - 4) != Le32(rec + size - 4)) {
      if (!options_.salvage) return Fail(rec_offset, "corrupt trace: record checksum mismatch");
      // Its size may be wrong too (a record cut short, with whole ones after it): look for the
      // next record from the byte after this one's start.
      if (!Resync()) return false;
      continue;
    }
    auto type = static_cast<RecordType>(rec[0]);
    ByteReader br(rec + 1, rec + size - 4);
    if (type == RecordType::kEnd) {
      info_.end.events = br.Varint();
      info_.end.chunks = br.Varint();
      info_.end.dropped_events = br.Varint();
      info_.end.flags = br.Varint();
      if (!br.ok()) return Fail(rec_offset, "corrupt end record");
      info_.end_record = true;
      consume(8 + size);
      continue;
    }
    if (type == RecordType::kNote) {
      info_.notes.emplace_back(reinterpret_cast<const char*>(rec + 1), size - 5);
      consume(8 + size);
      continue;
    }
    if (type == RecordType::kHeader) return Fail(rec_offset, "corrupt trace: second header");
    if (type != RecordType::kChunk) {  // a later version's additive record
      consume(8 + size);
      ++info_.skipped_records;
      continue;
    }
    ChunkMeta m;
    if (!DecodeChunkBody(rec + 1, size - 5, &m)) return Fail(rec_offset, "corrupt chunk record");
    size_t total = 8 + size + m.compressed_size;
    if (!Fill(total)) {
      if (!status_.ok()) return false;
      info_.truncated_bytes = end_ - begin_;
      return false;
    }
    const uint8_t* frame = buf_.data() + begin_ + 8 + size;
    if (options_.metadata_only) {
      consume(total);
      chunk->raw.clear();
      chunk->meta = m;
      chunk->offset = rec_offset;
      chunk->sequence = chunks_++;
      chunk->version = header_.core.version;
      return true;
    }
    bool damaged = Crc32c(frame, m.compressed_size) != m.payload_crc;
    std::string why = "corrupt chunk: payload checksum mismatch";
    if (!damaged) {
      chunk->raw.resize(m.raw_size);
      size_t got =
          ZSTD_decompressDCtx(dctx_, chunk->raw.data(), m.raw_size, frame, m.compressed_size);
      if (ZSTD_isError(got) || got != m.raw_size) {
        damaged = true;
        why = std::string("corrupt chunk: ") +
              (ZSTD_isError(got) ? ZSTD_getErrorName(got) : "payload size mismatch");
      }
    }
    if (damaged) {
      if (!options_.salvage) return Fail(rec_offset, why);
      // The payload's size may be wrong (a chunk cut short, with whole records after it): look
      // for the next record from the byte after this one's start, not past the size it claims.
      if (!Resync()) return false;
      continue;
    }
    consume(total);
    chunk->meta = m;
    chunk->offset = rec_offset;
    chunk->sequence = chunks_++;
    chunk->version = header_.core.version;
    return true;
  }
  return false;
}

bool TraceReader::Resync() {
  static const uint8_t kMagic[4] = {0x5E, 0x2A, 0x4D, 0x18};
  ++info_.skipped_chunks;
  for (;;) {
    if (!Fill(8)) {
      if (status_.ok()) info_.truncated_bytes = end_ - begin_;
      return false;
    }
    const uint8_t* p = buf_.data() + begin_ + 1;
    const uint8_t* last = buf_.data() + end_;
    const uint8_t* hit = std::search(p, last, kMagic, kMagic + 4);
    size_t skip = static_cast<size_t>(hit - (buf_.data() + begin_));
    begin_ += skip;
    offset_ += skip;
    info_.bytes = offset_;
    if (hit != last) return true;
    if (eof_) {
      info_.truncated_bytes = end_ - begin_;
      return false;
    }
  }
}

std::string TraceReader::IntegrityWarning() const {
  std::string w;
  if (info_.truncated_bytes)
    w = "trace truncated: " + std::to_string(info_.truncated_bytes) +
        " bytes of an incomplete frame at the end were lost";
  else if (!info_.end_record)
    w = "trace has no end record: the recording did not finish cleanly";
  else if ((info_.end.flags & 1) && info_.end.dropped_events == 0)
    w = "trace is marked incomplete (see the trace notes)";
  else if (info_.end.flags & 1)
    w = "trace is marked incomplete: " + std::to_string(info_.end.dropped_events) +
        " events could not be stored (see the trace notes)";
  if (info_.skipped_chunks)
    w += (w.empty() ? "" : "; ") + std::to_string(info_.skipped_chunks) + " damaged chunks skipped";
  return w;
}

// ---- ChunkCursor ----

bool ChunkCursor::Fail(const std::string& what) {
  if (status_.ok())
    status_ = Status::Error("corrupt chunk " + At(chunk_->offset) + ", event " +
                            std::to_string(index_) + ": " + what);
  return false;
}

Status ChunkCursor::Init(const Chunk* chunk, uint32_t time_unit_ns) {
  chunk_ = chunk;
  unit_ = time_unit_ns;
  index_ = 0;
  prev_start_u_ = chunk->meta.first_start;
  str_off_.clear();
  str_len_.clear();
  arena_.clear();
  prev_new_ = UINT32_MAX;
  last_ref_ = UINT32_MAX;
  peeked_start_ = false;
  status_ = Status();
  if (chunk->version < kMinFormatVersion || chunk->version > kFormatVersion) {
    Fail("format version " + std::to_string(chunk->version) + " cannot be read");
    return status_;
  }
  if (chunk->meta.kind != ChunkKind::kEvents) {
    Fail("not an events chunk");
    return status_;
  }
  const uint8_t* base = chunk->raw.data();
  ByteReader br(base, base + chunk->raw.size());
  uint64_t n = br.Varint();
  if (!br.ok() || n < kNumSections || n > 64) {
    Fail("bad section count");
    return status_;
  }
  uint64_t lens[64] = {};
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; ++i) {
    lens[i] = br.Varint();
    // Each length is at most the payload, so the sum of at most 64 cannot wrap.
    if (!br.ok() || lens[i] > chunk->raw.size()) {
      Fail("bad section sizes");
      return status_;
    }
    total += lens[i];
  }
  if (total != br.remaining()) {
    Fail("bad section sizes");
    return status_;
  }
  arena_.reserve(std::min<size_t>(kMaxChunkStringBytes, lens[kSecStrBytes] * 8 + 4096));
  const uint8_t* p = br.pos();
  for (int i = 0; i < kNumSections; ++i) {
    sec_[i] = {p, p + lens[i]};
    p += lens[i];
  }
  return status_;
}

bool ChunkCursor::Next(Event* e) {
  if (!status_.ok()) return false;
  if (index_ >= chunk_->meta.events) {
    for (const auto& s : sec_)
      if (s.p != s.end) return Fail("trailing bytes after the last event");
    return false;
  }
  auto get = [&](int sec, uint64_t* v) {
    const uint8_t* q = GetVarint(sec_[sec].p, sec_[sec].end, v);
    if (q == nullptr) return false;
    sec_[sec].p = q;
    return true;
  };
  uint64_t tag, ds, dd, r;
  if (peeked_start_) {  // PeekStart read it
    ds = peeked_ds_;
    peeked_start_ = false;
  } else if (!get(kSecStarts, &ds)) {
    return Fail("section ends early");
  }
  if (!get(kSecCalls, &tag) || !get(kSecDurations, &dd) || !get(kSecRets, &r))
    return Fail("section ends early");
  const CallSpec* spec = tag <= kMaxTag ? SpecOf(static_cast<uint16_t>(tag)) : nullptr;
  if (spec == nullptr) return Fail("unknown call tag " + std::to_string(tag));
  int64_t start_u = static_cast<int64_t>(static_cast<uint64_t>(prev_start_u_) +
                                         static_cast<uint64_t>(UnZigZag(ds)));
  int64_t end_u =
      static_cast<int64_t>(static_cast<uint64_t>(start_u) + static_cast<uint64_t>(UnZigZag(dd)));
  prev_start_u_ = start_u;
  e->call = static_cast<CallId>(spec->tag);
  e->pid = chunk_->meta.pid;
  e->tid = chunk_->meta.tid;
  e->start_ns = static_cast<int64_t>(static_cast<uint64_t>(start_u) * static_cast<uint64_t>(unit_));
  e->end_ns = static_cast<int64_t>(static_cast<uint64_t>(end_u) * static_cast<uint64_t>(unit_));
  const DecodePlan& plan = (chunk_->version >= 4   ? kPlans
                            : chunk_->version == 3 ? kPlansV3
                                                   : kPlansV2)
                               .plan[spec->tag];
  int str_idx[kMaxArgs];
  for (int i = 0; i < plan.nargs; ++i) {
    Arg& a = e->args[i];
    a = Arg{};
    str_idx[i] = -1;
    ArgOp op = plan.op[i];
    if (op == kOpSkip) {
      a.null = IsString(spec->args[i].kind);  // a target a version before 3 did not store
      if (StoredSinceVersion4(spec->args[i].kind)) a.i = -1;  // a clone's size, before 4
      continue;
    }
    uint64_t v;
    if (op == kOpStr) {
      if (!get(kSecStrRefs, &v)) return Fail("string section ends early");
      const bool v1 = chunk_->version == 1;
      if (v == kRefNull) {
        a.null = true;
      } else if (v == kRefNew) {
        uint64_t shared, suffix;
        if (!get(kSecStrRefs, &shared) || !get(kSecStrRefs, &suffix))
          return Fail("string section ends early");
        uint64_t prev_len = prev_new_ == UINT32_MAX ? 0 : str_len_[prev_new_];
        auto& bytes = sec_[kSecStrBytes];
        if (shared > prev_len || suffix > static_cast<uint64_t>(bytes.end - bytes.p))
          return Fail("bad string reference");
        if (arena_.size() + shared + suffix > kMaxChunkStringBytes || shared + suffix > (1u << 24))
          return Fail("strings too large");
        uint32_t off = static_cast<uint32_t>(arena_.size());
        if (shared) {
          size_t prev_off = str_off_[prev_new_];
          arena_.resize(off + shared);
          std::memcpy(arena_.data() + off, arena_.data() + prev_off, shared);
        }
        arena_.insert(arena_.end(), bytes.p, bytes.p + suffix);
        bytes.p += suffix;
        prev_new_ = static_cast<uint32_t>(str_off_.size());
        str_off_.push_back(off);
        str_len_.push_back(static_cast<uint32_t>(shared + suffix));
        str_idx[i] = static_cast<int>(prev_new_);
        last_ref_ = prev_new_;
        if (!v1 && spec->tag == static_cast<uint16_t>(CallId::dirents)) {
          std::string_view listing(arena_.data() + off, shared + suffix);
          bool over = false;
          ForEachListedName(listing, [&](std::string_view name, uint8_t) {
            if (str_off_.size() >= kMaxChunkStrings) {
              over = true;
              return;
            }
            str_off_.push_back(static_cast<uint32_t>(name.data() - arena_.data()));
            str_len_.push_back(static_cast<uint32_t>(name.size()));
          });
          if (over) return Fail("too many strings");
        }
      } else {
        uint64_t idx;  // table index referred to
        if (v1) {
          uint64_t dist = v - kRefBackV1;
          if (dist >= str_off_.size()) return Fail("bad string back-reference");
          idx = str_off_.size() - 1 - dist;
        } else if (v == kRefNext || v == kRefSame) {
          idx = static_cast<uint64_t>(last_ref_) + (v == kRefNext ? 1 : 0);
          if (last_ref_ == UINT32_MAX) idx = v == kRefNext ? 0 : UINT64_MAX;
          if (idx >= str_off_.size()) return Fail("bad string reference");
        } else {
          uint64_t dist = v - kRefBack;
          if (dist >= str_off_.size()) return Fail("bad string back-reference");
          idx = str_off_.size() - 1 - dist;
        }
        str_idx[i] = static_cast<int>(idx);
        last_ref_ = static_cast<uint32_t>(idx);
      }
    } else {
      if (!get(op == kOpFd ? kSecFds : kSecInts, &v)) return Fail("argument section ends early");
      a.i = UnZigZag(v);
    }
  }
  // Views are made once the arena has stopped growing for this event.
  if (plan.strings) {
    for (int i = 0; i < plan.nargs; ++i)
      if (str_idx[i] >= 0) {
        e->args[i].s = std::string_view(arena_.data() + str_off_[str_idx[i]], str_len_[str_idx[i]]);
        e->args[i].string_id = static_cast<uint32_t>(str_idx[i]) + 1;
      }
  }
  int count_idx = plan.count_idx;
  e->ret = count_idx >= 0 ? static_cast<int64_t>(static_cast<uint64_t>(e->args[count_idx].i) -
                                                 static_cast<uint64_t>(UnZigZag(r)))
                          : UnZigZag(r);
  ++index_;
  return true;
}

bool ChunkCursor::PeekTimes(int64_t* start_ns, int64_t* end_ns) {
  uint64_t dd;
  if (!PeekStart(start_ns) ||
      GetVarint(sec_[kSecDurations].p, sec_[kSecDurations].end, &dd) == nullptr)
    return false;
  // As Next computes it: the duration in units after the start in units (wrapping).
  *end_ns = static_cast<int64_t>(static_cast<uint64_t>(*start_ns) +
                                 static_cast<uint64_t>(UnZigZag(dd)) * static_cast<uint64_t>(unit_));
  return true;
}

// ---- MergedReader ----

namespace {
// units x unit, saturated at the int64 range.
int64_t UnitsToNs(int64_t u, int64_t unit) {
  return u > INT64_MAX / unit ? INT64_MAX : u < INT64_MIN / unit ? INT64_MIN : u * unit;
}
}  // namespace

bool MergedReader::Later::operator()(const Live* a, const Live* b) const {
  const Event& x = a->next;
  const Event& y = b->next;
  if (x.start_ns != y.start_ns) return x.start_ns > y.start_ns;
  if (x.pid != y.pid) return x.pid > y.pid;
  if (x.tid != y.tid) return x.tid > y.tid;
  return a->chunk->sequence > b->chunk->sequence;
}

bool MergedReader::LoadChunk() {
  auto live = std::make_unique<Live>();
  live->chunk = std::make_unique<Chunk>();
  for (;;) {
    if (!reader_->NextChunk(live->chunk.get())) {
      if (!reader_->status().ok()) status_ = reader_->status();
      file_done_ = true;
      return false;
    }
    if (live->chunk->meta.kind == ChunkKind::kEvents) break;
  }
  const int64_t unit = reader_->time_unit_ns();
  watermark_ns_ = UnitsToNs(live->chunk->meta.watermark, unit);
  if (Status s = live->cursor.Init(live->chunk.get(), reader_->time_unit_ns()); !s.ok()) {
    status_ = s;
    return false;
  }
  Live* l = live.get();
  live_.push_back(std::move(live));
  max_live_ = std::max(max_live_, live_.size());
  if (effect_) {
    const ChunkMeta& meta = l->chunk->meta;
    const uint64_t key = (static_cast<uint64_t>(meta.pid) << 32) | meta.tid;
    Stream& s = streams_[key];
    s.key = key;
    // A thread's chunks follow one another in time unless it has nested events that went out
    // in a chunk of their own (the recorder writes a step back so): then every chunk of it is
    // looked at for its next event, not only the first.
    if (!s.unordered && UnitsToNs(meta.first_start, unit) < s.max_last_start) {
      s.unordered = true;
      for (Live* other : s.lives) other->unordered = true;
    }
    s.max_last_start = std::max(s.max_last_start, UnitsToNs(meta.last_start, unit));
    s.lives.push_back(l);
    l->stream = &s;
    l->unordered = s.unordered;
  }
  Advance(l);
  return status_.ok();
}

bool MergedReader::Advance(Live* l) {
  l->has_next = l->cursor.Next(&l->next);
  return Queue(l);
}

bool MergedReader::Queue(Live* l) {
  if (l->has_next) {
    heap_.push(l);
    return true;
  }
  if (!l->cursor.status().ok()) status_ = l->cursor.status();
  Stream* s = l->stream;
  if (s) s->lives.erase(std::find(s->lives.begin(), s->lives.end(), l));
  auto it = std::find_if(live_.begin(), live_.end(), [l](const auto& p) { return p.get() == l; });
  if (it != live_.end()) {
    std::swap(*it, live_.back());
    live_.pop_back();
  }
  if (s) Forget(s);
  return false;
}

void MergedReader::Emit(Live* l, Event* e) {
  *e = l->next;
  if (e->start_ns < last_emitted_) ++order_violations_;
  last_emitted_ = std::max(last_emitted_, e->start_ns);
  pending_ = l;
}

bool MergedReader::NextStart(Event* e) {
  if (pending_) {
    Live* l = pending_;
    pending_ = nullptr;
    // The chunk just emitted from usually comes next again: when its next event would be the
    // heap's top and may go out, it goes out without the push and pop.
    l->has_next = l->cursor.Next(&l->next);
    if (l->has_next && status_.ok() && (file_done_ || l->next.start_ns < watermark_ns_) &&
        (heap_.empty() || !Later()(l, heap_.top()))) {
      Emit(l, e);
      return true;
    }
    Queue(l);
  }
  while (status_.ok()) {
    if (!heap_.empty() && (file_done_ || heap_.top()->next.start_ns < watermark_ns_)) {
      Live* l = heap_.top();
      heap_.pop();
      Emit(l, e);
      return true;
    }
    if (file_done_) return false;
    LoadChunk();
  }
  return false;
}

// ---- MergedReader: effect order ----
//
// An event goes out in start order unless it is a call that can wait (TakesEffectAfterNested)
// and its thread's next event (in start order) is nested in it: then it is held back, on a
// stack per thread, and goes out as soon as its thread's next event is no longer nested in it,
// right after the last one that was. Whether the next event is nested needs that event known:
// the rest of the event's own chunk (its start is peeked), or the first event of the thread's
// other chunks with events left, or, when none starts below the watermark, the certainty that
// every event still unread starts at or after it (FORMAT.md section 7): a call that ends past
// the watermark waits for more chunks.

namespace {
constexpr std::array<bool, kMaxTag + 1> BuildWaits() {
  std::array<bool, kMaxTag + 1> w{};
  for (const CallSpec& c : kCalls)
    w[c.tag] = c.effect == Effect::kOpen || c.effect == Effect::kRead ||
               c.effect == Effect::kWrite || c.effect == Effect::kCopy ||
               c.tag == static_cast<uint16_t>(CallId::accept) ||
               c.tag == static_cast<uint16_t>(CallId::accept4) ||
               c.tag == static_cast<uint16_t>(CallId::flock) ||
               c.tag == static_cast<uint16_t>(CallId::fcntl);
  return w;
}
constexpr std::array<bool, kMaxTag + 1> kWaits = BuildWaits();
}  // namespace

bool TakesEffectAfterNested(const Event& e) {
  const auto tag = static_cast<uint16_t>(e.call);
  if (tag > kMaxTag || !kWaits[tag]) return false;
  // fcntl waits only to take a lock: F_SETLKW (7), F_OFD_SETLKW (38).
  return e.call != CallId::fcntl || e.args[1].i == 7 || e.args[1].i == 38;
}

void MergedReader::Forget(Stream* s) {
  if (!s->lives.empty() || !s->held.empty()) return;
  if (check_ == s) check_ = nullptr;
  streams_.erase(s->key);
}

bool MergedReader::StreamNext(const Stream* s, const Live* except, int64_t* start,
                              int64_t* end) const {
  bool found = false;
  for (const Live* l : s->lives) {
    if (l == except || !l->has_next) continue;
    if (!found || l->next.start_ns < *start) {
      *start = l->next.start_ns;
      *end = l->next.end_ns;
      found = true;
    }
    // In time order, the first chunk's next event is the earliest.
    if (!s->unordered) break;
  }
  return found;
}

int MergedReader::NestedNext(const Event& outer, bool known, int64_t start, int64_t end) const {
  const int64_t horizon = file_done_ ? INT64_MAX : watermark_ns_;
  // Unread events start at or after the watermark: one known below it is the thread's next.
  if (known && start < horizon)
    return start >= outer.start_ns && start < outer.end_ns && end <= outer.end_ns ? 1 : 0;
  return horizon >= outer.end_ns ? 0 : -1;
}

int MergedReader::NestsInNext(Live* l) {
  const Event& o = l->next;
  // Nothing starts inside an instant, and a call that cannot wait took effect first.
  if (o.end_ns <= o.start_ns || !TakesEffectAfterNested(o)) return 0;
  int64_t start = 0, end = 0;
  bool known = l->cursor.PeekTimes(&start, &end);
  if (!known || l->unordered) {
    int64_t s2, e2;
    if (StreamNext(l->stream, l, &s2, &e2) && (!known || s2 < start)) {
      start = s2;
      end = e2;
      known = true;
    }
  }
  return NestedNext(o, known, start, end);
}

int MergedReader::HeldReady(Stream* s) {
  int64_t start = 0, end = 0;
  bool known = StreamNext(s, nullptr, &start, &end);
  int nested = NestedNext(s->held.back().e, known, start, end);
  return nested < 0 ? -1 : nested == 0 ? 1 : 0;
}

bool MergedReader::Hold(Live* l) {
  const CallSpec& spec = l->next.spec();
  uint64_t bytes = 0;
  for (int i = 0; i < spec.nargs; ++i)
    if (IsString(spec.args[i].kind) && !l->next.args[i].null) bytes += l->next.args[i].s.size();
  if (held_now_ >= kMaxHeld || held_bytes_ + bytes > kMaxHeldBytes) return false;
  Stream* s = l->stream;
  Held& h = s->held.emplace_back();
  ++held_now_;
  held_bytes_ += bytes;
  h.e = l->next;
  for (int i = 0; i < spec.nargs; ++i) {
    Arg& a = h.e.args[i];
    if (!IsString(spec.args[i].kind) || a.null) continue;
    h.s[i].assign(a.s.data(), a.s.size());
    a.s = {};
    a.string_id = 0;  // no longer in a chunk's table
  }
  Advance(l);  // (s holds an event: it stays while l goes)
  return true;
}

void MergedReader::Inside(Stream* s, int64_t end) {
  if (s->held.empty()) return;
  Held& outer = s->held.back();
  outer.inner_end = std::max(outer.inner_end, end);
  check_ = s;
}

void MergedReader::EmitHeld(Stream* s, Event* e) {
  out_ = std::move(s->held.back());
  s->held.pop_back();
  --held_now_;
  for (const std::string& str : out_.s) held_bytes_ -= str.size();
  *e = out_.e;
  const CallSpec& spec = e->spec();
  for (int i = 0; i < spec.nargs; ++i)
    if (IsString(spec.args[i].kind) && !e->args[i].null) e->args[i].s = out_.s[i];
  last_held_ = true;
  resumed_ns_ = out_.inner_end == INT64_MIN ? e->start_ns : out_.inner_end;
  ++held_count_;
  if (!s->held.empty()) {
    Inside(s, e->end_ns);
  } else {
    check_ = nullptr;
    Forget(s);
  }
}

bool MergedReader::NextEffect(Event* e) {
  Live* cand = nullptr;  // due, earliest, and not in the heap (the chunk emitted from last)
  if (pending_) {
    Live* l = pending_;
    pending_ = nullptr;
    l->has_next = l->cursor.Next(&l->next);
    if (l->has_next && status_.ok() && Due(l) && (heap_.empty() || !Later()(l, heap_.top())))
      cand = l;
    else
      Queue(l);
  }
  while (status_.ok()) {
    // The thread whose event went out last: its innermost held event may be due now.
    if (check_) {
      int ready = HeldReady(check_);
      if (ready != 0) {
        if (cand) heap_.push(cand);
        cand = nullptr;
        if (ready > 0) {
          EmitHeld(check_, e);
          return true;
        }
        LoadChunk();
        continue;
      }
      check_ = nullptr;
    }
    Live* l = cand;
    cand = nullptr;
    if (l == nullptr) {
      if (!heap_.empty() && Due(heap_.top())) {
        l = heap_.top();
        heap_.pop();
      } else if (file_done_) {
        break;
      } else {
        LoadChunk();
        continue;
      }
    }
    int nests = Plain(l) ? 0 : NestsInNext(l);
    if (nests > 0 && Hold(l)) continue;
    if (nests >= 0) {
      EmitEffect(l, e);
      return true;
    }
    heap_.push(l);
    LoadChunk();
  }
  // At the end, anything still held (none unless a promise was broken) goes out, innermost
  // first.
  if (status_.ok())
    for (auto& [key, s] : streams_)
      if (!s.held.empty()) {
        EmitHeld(&s, e);
        return true;
      }
  return false;
}

}  // namespace iorr::trace
