// ChunkEncoder; see encoder.h. No exceptions, no allocation after Init.
#include "traces/encoder.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_initStaticCCtx: a compressor that never allocates
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "traces/crc32c.h"
#include "traces/varint.h"

namespace iorr::trace {
namespace {

inline uint64_t Diff(int64_t a, int64_t b) {  // a - b, wrapping, zigzagged
  return ZigZag(static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)));
}

inline uint32_t HashBytes(const char* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  std::memcpy(&w, p, n);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  return static_cast<uint32_t>(h);
}

size_t RoundUpPow2(size_t v) {
  size_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

constexpr size_t kPrefixBytes = 1 + kNumSections * kMaxVarintBytes;

}  // namespace

ChunkCompressor::~ChunkCompressor() {
  std::free(workspace_);  // a static CCtx lives inside its workspace: no ZSTD_freeCCtx
}

size_t ChunkCompressor::WorkspaceBytes(int level) { return ZSTD_estimateCStreamSize(level); }

unsigned ChunkCompressor::BuiltVersion() { return ZSTD_VERSION_NUMBER; }

bool ChunkCompressor::Init(int level) {
  if (memory_) return true;
  size_t bytes = WorkspaceBytes(level);
  workspace_ = std::malloc(bytes);
  if (!workspace_) return false;
  return Init(level, workspace_, bytes);
}

bool ChunkCompressor::Init(int level, void* workspace, size_t bytes) {
  if (workspace == nullptr || bytes < WorkspaceBytes(level)) return false;
  memory_ = workspace;
  bytes_ = bytes;
  level_ = level;
  return true;
}

bool ChunkCompressor::InitLazy(int level, void* (*map)(size_t)) {
  if (memory_ || map == nullptr) return memory_ != nullptr;
  map_ = map;
  level_ = level;
  return true;
}

// The size is set before the address: a process sharing this memory that sees the address (a
// vfork child's parent, freeing it) sees the size too.
bool ChunkCompressor::MapWorkspace(size_t bytes) {
  if (memory_ != nullptr) return true;
  if (map_ == nullptr) return false;
  if (bytes == 0) bytes = WorkspaceBytes(level_);
  void* workspace = map_(bytes);
  if (workspace == nullptr) return false;
  bytes_ = bytes;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  memory_ = workspace;
  return true;
}

ZSTD_CCtx* ChunkCompressor::cctx() {
  if (memory_ == nullptr && !MapWorkspace()) return nullptr;
  if (cctx_ == nullptr && memory_ != nullptr) {
    cctx_ = ZSTD_initStaticCCtx(memory_, bytes_);
    if (cctx_ == nullptr) return nullptr;
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level_);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
  }
  return cctx_;
}

ChunkEncoder::~ChunkEncoder() {
  if (owns_memory_) std::free(memory_);
}

// The string table's hash slots: tables of kMinSlots, 2 kMinSlots, ... up to twice max_strings,
// each in its own place (2 x the largest in all). A chunk starts in the smallest and moves to the
// next when half full, so a short chunk (a short process) clears and touches a few pages, not a
// megabyte; only the table in use is kept cleared.
namespace {
size_t MaxSlots(const ChunkLimits& limits) {
  return std::max(ChunkEncoder::kMinSlots,
                  RoundUpPow2(static_cast<size_t>(limits.max_strings) * 2));
}
}  // namespace

size_t ChunkEncoder::MemoryBytes(const ChunkLimits& limits) {
  return static_cast<size_t>(limits.section_bytes) * (kNumSections + 1) +
         (2 * MaxSlots(limits) - kMinSlots) * sizeof(Slot);
}

namespace {
// Decoded strings of a chunk are at most section_bytes (the arena): keep readers' limit. More
// strings than bytes to hold them is no limit (and 2^30 would overflow the table size); a
// reader accepts at most kMaxChunkStrings.
bool ValidLimits(const ChunkLimits& limits, uint32_t time_unit_ns) {
  return ValidTimeUnit(time_unit_ns) && limits.max_events != 0 && limits.section_bytes >= 4096 &&
         limits.section_bytes <= kMaxChunkStringBytes && limits.max_strings != 0 &&
         limits.max_strings <= limits.section_bytes && limits.max_strings <= kMaxChunkStrings;
}
}  // namespace

bool ChunkEncoder::Init(const ChunkLimits& limits, uint32_t time_unit_ns) {
  if (!ValidLimits(limits, time_unit_ns)) return false;
  void* memory = std::malloc(MemoryBytes(limits));
  if (!memory) return false;
  if (!Init(limits, time_unit_ns, memory)) {
    std::free(memory);
    return false;
  }
  owns_memory_ = true;
  return true;
}

bool ChunkEncoder::Init(const ChunkLimits& limits, uint32_t time_unit_ns, void* memory) {
  if (!ValidLimits(limits, time_unit_ns)) return false;
  limits_ = limits;
  unit_ = time_unit_ns;
  size_t nslots = MaxSlots(limits);
  memory_bytes_ = MemoryBytes(limits);
  memory_ = static_cast<uint8_t*>(memory);
  Layout(false);
  slot_region_ = reinterpret_cast<Slot*>(memory_ + static_cast<size_t>(limits.section_bytes) *
                                                       (kNumSections + 1));
  max_slots_ = static_cast<uint32_t>(nslots);
  UseTable(kMinSlots);
  strings_ = 0;
  Reset();
  return true;
}

static_assert(ChunkEncoder::kCompactBytes * (kNumSections + 1) <= 4096);

void ChunkEncoder::Layout(bool compact) {
  compact_ = compact;
  const size_t step = compact ? kCompactBytes : limits_.section_bytes;
  uint8_t* p = memory_;
  for (auto& s : sec_) {
    s.begin = s.p = p;
    s.end = p + step;
    p += step;
  }
  arena_ = reinterpret_cast<char*>(p);
  arena_cap_ = static_cast<uint32_t>(step);
}

void ChunkEncoder::StartCompact() {
  if (events_ == 0) {
    Layout(true);
    compact_full_ = false;
  }
}

void ChunkEncoder::Reset() {
  // The geometry is made anew from the flags each time: a vfork child killed inside Layout
  // (VmChildFlush) leaves it half made, and its parent's Begin then mends it.
  Layout(compact_ && !compact_full_);
  compact_full_ = false;
  for (auto& s : sec_) s.p = s.begin;
  if (strings_) UseTable(kMinSlots);
  arena_used_ = 0;
  strings_ = 0;
  prev_new_offset_ = prev_new_len_ = 0;
  last_ref_ = UINT32_MAX;
  events_ = 0;
  first_start_u_ = last_start_u_ = prev_start_u_ = max_start_u_ = min_start_u_ = 0;
}

void ChunkEncoder::Begin(uint64_t stream_id, uint32_t pid, uint32_t tid) {
  Reset();
  stream_id_ = stream_id;
  pid_ = pid;
  tid_ = tid;
}

// Table of n slots (a power of two, kMinSlots..max_slots_): the one at n - kMinSlots in the
// region, cleared here.
void ChunkEncoder::UseTable(size_t n) {
  slots_ = slot_region_ + (n - kMinSlots);
  slot_mask_ = static_cast<uint32_t>(n - 1);
  std::memset(slots_, 0, n * sizeof(Slot));
}

// Moves the entries to the table twice the size (load at most one half).
void ChunkEncoder::GrowTable() {
  const Slot* old = slots_;
  size_t old_n = static_cast<size_t>(slot_mask_) + 1;
  UseTable(old_n * 2);
  for (size_t j = 0; j < old_n; ++j) {
    if (old[j].index == 0) continue;
    uint32_t i = old[j].hash & slot_mask_;
    while (slots_[i].index != 0) i = (i + 1) & slot_mask_;
    slots_[i] = old[j];
  }
}

// The slot holding s, or the empty slot where it goes (the table grown first if a new entry
// would fill it past half).
ChunkEncoder::Slot& ChunkEncoder::Probe(std::string_view s, uint32_t hash) {
  if ((strings_ + 1) * 2 > slot_mask_ + 1 && slot_mask_ + 1 < max_slots_) GrowTable();
  for (uint32_t i = hash & slot_mask_;; i = (i + 1) & slot_mask_) {
    Slot& slot = slots_[i];
    if (slot.index == 0 || (slot.hash == hash && slot.len == s.size() &&
                            std::memcmp(arena_ + slot.offset, s.data(), s.size()) == 0))
      return slot;
  }
}

int32_t ChunkEncoder::Intern(std::string_view s, uint32_t hash) {
  Slot& slot = Probe(s, hash);
  if (slot.index != 0) return static_cast<int32_t>(slot.index - 1);
  slot.hash = hash;
  slot.offset = arena_used_;
  slot.len = static_cast<uint32_t>(s.size());
  slot.index = ++strings_;
  if (!s.empty()) std::memcpy(arena_ + arena_used_, s.data(), s.size());
  arena_used_ += static_cast<uint32_t>(s.size());
  return -1;
}

// A name of a new listing, already in the arena, becomes the table's newest entry. An equal
// string's slot is moved to it, so that references find the entry nearest in the listing.
void ChunkEncoder::AddListedName(uint32_t offset, uint32_t len) {
  std::string_view name(arena_ + offset, len);
  uint32_t hash = HashBytes(name.data(), len);
  Slot& slot = Probe(name, hash);
  if (slot.index == 0) {
    slot.hash = hash;
    slot.offset = offset;
    slot.len = len;
  }
  slot.index = ++strings_;
}

bool ChunkEncoder::PutString(const Arg& a, bool listing) {
  Sec& refs = sec_[kSecStrRefs];
  if (a.null) {
    refs.p = PutVarint(refs.p, kRefNull);
    return true;
  }
  // An empty string's data may be null (a default view), which the memcpy and memcmp below
  // may not be given even for 0 bytes (UBSan, under the importers' fuzzer).
  std::string_view s = a.s.empty() ? std::string_view("", 0) : a.s;
  uint32_t before = strings_;
  int32_t found = Intern(s, HashBytes(s.data(), s.size()));
  if (found >= 0) {
    uint32_t idx = static_cast<uint32_t>(found);
    uint64_t code = idx == last_ref_ + 1 ? kRefNext
                    : idx == last_ref_   ? kRefSame
                                         : kRefBack + (before - 1 - idx);
    refs.p = PutVarint(refs.p, code);
    last_ref_ = idx;
    return true;
  }
  // New string: shared prefix with the previous new string, then the suffix.
  const char* prev = arena_ + prev_new_offset_;
  size_t n = prev_new_len_ < s.size() ? prev_new_len_ : s.size();
  size_t shared = 0;
  while (shared < n && prev[shared] == s[shared]) ++shared;
  size_t suffix = s.size() - shared;
  refs.p = PutVarint(refs.p, kRefNew);
  refs.p = PutVarint(refs.p, shared);
  refs.p = PutVarint(refs.p, suffix);
  Sec& bytes = sec_[kSecStrBytes];
  std::memcpy(bytes.p, s.data() + shared, suffix);
  bytes.p += suffix;
  uint32_t offset = arena_used_ - static_cast<uint32_t>(s.size());
  prev_new_offset_ = offset;
  prev_new_len_ = static_cast<uint32_t>(s.size());
  last_ref_ = before;
  if (listing) {
    ForEachListedName(std::string_view(arena_ + offset, s.size()),
                      [&](std::string_view name, uint8_t) {
                        AddListedName(static_cast<uint32_t>(name.data() - arena_),
                                      static_cast<uint32_t>(name.size()));
                      });
  }
  return true;
}

// Room for an event of nargs arguments and str_bytes of strings (nstr of them) at worst.
bool ChunkEncoder::Fits(size_t nargs, size_t str_bytes, size_t nstr) const {
  const size_t v = kMaxVarintBytes, na = nargs;
  return !(events_ >= limits_.max_events || sec_[kSecCalls].room() < v ||
           sec_[kSecStarts].room() < v || sec_[kSecDurations].room() < v ||
           sec_[kSecRets].room() < v || sec_[kSecFds].room() < v * na ||
           sec_[kSecInts].room() < v * na || sec_[kSecStrRefs].room() < 3 * v * na ||
           sec_[kSecStrBytes].room() < str_bytes || arena_cap_ - arena_used_ < str_bytes ||
           strings_ + nstr > limits_.max_strings);
}

ChunkEncoder::AddResult ChunkEncoder::Add(const Event& e) {
  const CallShape* spec = ShapeOf(e.call);  // no names: see CallShape
  if (spec == nullptr) return AddResult::kInvalid;
  // Room check against the worst case of this event.
  const bool listing = e.call == CallId::dirents;  // its names join the table
  size_t str_bytes = 0, nstr = 0;
  for (int i = 0; i < spec->nargs; ++i) {
    if (IsString(spec->args[i].kind) && !e.args[i].null) {
      str_bytes += e.args[i].s.size();
      ++nstr;
      if (listing) ForEachListedName(e.args[i].s, [&](std::string_view, uint8_t) { ++nstr; });
    }
  }
  // Too long for any chunk: strings over a quarter of a section, a listing of more names than
  // the string table holds.
  if (str_bytes > limits_.section_bytes / 4 || nstr > limits_.max_strings)
    return AddResult::kInvalid;
  if (!Fits(spec->nargs, str_bytes, nstr)) {
    if (!compact_) return AddResult::kFull;
    if (events_ != 0) {  // this compact chunk ends here, the next one is full size
      compact_full_ = true;
      return AddResult::kFull;
    }
    // An empty chunk of the compact start that cannot take the event: the full layout from now
    // on (nothing is in the sections to move).
    Layout(false);
    if (!Fits(spec->nargs, str_bytes, nstr)) return AddResult::kFull;
  }

  int64_t start_u = ToUnits(e.start_ns, unit_);
  int64_t end_u = ToUnits(e.end_ns, unit_);
  if (events_ == 0) first_start_u_ = prev_start_u_ = max_start_u_ = min_start_u_ = start_u;
  sec_[kSecCalls].p = PutVarint(sec_[kSecCalls].p, spec->tag);
  sec_[kSecStarts].p = PutVarint(sec_[kSecStarts].p, Diff(start_u, prev_start_u_));
  sec_[kSecDurations].p = PutVarint(sec_[kSecDurations].p, Diff(end_u, start_u));
  prev_start_u_ = start_u;
  if (start_u > max_start_u_) max_start_u_ = start_u;
  if (start_u < min_start_u_) min_start_u_ = start_u;
  int count_idx = spec->ret == Ret::kCount ? CountArgIndex(*spec) : -1;
  uint64_t ret = count_idx >= 0 ? Diff(e.args[count_idx].i, e.ret) : ZigZag(e.ret);
  sec_[kSecRets].p = PutVarint(sec_[kSecRets].p, ret);
  for (int i = 0; i < spec->nargs; ++i) {
    ArgKind k = spec->args[i].kind;
    if (k == ArgKind::kBuf) continue;
    if (IsString(k)) {
      PutString(e.args[i], listing);
    } else if (k == ArgKind::kFd || k == ArgKind::kDirFd) {
      sec_[kSecFds].p = PutVarint(sec_[kSecFds].p, ZigZag(e.args[i].i));
    } else {
      sec_[kSecInts].p = PutVarint(sec_[kSecInts].p, ZigZag(e.args[i].i));
    }
  }
  ++events_;
  return AddResult::kOk;
}

size_t ChunkEncoder::MaxOutputBytes() const {
  // (the limits' layout: what a compact start uses is less)
  size_t raw = kPrefixBytes + static_cast<size_t>(limits_.section_bytes) * std::size(sec_);
  // (+ a block header for each section's block of its own: Compress)
  return kMaxChunkRecordBytes + ZSTD_compressBound(raw) + 4 * (std::size(sec_) + 1);
}

// One zstd frame of the payload (prefix, then the sections) at zout, each section ending a
// block (ZSTD_e_flush): a block's entropy tables then fit one section's values instead of a mix
// of several (times, then names, ...). Still one standard frame: readers see no difference.
// Traces shrank by 6 to 9% (`rm -rf` of the Linux tree: 4.15 -> 3.91 bytes/event; `tar xf`:
// 2.38 -> 2.17 at 1 us, recompressed from the same recordings).
bool ChunkEncoder::Compress(ZSTD_CCtx* cctx, const uint8_t* prefix, size_t prefix_len,
                            size_t raw_size, ZSTD_outBuffer* zout) const {
  if (cctx == nullptr) return false;
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
  ZSTD_CCtx_setPledgedSrcSize(cctx, raw_size);
  auto feed = [&](const void* src, size_t n, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{src, n, 0};
    for (;;) {
      size_t r = ZSTD_compressStream2(cctx, zout, &in, mode);
      if (ZSTD_isError(r)) return false;
      if (mode == ZSTD_e_continue ? in.pos == in.size : r == 0) return true;
      if (zout->pos == zout->size) return false;
    }
  };
  bool ok = feed(prefix, prefix_len, ZSTD_e_continue);
  for (const auto& s : sec_)
    if (s.p != s.begin) ok = ok && feed(s.begin, static_cast<size_t>(s.p - s.begin), ZSTD_e_flush);
  return ok && feed(nullptr, 0, ZSTD_e_end);
}

// A small payload goes into the frame as it is (RFC 8878: a single-segment frame with its
// content size, one Raw block, no content checksum: the chunk record's CRC-32C covers the
// frame). Compressing a few hundred bytes gains little, and the first compression in a process
// costs more than the whole of a short process's recording (ChunkCompressor::cctx).
bool ChunkEncoder::PutStoredFrame(const uint8_t* prefix, size_t prefix_len, size_t raw_size,
                                  ZSTD_outBuffer* zout) const {
  static_assert(kStoredMaxBytes < 65536 + 256 && kStoredMaxBytes < (128u << 10));
  if (zout->size - zout->pos < 10 + raw_size) return false;
  uint8_t* o = static_cast<uint8_t*>(zout->dst) + zout->pos;
  const uint32_t magic = ZSTD_MAGICNUMBER;
  std::memcpy(o, &magic, 4);  // little-endian, as the format and x86 are
  size_t n = 4;
  if (raw_size < 256) {
    o[n++] = 0x20;  // Single_Segment, 1-byte Frame_Content_Size
    o[n++] = static_cast<uint8_t>(raw_size);
  } else {
    o[n++] = 0x60;  // Single_Segment, 2-byte Frame_Content_Size (value - 256)
    o[n++] = static_cast<uint8_t>((raw_size - 256) & 0xff);
    o[n++] = static_cast<uint8_t>((raw_size - 256) >> 8);
  }
  uint32_t block = 1u | (static_cast<uint32_t>(raw_size) << 3);  // Last_Block, Raw
  o[n++] = static_cast<uint8_t>(block);
  o[n++] = static_cast<uint8_t>(block >> 8);
  o[n++] = static_cast<uint8_t>(block >> 16);
  std::memcpy(o + n, prefix, prefix_len);
  n += prefix_len;
  for (const auto& s : sec_) {
    size_t len = static_cast<size_t>(s.p - s.begin);
    if (len) std::memcpy(o + n, s.begin, len);
    n += len;
  }
  zout->pos += n;
  return true;
}

size_t ChunkEncoder::Finish(ChunkCompressor& compressor, int64_t watermark_ns, uint8_t* out,
                            size_t cap) {
  uint8_t prefix[kPrefixBytes];
  uint8_t* p = PutVarint(prefix, kNumSections);
  size_t raw_size = 0;
  for (const auto& s : sec_) {
    size_t n = static_cast<size_t>(s.p - s.begin);
    p = PutVarint(p, n);
    raw_size += n;
  }
  size_t prefix_len = static_cast<size_t>(p - prefix);
  raw_size += prefix_len;

  // Compress the sections as one frame straight from their buffers, after room for the record.
  if (cap < kMaxChunkRecordBytes) return 0;
  ZSTD_outBuffer zout{out + kMaxChunkRecordBytes, cap - kMaxChunkRecordBytes, 0};
  bool ok = true;
  if (raw_size <= kStoredMaxBytes) {
    ok = PutStoredFrame(prefix, prefix_len, raw_size, &zout);
  } else {
    ok = Compress(compressor.cctx(), prefix, prefix_len, raw_size, &zout);
  }
  if (!ok) {
    Begin(stream_id_, pid_, tid_);
    return 0;
  }
  meta_ = ChunkMeta{};
  meta_.kind = ChunkKind::kEvents;
  meta_.stream_id = stream_id_;
  meta_.pid = pid_;
  meta_.tid = tid_;
  meta_.events = events_;
  meta_.first_start = first_start_u_;
  meta_.last_start = max_start_u_;
  meta_.watermark = ToUnits(watermark_ns, unit_);
  meta_.raw_size = raw_size;
  meta_.compressed_size = zout.pos;
  meta_.payload_crc = Crc32c(out + kMaxChunkRecordBytes, zout.pos);
  size_t rec = EncodeChunkRecord(meta_, out);
  std::memmove(out + rec, out + kMaxChunkRecordBytes, zout.pos);
  Begin(stream_id_, pid_, tid_);
  return rec + zout.pos;
}

}  // namespace iorr::trace
