// What the file-system models share (model/fs_model.h): the closed-loop clock against the
// device, files and fds as the trace names them, the page cache with its dirty thresholds and
// expiry, data placement, and the dispatch of calls to the hooks each model implements.
//
// Layout, the same for every model: an area of metadata blocks (inodes, 16 to a 4 KiB block,
// and directory blocks), a journal or log area, and file data allocated one file after the
// other from the data area. Models differ in when data gets its blocks (ext4 and xfs: at
// writeback; ext2 and ext3: at write), what a metadata change costs (a 4 KiB journal block, or
// the few hundred bytes xfs logs), and when and how it reaches the disk.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <memory_resource>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/fs/name_table.h"
#include "model/fs_model.h"
#include "traces/event.h"

namespace iorr::model::fs {

inline constexpr uint64_t kBlock = 4096;
inline constexpr uint64_t kSectorsPerBlock = kBlock / kSectorBytes;
inline constexpr uint64_t kLogStart = (1ull << 30) / kSectorBytes;   // journal / log: 1 GiB in
inline constexpr uint64_t kMetaStart = (4ull << 30) / kSectorBytes;  // inodes, directories
inline constexpr uint64_t kDataStart = (8ull << 30) / kSectorBytes;  // file data
inline constexpr uint64_t kMaxRequest = 512 << 10;                   // max_sectors_kb

// Metadata objects are named by block number in the metadata area.
using MetaBlock = uint64_t;

// ext2/3/4 block groups (128 MiB) and their block bitmaps, for the models that allocate by group.
inline constexpr uint64_t kGroupSectors = (128ull << 20) / kSectorBytes;
inline constexpr MetaBlock kBitmapBase = kMetaStart / kSectorsPerBlock + (1ull << 20);
inline MetaBlock BlockBitmapOf(uint64_t sector) {
  return kBitmapBase + (sector - kDataStart) / kGroupSectors;
}

struct File {
  uint64_t sector = 0;  // where its data starts, once placed
  bool placed = false;
  MetaBlock inode_block = 0;
  uint64_t ino = 0;  // the model's inode number (sequential)
  // Dirty pages in the page cache: disjoint, sorted [from, to) byte ranges, block-aligned.
  std::vector<std::pair<uint64_t, uint64_t>> dirty;
  uint64_t dirty_bytes = 0;  // their total
  bool is_dirty() const { return !dirty.empty(); }
  uint64_t dirty_end() const { return dirty.empty() ? 0 : dirty.back().second; }
  int64_t dirtied_ns = -1;  // when it became dirty (expiry), -1 clean
  uint64_t cached_to = 0;   // bytes from 0 in the page cache
  uint64_t size = 0;
  bool unlinked = false;
  // For the models: the journal transaction or log checkpoint that last changed the file, and
  // the last one that changed what fdatasync must force (size, allocation).
  uint64_t seq = 0, data_seq = 0;
  bool is_dir = false;   // made by mkdir, opened with O_DIRECTORY, or a parent of a name
  uint64_t charged = 0;  // the waited writeback that last charged its CPU (FsBase::WriteBackAll)
};

class FsBase {
  // An open file description: what an open made, shared by every fd that dup and fork make from
  // it, as in the kernel, so they share one file position (a shell's `> log` written by its
  // children in turn, a read of a file the parent began).
  struct Description {
    std::string name;        // the path it was opened by
    bool sync = false;       // O_SYNC/O_DSYNC
    bool append = false;     // O_APPEND: every write at the end
    File* file = nullptr;    // cache of files_[name]
    uint64_t names_gen = 0;  // valid while names_gen_ is this
    uint64_t pos = 0;        // the file position read, write and lseek move
  };
  struct Fd {
    std::shared_ptr<Description> d;
    bool cloexec = false;  // FD_CLOEXEC: gone after an execve (per fd, not per description)
  };
  using FdTable = std::unordered_map<int64_t, Fd>;
  // One per fd table the kernel would have: threads use their process's, and processes made
  // with CLONE_FILES share one. A fork's child gets a Files of its own whose entries it shares
  // with its parent's until either changes them (copy on write: N children of a process with N
  // fds keep N entries, not N^2, until they close or open one).
  struct Files {
    std::shared_ptr<const FdTable> fds;
  };

 public:
  FsBase(DeviceModel& dev, const FsModelOptions& o) : dev_(dev), o_(o) {}
  virtual ~FsBase() = default;
  FsBase(const FsBase&) = delete;
  FsBase& operator=(const FsBase&) = delete;

  Status Run(const std::string& trace_path, FsModelResult* r);

 protected:
  // ---- What a model implements.
  // A metadata change of `f` (inode: size, times, mode, links); `dir` is the directory block a
  // namespace change touches (0 for none).
  virtual void MetadataChanged(File& f, MetaBlock dir) = 0;
  // A write to f; `grew`: it extended the file (a size change, not only mtime).
  virtual void Written(File& f, bool grew) {
    (void)grew;
    MetadataChanged(f, 0);
  }
  // fsync/fdatasync of f (and O_SYNC/O_DSYNC writes, RWF_DSYNC). Returns after what the
  // program waits for.
  virtual void Fsync(File& f, bool datasync) = 0;
  // sync(2) and syncfs(2).
  virtual void SyncAll() = 0;
  // Called after every call at the current time: periodic commits, log workers.
  virtual void Tick() {}
  // Data blocks of f were just allocated (placed) for `bytes`: allocation metadata changed.
  virtual void Allocated(File& f) { (void)f; }
  // f was removed and its last name is gone: its blocks are freed.
  virtual void Freed(File& f, MetaBlock dir) { MetadataChanged(f, dir); }
  // A directory was removed; `own` is the block that held its entries (0 if it never had
  // one): freed, so a journal forgets it (jbd2_journal_forget, xfs buffer cancel).
  virtual void DirRemoved(MetaBlock own) { (void)own; }
  // Whether data gets its blocks at write (false: delayed allocation, at writeback).
  virtual bool AllocateAtWrite() const { return false; }
  // Whether copy_file_range inside the file system shares the source's blocks instead of copying
  // them (reflink: xfs as mkfs.xfs makes it since xfsprogs 5.1, btrfs): then nothing is read or
  // written but the destination's block map, and Cloned is called for it.
  virtual bool SharesExtents() const { return false; }
  // f's range now maps blocks of `from` (null: a file the trace does not show), which it now
  // shares: their block maps and the reference counts.
  virtual void Cloned(File& f, File* from) {
    (void)from;
    MetadataChanged(f, 0);
  }

  // ---- Services for the models.
  int64_t now() const { return t_; }
  const FsModelOptions& options() const { return o_; }
  FsModelResult& result() { return *r_; }
  // Issues a request now; returns its tag.
  uint64_t Submit(BlockOp op, uint64_t sector, uint64_t bytes, uint8_t flags, BlockKind kind);
  // Issues [sector, +bytes) as requests of at most kMaxRequest.
  void SubmitRange(BlockOp op, uint64_t sector, uint64_t bytes, uint8_t flags, BlockKind kind,
                   std::vector<uint64_t>* tags);
  // The program waits until these requests are done.
  void Wait(const std::vector<uint64_t>& tags);
  // Whether the request with this tag has completed (by now()).
  bool Done(uint64_t tag) const { return tag_state_[tag] == 0; }
  // Writes f's dirty data (allocating it first under delayed allocation).
  void WriteBack(File& f, std::vector<uint64_t>* tags);
  // waited: a sync waits for it, so writeback's own CPU per file (the --cpu table's
  // writeback_per_file) delays each file's requests.
  void WriteBackAll(std::vector<uint64_t>* tags, bool waited = false);
  // Writeback's own CPU for f, when the program waits for it (fsync, sync): advances the clock.
  void ChargeWriteBack(const File& f);
  // Writes the data that has been dirty longer than the expiry (the flusher's periodic pass).
  void WriteBackExpired();
  uint64_t dirty_bytes() const { return dirty_bytes_; }
  // The file `name` names, made if none (*existed, if given, says whether there was one).
  File& FileNamed(std::string_view name, bool* existed = nullptr);
  // The directory block a name's parent lives in (its parent marked a directory).
  MetaBlock DirBlock(std::string_view path);
  // The directory whose block is `dir` (null if DirBlock never named it).
  File* DirFile(MetaBlock dir) const {
    auto it = dir_files_.find(dir);
    return it == dir_files_.end() ? nullptr : it->second;
  }
  // Names in the directory whose block is `dir`, as far as the trace showed them created.
  uint64_t DirEntries(MetaBlock dir) const {
    auto it = dir_entries_.find(dir);
    return it == dir_entries_.end() ? 0 : it->second;
  }
  // The length of the last name in the path DirBlock was last asked about (the entry a
  // namespace change adds or removes; DirBlock is called right before the hook).
  uint64_t entry_name_bytes() const { return entry_name_bytes_; }
  // A fresh metadata block (allocation bitmaps and the like, per model).
  MetaBlock inode_block_of(uint64_t inode) const { return inode / 16; }

 private:
  void Advance(int64_t t);
  void Place(File& f, uint64_t bytes);
  bool Apply(const trace::Event& e);
  // Process bookkeeping every event gets, kept or not: cwd, fork's inherited fds and cwd.
  void Bookkeep(const trace::Event& e);
  // Whether the event counts under options().only.
  bool Keep(const trace::Event& e);
  // Whether the call-cost table prices e: a call of a category it has, on a path or on an fd
  // the model knows as opened (a read of a pipe, a tty or a socket keeps its recorded time: it
  // may have waited for another program). Asked before Apply, which may close the fd.
  bool TableCovers(const trace::Event& e) const;
  // Whether argument idx of e is an fd the model knows as opened (fds_: opened under --only).
  bool KnownFd(const trace::Event& e, int idx) const;
  // The absolute, lexically normalized path of argument idx (relative to its dirfd or the
  // process's cwd), into *out.
  void ResolveInto(const trace::Event& e, int idx, std::string* out);
  // The same, computed once per event for Keep and Apply (nothing changes between them): valid
  // until the next event.
  const std::string& Resolve(const trace::Event& e, int idx);
  // The file an open fd names: the file its name names now (cached until a name is removed
  // or renamed).
  File& FileOf(Description& d);
  // The fd `fd` of process `pid`, null if the model does not know it as open. (The entry is
  // read-only: it may be shared with other processes' tables. Its description is shared anyway.)
  const Fd* FindFd(int64_t pid, int64_t fd) const;
  // The fd table of process `pid` to change, made empty if it has none, and copied first if its
  // entries are shared with a fork's: `unshare`, a Files shared by CLONE_FILES is left to the
  // other processes (exec, close_range(CLOSE_RANGE_UNSHARE)). Null when copying would pass
  // kMaxLiveFds: the change is left out and counted.
  FdTable* Writable(int64_t pid, bool unshare = false);
  void SetFd(int64_t pid, int64_t fd, Fd entry);
  void EraseFd(int64_t pid, int64_t fd);
  // A table holding a copy of `from` (or empty), counted in live_fds_ while it lives.
  std::shared_ptr<FdTable> NewTable(const FdTable* from);
  void AddEntry(MetaBlock dir, int delta);
  void Throttle();
  // Data of f read at [off, end): what the page cache lacks comes from the disk, and the
  // program waits for it. True when it waited.
  bool ReadData(File& f, uint64_t off, uint64_t end);
  // Data written to f at [off, end): dirty in the page cache; `sync` (O_SYNC, O_DSYNC,
  // RWF_DSYNC): the program waits for it as for fdatasync. True when it waited.
  bool WriteData(File& f, uint64_t off, uint64_t end, bool sync);
  // n bytes of `from` at in_off put into `to` at out_off inside the kernel (copy_file_range,
  // sendfile, FICLONE): shared when `clone`, else read and written. Either may be null.
  bool CloneOrCopy(Description* from, Description* to, uint64_t in_off, uint64_t out_off,
                   uint64_t n, bool clone);
  void MakeDirty(File& f, uint64_t from, uint64_t to);
  void DropDirty(File& f);  // its dirty pages are discarded (truncate, unlink)
  // A completed request: no longer pending, no longer waited for.
  void Completed(uint64_t tag);

  DeviceModel& dev_;
  FsModelOptions o_;
  FsModelResult* r_ = nullptr;
  int64_t t_ = 0;
  int64_t next_flusher_ns_ = 0;
  uint64_t tag_ = 0;
  // By tag (tags are sequential from 1): kPending until it completes, kWaited while Wait waits
  // for it.
  static constexpr uint8_t kPending = 1, kWaited = 2;
  std::vector<uint8_t> tag_state_{0};
  uint64_t waiting_ = 0;          // tags that are kPending | kWaited
  std::vector<uint64_t> waited_;  // the tags Wait marked, to unmark
  // Resolve's per-event results, by argument position.
  std::string resolved_[trace::kMaxArgs];
  uint32_t resolved_valid_ = 0;    // bit idx: resolved_[idx] is this event's
  std::string normal_base_ = "/";  // a base ResolveInto found normal (it normalizes to itself)
  std::deque<File> storage_;       // stable addresses
  NameTable<File*> files_;         // by the name the trace last gave it
  uint64_t names_gen_ = 1;         // bumped when a name of files_ goes or names another file
  std::deque<File*> dirty_order_;  // in the order they became dirty (a file may be in it twice)
  uint64_t writebacks_waited_ = 0;
  // Entries in all tables (declared before tables_, whose tables count themselves out as they
  // go), and the most kept at once: a small trace of forks that each change a table of many fds
  // would otherwise keep forks x fds entries (4 Mi entries: about 300 MB).
  uint64_t live_fds_ = 0;
  static constexpr uint64_t kMaxLiveFds = 1ull << 22;
  // By process (pid: the thread group). Per process, so that a fork copies, and an exec or exit
  // scans, only that process's fds (one map of every process's fds made N forks of a process
  // with N fds cost N^2).
  std::unordered_map<int64_t, std::shared_ptr<Files>> tables_;
  NameTable<MetaBlock> dir_blocks_;
  std::unordered_map<MetaBlock, uint64_t> dir_entries_;
  std::unordered_map<MetaBlock, File*> dir_files_;
  std::unordered_map<int64_t, std::string> cwd_;  // by pid
  std::string initial_cwd_ = "/";
  uint64_t next_inode_ = 0;
  MetaBlock next_dir_block_ = 1 << 18;
  uint64_t entry_name_bytes_ = 0;
  uint64_t next_data_ = kDataStart;
  uint64_t dirty_bytes_ = 0;
};

}  // namespace iorr::model::fs
