// RAID 0 over member devices (see raid0.h): chunk arithmetic, flush fan-out, completion
// bookkeeping. Not thread-safe.
#include "model/raid0.h"

#include <algorithm>
#include <utility>

namespace iorr::model {

Result<std::unique_ptr<Raid0Model>> Raid0Model::Make(
    std::string name, std::vector<std::unique_ptr<DeviceModel>> members, uint32_t chunk_kib,
    const DeviceSettings& settings) {
  if (members.size() < 2)
    return Status::Error("\"members\": RAID 0 needs at least 2 (got " +
                         std::to_string(members.size()) + ")");
  if (chunk_kib < 4 || chunk_kib % 4 != 0 || chunk_kib > (1u << 20))
    return Status::Error("\"chunk_kib\": must be a multiple of 4 from 4 to 1048576 (got " +
                         std::to_string(chunk_kib) + ")");
  uint64_t chunk = uint64_t{chunk_kib} * 2;
  uint64_t smallest = ~uint64_t{0};
  bool any_cache = false;
  for (const auto& m : members) {
    smallest = std::min(smallest, m->capacity_sectors());
    any_cache = any_cache || m->write_cache();
  }
  uint64_t per_member = smallest / chunk * chunk;
  if (per_member == 0) return Status::Error("\"chunk_kib\": larger than the smallest member");
  // md advertises a volatile cache when any member has one.
  bool wce = settings.write_cache.value_or(any_cache);
  uint64_t capacity = per_member * members.size();
  return std::unique_ptr<Raid0Model>(
      new Raid0Model(std::move(name), std::move(members), chunk, capacity, wce, settings.barriers));
}

Raid0Model::Raid0Model(std::string name, std::vector<std::unique_ptr<DeviceModel>> members,
                       uint64_t chunk_sectors, uint64_t capacity, bool write_cache, bool barriers)
    : DeviceModel(std::move(name), capacity, write_cache, barriers),
      members_(std::move(members)),
      chunk_(chunk_sectors),
      pieces_(members_.size()) {
  parents_.reserve(64);
  free_.reserve(64);
}

void Raid0Model::DoSubmit(const BlockRequest& r, uint64_t tag) {
  uint32_t p;
  if (!free_.empty()) {
    p = free_.back();
    free_.pop_back();
  } else {
    p = static_cast<uint32_t>(parents_.size());
    parents_.emplace_back();
  }
  Parent& par = parents_[p];
  par.tag = tag;
  par.submit_ns = r.time_ns;
  par.req = r;
  par.pending = 0;
  par.pre = r.op != BlockOp::kFlush && r.has(kPreflush);
  if (r.op == BlockOp::kFlush || par.pre) ++stats_.flushes;
  if (r.op == BlockOp::kWrite && r.has(kFua)) ++stats_.fua_writes;
  if (r.op == BlockOp::kFlush || par.pre)
    FlushAll(p, r.time_ns);
  else
    SubmitData(p, r.time_ns);
  Collect();
}

void Raid0Model::FlushAll(uint32_t p, int64_t t) {
  BlockRequest f;
  f.time_ns = t;
  f.op = BlockOp::kFlush;
  parents_[p].pending = static_cast<uint32_t>(members_.size());
  for (auto& m : members_) m->Submit(f, p);
}

void Raid0Model::SubmitData(uint32_t p, int64_t t) {
  const BlockRequest& r = parents_[p].req;
  size_t n = members_.size();
  for (Piece& pc : pieces_) pc.sectors = 0;
  uint64_t s = r.sector, left = r.sectors();
  size_t last = 0;
  while (left > 0) {
    uint64_t chunk = s / chunk_, off = s % chunk_;
    uint64_t len = std::min(left, chunk_ - off);
    size_t m = chunk % n;
    Piece& pc = pieces_[m];
    if (pc.sectors == 0) pc.sector = (chunk / n) * chunk_ + off;
    pc.sectors += len;  // later chunks of one member follow on in its address space
    last = m;
    s += len;
    left -= len;
  }
  BlockRequest piece = r;
  piece.time_ns = t;
  piece.flags &= static_cast<uint8_t>(~kPreflush);
  uint64_t short_by = r.sectors() * kSectorBytes - r.bytes;  // a last sector not full
  uint32_t count = 0;
  for (size_t m = 0; m < n; ++m) count += pieces_[m].sectors > 0;
  parents_[p].pending = count;
  for (size_t m = 0; m < n; ++m) {
    if (pieces_[m].sectors == 0) continue;
    piece.sector = pieces_[m].sector;
    piece.bytes = pieces_[m].sectors * kSectorBytes - (m == last ? short_by : 0);
    members_[m]->Submit(piece, p);
  }
}

int64_t Raid0Model::DoNextEventNs() const {
  int64_t t = kNever;
  for (const auto& m : members_) t = std::min(t, m->NextEventNs());
  return t;
}

void Raid0Model::DoStep(int64_t t) {
  for (auto& m : members_)
    if (m->NextEventNs() == t) m->Step();
  Collect();
}

// Takes the members' completions; a request is done when all its pieces are. A PREFLUSH
// request then sends its data. Repeats while that produces completions at once.
void Raid0Model::Collect() {
  bool again = true;
  while (again) {
    again = false;
    for (auto& m : members_) {
      Completion c;
      while (m->PopCompletion(&c)) {
        again = true;
        auto p = static_cast<uint32_t>(c.tag);
        Parent& par = parents_[p];
        if (--par.pending > 0) continue;
        if (par.pre) {
          par.pre = false;
          if (par.req.op != BlockOp::kFlush && par.req.bytes > 0) {
            SubmitData(p, c.done_ns);
            continue;
          }
        }
        Deliver(par.tag, par.submit_ns, c.done_ns);
        free_.push_back(p);
      }
    }
  }
}

DeviceStats Raid0Model::stats() const {
  DeviceStats s = stats_;
  for (const auto& m : members_) {
    DeviceStats ms = m->stats();
    s.cache_hits += ms.cache_hits;
    s.media_reads += ms.media_reads;
    s.media_writes += ms.media_writes;
    s.media_bytes_read += ms.media_bytes_read;
    s.media_bytes_written += ms.media_bytes_written;
    s.media_busy_ns = std::max(s.media_busy_ns, ms.media_busy_ns);
  }
  return s;
}

}  // namespace iorr::model
