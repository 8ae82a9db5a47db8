// See prepare.h. What each call says about the state before it, when the name is still unknown.
#include "replayer/prepare.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "replayer/paths.h"
#include "traces/format.h"

namespace iorr::replay {
namespace {

using trace::CallId;

char TypeOfMode(uint32_t m) {
  switch (m & S_IFMT) {
    case S_IFDIR: return 'd';
    case S_IFLNK: return 'l';
    case S_IFIFO: return 'p';
    case S_IFSOCK: return 's';
    case S_IFCHR: return 'c';
    case S_IFBLK: return 'b';
    default: return 'f';
  }
}

char TypeOfDirent(uint8_t t) {
  switch (t) {
    case 4: return 'd';
    case 10: return 'l';
    case 1: return 'p';
    case 12: return 's';
    case 2: return 'c';
    case 6: return 'b';
    case 8: return 'f';
    default: return '?';
  }
}

}  // namespace

InitialState::Proc& InitialState::P(uint32_t pid) {
  auto it = procs_.find(pid);
  if (it != procs_.end()) return it->second;
  Proc& p = procs_[pid];
  p.cwd = cwd0_;
  return p;
}

std::string InitialState::PathOf(Proc& p, int64_t dirfd, std::string_view path) {
  if (!path.empty() && path[0] == '/') return Normalize(path);
  std::string base = p.cwd;
  if (dirfd != AT_FDCWD) {
    auto it = p.fds.find(dirfd);
    base = it != p.fds.end() ? it->second->path : p.cwd;
  }
  return Normalize(Compose(base, path));
}

void InitialState::Spend(size_t bytes) {
  name_bytes_ += bytes;
  if (name_bytes_ > kMaxNameBytesTotal) overflowed_ = true;
}

bool InitialState::Admit(const std::string& n) {
  if (n.size() > kMaxName || overflowed_) return false;
  if (now_.count(n) != 0) return true;
  Spend(n.size() + 64);  // the key, and about what a node of each map costs
  return !overflowed_;
}

std::string InitialState::Origin(const std::string& n) const {
  if (origin_.empty()) return n;
  for (std::string_view at = n;; at = Parent(at)) {
    auto o = origin_.find(std::string(at));
    if (o != origin_.end())
      return o->second.empty() ? std::string() : o->second + n.substr(at.size());
    if (at.empty()) return n;
  }
}

void InitialState::AddInitial(const std::string& o, char type) {
  if (o.empty()) return;
  auto it = initial_.find(o);
  if (it != initial_.end()) {
    if (it->second.type == '?') it->second.type = type;
    return;
  }
  if (!Admit(o)) return;
  initial_[o].type = type;
  std::string parent(Parent(o));
  if (!parent.empty()) AddInitial(parent, 'd');
}

void InitialState::Exists(const std::string& n, char type) {
  if (n.empty()) return;  // the root
  auto it = now_.find(n);
  if (it == now_.end() && !origin_.empty()) {
    // A name under one the trace renamed (a directory that existed before the run, renamed,
    // then used under its new name) existed before under the old name (before: under the new
    // one, which prepare then made, so the rename failed EEXIST).
    std::string o = Origin(n);
    if (o != n) {
      if (!Admit(n)) return;
      now_[n] = Now::kExists;
      AddInitial(o, type);
      return;
    }
  }
  if (it == now_.end()) {
    if (!Admit(n)) return;
    now_[n] = Now::kExists;
    InitialEntry& e = initial_[n];
    if (e.type == '?') e.type = type;
    std::string parent(Parent(n));
    if (!parent.empty()) Exists(parent, 'd');
  } else if (it->second == Now::kExists) {
    auto in = initial_.find(Origin(n));
    if (in != initial_.end() && in->second.type == '?') in->second.type = type;
  }
}

void InitialState::Executable(const std::string& n) {
  std::string o = Origin(n);
  if (initial_.count(o) && executable_.insert(o).second) Spend(o.size() + 64);
}

void InitialState::MakeExecutable(const std::string& n) {
  // A file the program found executable (make and the shells look up commands with
  // access(X_OK)) but whose mode no snapshot gave: the default 0644 would fail the check. The
  // check follows symlinks (/usr/bin/gcc -> gcc-12 -> x86_64-linux-gnu-gcc-12): so does this,
  // through the targets the trace gave (by Finish, all of them), at most 40 times as the kernel.
  std::string at = n;
  for (int hops = 0; hops <= 40; ++hops) {
    auto in = initial_.find(at);
    if (in == initial_.end()) return;
    InitialEntry& x = in->second;
    if (x.type != 'l') {
      if (x.mode == 0) x.mode = 0755;
      return;
    }
    if (x.target.empty() || x.target == kUnknownTarget) return;
    at = Normalize(Compose(Parent(at), x.target));
  }
}

void InitialState::Absent(const std::string& n) {
  if (Known(n) || !Admit(n)) return;
  now_[n] = Now::kAbsent;
  // A name found missing inside another (ENOENT, not ENOTDIR) says the other is a directory, if
  // it is there at all: Finish makes a '?' so named one.
  // (Not a parent the trace has removed or renamed away by then: it may be a file later.)
  std::string_view parent = Parent(n);
  if (parent.empty()) return;
  auto p = now_.find(std::string(parent));
  if ((p == now_.end() || p->second == Now::kExists) && parents_of_absent_.emplace(parent).second)
    Spend(parent.size() + 64);
}

void InitialState::Created(const std::string& n, char type) {
  (void)type;
  if (!Admit(n)) return;
  if (!origin_.empty() && Origin(n) != n) {  // a new object, not the old one's
    origin_[n] = std::string();
    Spend(n.size() + 64);
  }
  std::string parent(Parent(n));
  if (!parent.empty()) Exists(parent, 'd');
  now_[n] = Now::kExists;
}

void InitialState::Removed(const std::string& n, bool gone) {
  if (InitialEntry* x = Initial(n); x && gone) x->removed = true;
  if (!origin_.empty() && Origin(n) != n) {  // no longer the old object
    origin_[n] = std::string();
    Spend(n.size() + 64);
  }
  if (Admit(n)) now_[n] = Now::kAbsent;
}

void InitialState::AtLeast(const std::string& n, uint64_t size) {
  // (On a symlink too: Finish gives the size to what it leads to.)
  auto it = initial_.find(Origin(n));
  if (it != initial_.end() &&
      (it->second.type == 'f' || it->second.type == '?' || it->second.type == 'l'))
    it->second.size = std::max(it->second.size, size);
}

InitialEntry* InitialState::Initial(const std::string& n) {
  auto it = initial_.find(Origin(n));
  return it == initial_.end() || it->second.removed ? nullptr : &it->second;
}

void InitialState::Followed(const std::string& n, bool dir) {
  if (InitialEntry* x = Initial(n)) {
    x->followed = true;
    x->dir_use |= dir;
  }
}

void InitialState::Written(const std::string& n) {
  if (InitialEntry* x = Initial(n)) x->written = true;
}

void InitialState::Observe(const trace::Event& e) {
  const trace::CallSpec& spec = e.spec();
  if (e.call == CallId::initial_state) {
    std::string n = Normalize(Compose(cwd0_, e.args[0].s));
    if (!Known(n) && Admit(n)) {
      InitialEntry& x = initial_[n];
      x.type = TypeOfMode(static_cast<uint32_t>(e.args[1].i));
      x.mode = static_cast<uint32_t>(e.args[1].i) & 07777;
      x.sure = true;
      x.size = static_cast<uint64_t>(std::max<int64_t>(0, e.args[2].i));
      if (!e.args[3].null) {
        x.target = std::string(e.args[3].s);
        Spend(x.target.size());
      }
      now_[n] = Now::kExists;
    }
    return;
  }
  // An empty path names nothing (ENOENT) or, with AT_EMPTY_PATH, the dirfd's own file: it
  // says nothing of a name (composed with the cwd, a failed stat("") made the cwd absent).
  for (int i = 0; i < spec.nargs; ++i)
    if (spec.args[i].kind == trace::ArgKind::kPath && !e.args[i].null && e.args[i].s.empty())
      return;
  Proc& p = P(e.pid);
  bool ok = !e.failed();
  int err = e.err();
  auto path_arg = [&](int dir_idx, int path_idx) {
    int64_t dirfd = dir_idx < 0 ? AT_FDCWD : e.args[dir_idx].i;
    return PathOf(p, dirfd, e.args[path_idx].null ? std::string_view() : e.args[path_idx].s);
  };
  auto fd = [&](int idx) -> Fd* {
    auto it = p.fds.find(e.args[idx].i);
    return it == p.fds.end() ? nullptr : it->second.get();
  };
  switch (e.call) {
    case CallId::open:
    case CallId::openat:
    case CallId::creat:
    case CallId::openat2: {
      bool at = e.call == CallId::openat || e.call == CallId::openat2;
      std::string n = at ? path_arg(0, 1) : path_arg(-1, 0);
      int64_t flags = e.call == CallId::creat ? (O_CREAT | O_WRONLY | O_TRUNC)
                                               : e.args[at ? 2 : 1].i;
      if (ok) {
        if (flags & O_CREAT) {
          if (!Known(n) && !(flags & O_EXCL)) Absent(n);  // most likely made here
          Created(n, 'f');
        } else {
          Exists(n, (flags & O_DIRECTORY) ? 'd' : '?');
          if (!(flags & O_NOFOLLOW)) Followed(n, (flags & O_DIRECTORY) != 0);
        }
        if (flags & O_TRUNC) Written(n);
        auto f = std::make_shared<Fd>();
        f->path = n;
        p.fds[e.ret] = f;
      } else if (err == ENOENT) {
        Absent(n);
      }
      break;
    }
    case CallId::close:
      p.fds.erase(e.args[0].i);
      break;
    case CallId::dup:
    case CallId::dup2:
    case CallId::dup3:
      if (ok) {
        auto it = p.fds.find(e.args[0].i);
        if (it != p.fds.end())
          p.fds[e.ret] = it->second;
        else if (e.ret != e.args[0].i)
          p.fds.erase(e.ret);  // a copy of an fd the trace did not open
      }
      break;
    case CallId::fcntl:
      if (ok && (e.args[1].i == F_DUPFD || e.args[1].i == F_DUPFD_CLOEXEC)) {
        auto it = p.fds.find(e.args[0].i);
        if (it != p.fds.end())
          p.fds[e.ret] = it->second;
        else
          p.fds.erase(e.ret);
      }
      break;
    case CallId::read:
    case CallId::readv:
      if (Fd* f = fd(0); f && ok) {
        f->offset += e.ret;
        AtLeast(f->path, static_cast<uint64_t>(f->offset));
      }
      break;
    case CallId::pread64:
    case CallId::preadv:
    case CallId::preadv2:
      if (Fd* f = fd(0); f && ok && e.ret > 0)
        AtLeast(f->path, static_cast<uint64_t>(e.args[3].i + e.ret));
      break;
    case CallId::write:
    case CallId::writev:
      if (Fd* f = fd(0); f && ok) {
        f->offset += e.ret;
        if (e.ret > 0) Written(f->path);
      }
      break;
    case CallId::pwrite64:
    case CallId::pwritev:
    case CallId::pwritev2:
    case CallId::ftruncate:
    case CallId::fallocate:
      if (Fd* f = fd(0); f && ok) Written(f->path);
      break;
    case CallId::lseek:
      if (Fd* f = fd(0); f && ok) {
        f->offset = e.ret;
        // Where the file ended then (SEEK_END: the result less the offset; SEEK_DATA: data at
        // the result; SEEK_HOLE: a hole there, at the latest at the end), unless the trace had
        // changed it by then: java reads 952 bytes of its 13.5 MB classes.jsa after a SEEK_END,
        // and the file was prepared with the 952 bytes.
        InitialEntry* x = Initial(f->path);
        int64_t whence = e.args[2].i, end = -1;
        if (whence == SEEK_END && !__builtin_sub_overflow(e.ret, e.args[1].i, &end)) {
        } else if (whence == SEEK_DATA) {
          end = e.ret + 1;
        } else if (whence == SEEK_HOLE) {
          end = e.ret;
        }
        if (x && !x->written && end > 0) AtLeast(f->path, static_cast<uint64_t>(end));
      }
      break;
    case CallId::copy_file_range:
    case CallId::sendfile: {
      // The source held at least what was copied from it; positions move as for read/write.
      bool cfr = e.call == CallId::copy_file_range;
      int64_t in_at = e.args[cfr ? 1 : 2].i, out_at = cfr ? e.args[3].i : -1;
      if (!ok || e.ret <= 0) break;
      if (Fd* f = fd(cfr ? 0 : 1)) {
        int64_t from = in_at == -1 ? f->offset : in_at;
        if (in_at == -1) f->offset += e.ret;
        int64_t end = 0;
        if (from >= 0 && !__builtin_add_overflow(from, e.ret, &end))
          AtLeast(f->path, static_cast<uint64_t>(end));
      }
      if (Fd* f = fd(cfr ? 2 : 0); f && out_at == -1) f->offset += e.ret;
      break;
    }
    case CallId::ioctl:
      // A FICLONE that succeeded gave its destination the whole source: the source held that
      // many bytes (format 4 says how many; -1 before). cp -a on xfs or btrfs never reads its
      // sources, so this is all the trace says of their sizes.
      if (ok && e.IsFiclone() && e.args[3].i > 0)
        if (Fd* f = fd(2)) AtLeast(f->path, static_cast<uint64_t>(e.args[3].i));
      break;
    case CallId::dirents:
      if (Fd* f = fd(0)) {
        trace::ForEachListedName(e.args[1].s, [&](std::string_view name, uint8_t type) {
          Exists(Normalize(Compose(f->path, name)), TypeOfDirent(type));
        });
      }
      break;
    case CallId::stat:
    case CallId::lstat:
    case CallId::access:
    case CallId::statfs:
    case CallId::getxattr:
    case CallId::lgetxattr:
    case CallId::listxattr:
    case CallId::llistxattr:
    case CallId::chmod:
    case CallId::chown:
    case CallId::lchown:
    case CallId::truncate:
    case CallId::setxattr:
    case CallId::lsetxattr:
    case CallId::removexattr:
    case CallId::lremovexattr:
    case CallId::utimes:
    case CallId::utime: {
      std::string n = path_arg(-1, 0);
      if (ok)
        Exists(n, e.call == CallId::truncate ? 'f' : '?');
      else if (err == ENOENT)
        Absent(n);
      if (ok && e.call != CallId::lstat && e.call != CallId::lgetxattr &&
          e.call != CallId::llistxattr && e.call != CallId::lchown && e.call != CallId::lsetxattr &&
          e.call != CallId::lremovexattr)
        Followed(n);
      if (ok && e.call == CallId::truncate) Written(n);
      if (ok && e.call == CallId::access && (e.args[1].i & X_OK)) Executable(n);
      break;
    }
    case CallId::newfstatat:
    case CallId::statx:
    case CallId::faccessat:
    case CallId::faccessat2:
    case CallId::fchmodat:
    case CallId::fchownat:
    case CallId::utimensat: {
      if (e.args[1].null || e.args[1].s.empty()) break;  // on the fd itself
      std::string n = path_arg(0, 1);
      if (ok)
        Exists(n, '?');
      else if (err == ENOENT)
        Absent(n);
      int64_t at_flags = e.call == CallId::newfstatat   ? e.args[3].i
                         : e.call == CallId::statx      ? e.args[2].i
                         : e.call == CallId::fchownat   ? e.args[4].i
                         : e.call == CallId::utimensat  ? e.args[3].i
                         : e.call == CallId::faccessat2 ? e.args[3].i
                                                        : 0;
      if (ok && !(at_flags & AT_SYMLINK_NOFOLLOW)) Followed(n);
      if (ok && (e.call == CallId::faccessat || e.call == CallId::faccessat2) &&
          (e.args[2].i & X_OK))
        Executable(n);
      break;
    }
    case CallId::readlink:
    case CallId::readlinkat: {
      bool at = e.call == CallId::readlinkat;
      std::string n = at ? path_arg(0, 1) : path_arg(-1, 0);
      if (ok) {
        Exists(n, 'l');
        // A symlink, whatever was inferred before (a link to a directory traversed first, as
        // ld.so opens /lib/... and cmake readlinks /lib later, was made a directory: readlink
        // failed EINVAL), unless the snapshot said otherwise or the name was replaced since.
        if (InitialEntry* x = Initial(n); x && !x->sure) x->type = 'l';
        auto it = initial_.find(Origin(n));
        if (it != initial_.end() && it->second.type == 'l') {
          // The target the call read (format version 3 on), so that what follows the link
          // finds what it found; else (and for one no symlink can have) a placeholder. A
          // target that filled the buffer may have been cut (Go and Rust probe with a small
          // buffer first): a longer one read later replaces it.
          InitialEntry& x = it->second;
          const trace::Arg& t = e.args[at ? 2 : 1];
          bool usable = !t.null && !t.s.empty() && t.s.size() <= 4095 &&
                        t.s.find('\0') == std::string_view::npos;
          bool replace = x.target.empty() || (usable && x.target == kUnknownTarget) ||
                         (usable && x.target_cut && t.s.size() > x.target.size());
          if (replace) {
            x.target = usable ? std::string(t.s) : kUnknownTarget;
            x.target_cut = usable && e.ret >= e.args[at ? 3 : 2].i;
            Spend(x.target.size());
          }
        }
      } else if (err == EINVAL && e.args[at ? 3 : 2].i > 0) {
        Exists(n, '?');  // there, and not a symlink (a buffer size of 0 is refused unlooked)
      } else if (err == ENOENT) {
        Absent(n);
      }
      break;
    }
    case CallId::inotify_add_watch: {
      if (e.args[1].null) break;
      std::string n = path_arg(-1, 1);
      if (ok) {
        Exists(n, (e.args[2].i & IN_ONLYDIR) ? 'd' : '?');
        if (!(e.args[2].i & IN_DONT_FOLLOW)) Followed(n);
      } else if (err == ENOENT) {
        Absent(n);
      }
      break;
    }
    case CallId::bind: {  // an AF_UNIX pathname address: a socket node made there
      if (e.args[1].null) break;
      std::string n = path_arg(-1, 1);
      if (ok)
        Created(n, 's');
      else if (err == EADDRINUSE)
        Exists(n, '?');
      break;
    }
    case CallId::mkdir:
    case CallId::mkdirat: {
      std::string n = e.call == CallId::mkdir ? path_arg(-1, 0) : path_arg(0, 1);
      if (ok)
        Created(n, 'd');
      else if (err == EEXIST)
        Exists(n, '?');
      break;
    }
    case CallId::unlink:
    case CallId::rmdir:
    case CallId::unlinkat: {
      std::string n = e.call == CallId::unlinkat ? path_arg(0, 1) : path_arg(-1, 0);
      bool dir = e.call == CallId::rmdir ||
                 (e.call == CallId::unlinkat && (e.args[2].i & AT_REMOVEDIR));
      if (ok) {
        Exists(n, dir ? 'd' : 'f');
        Removed(n);
      } else if (err == ENOENT) {
        Absent(n);
      }
      break;
    }
    case CallId::rename:
    case CallId::renameat:
    case CallId::renameat2: {
      bool at = e.call != CallId::rename;
      std::string a = at ? path_arg(0, 1) : path_arg(-1, 0);
      std::string b = at ? path_arg(2, 3) : path_arg(-1, 1);
      if (ok) {
        // b is, from now on, what a was: for a name that existed before the run, the calls
        // on b (and on names under it) say what that name held (before: a renamed file read
        // under its new name was made empty under its old one).
        Exists(a, '?');
        std::string oa = Origin(a);
        bool was_initial = Initial(a) != nullptr;
        Removed(a, /*gone=*/false);
        Created(b, '?');
        if (was_initial || !origin_.empty()) {
          Spend(a.size() + b.size() + oa.size() + 128);
          origin_[b] = was_initial ? oa : std::string();
          origin_[a] = std::string();
        }
      } else if (err == ENOENT) {
        Absent(a);
      }
      break;
    }
    case CallId::link:
    case CallId::linkat: {
      bool at = e.call == CallId::linkat;
      std::string a = at ? path_arg(0, 1) : path_arg(-1, 0);
      std::string b = at ? path_arg(2, 3) : path_arg(-1, 1);
      if (ok) {
        Exists(a, 'f');
        Created(b, 'f');
      }
      break;
    }
    case CallId::symlink:
    case CallId::symlinkat:
    case CallId::mknod:
    case CallId::mknodat: {
      std::string n = e.call == CallId::symlink  ? path_arg(-1, 1)
                      : e.call == CallId::symlinkat ? path_arg(1, 2)
                      : e.call == CallId::mknod     ? path_arg(-1, 0)
                                                    : path_arg(0, 1);
      if (ok) Created(n, 'l');
      break;
    }
    case CallId::chdir:
      if (ok) {
        std::string n = path_arg(-1, 0);
        Exists(n, 'd');
        Followed(n, true);
        if (n.size() <= kMaxName) p.cwd = n;
      }
      break;
    case CallId::fchdir:
      if (ok) {
        if (Fd* f = fd(0)) p.cwd = f->path;
      }
      break;
    case CallId::umask:
      if (first_umask_ < 0 && e.ret >= 0) first_umask_ = e.ret & 0777;
      break;
    case CallId::clone:
    case CallId::clone3:
    case CallId::fork:
    case CallId::vfork:
      if (ok && e.ret > 0 && !(spec.nargs > 0 && (e.args[0].i & 0x00010000))) {
        Proc copy = p;  // the child starts with the parent's cwd and fds
        procs_[static_cast<uint32_t>(e.ret)] = std::move(copy);
      }
      break;
    default:
      break;
  }
}

bool InitialState::HasChild(const std::string& n) const {
  std::string prefix = n + "/";
  auto child = initial_.lower_bound(prefix);
  return child != initial_.end() && child->first.compare(0, prefix.size(), prefix) == 0;
}

void InitialState::ResolveLinks() {
  for (auto it = initial_.begin(); it != initial_.end(); ++it) {
    InitialEntry& x = it->second;
    if (x.type != 'l') continue;
    bool as_dir = x.dir_use || HasChild(it->first);
    if (x.target.empty()) {
      // Seen only in a listing (DT_LNK), target unknown: a dangling placeholder would fail
      // every stat and open through it (python's sitecustomize.py, /etc/localtime). What the
      // program followed it to is made in its place (it reads no target, it lists a type).
      if (as_dir || x.followed) x.type = as_dir ? 'd' : 'f';
      continue;
    }
    if (x.target == kUnknownTarget || !(x.followed || as_dir || x.size > 0)) continue;
    // Followed or read through: what it leads to exists and holds the bytes read (credited to
    // the link's name: before, the target was made empty and reads through the link gave 0).
    // The target is the trace's, untrusted: it is only a name under the root here
    // (Normalize stops ".." at the root; an absolute target is from the root), made as any
    // other, inside the root.
    std::string at = it->first;
    const InitialEntry* link = &x;
    for (int hops = 0; hops < 40 && link != nullptr; ++hops) {
      at = Normalize(Compose(Parent(at), link->target));
      auto t = initial_.find(at);
      link = t != initial_.end() && t->second.type == 'l' && !t->second.target.empty() &&
                     t->second.target != kUnknownTarget
                 ? &t->second
                 : nullptr;
    }
    if (link != nullptr || at.empty() || at == it->first) continue;  // a loop, or the root
    auto t = initial_.find(at);
    if (t != initial_.end()) {
      InitialEntry& y = t->second;
      if (y.type == 'f' || y.type == '?') y.size = std::max(y.size, x.size);
      if (as_dir && y.type == '?') y.type = 'd';
    } else if (!Known(at) && Admit(at)) {  // (not made nor found missing by the trace)
      InitialEntry& y = initial_[at];
      y.type = as_dir ? 'd' : 'f';
      y.size = as_dir ? 0 : x.size;
    }
  }
}

const std::map<std::string, InitialEntry>& InitialState::Finish() {
  ResolveLinks();
  for (auto it = initial_.begin(); it != initial_.end(); ++it) {
    if (it->second.type != '?') continue;
    std::string prefix = it->first + "/";
    auto child = initial_.lower_bound(prefix);
    bool has_child = child != initial_.end() && child->first.compare(0, prefix.size(), prefix) == 0;
    it->second.type = has_child || parents_of_absent_.count(it->first) ? 'd' : 'f';
  }
  for (const std::string& n : executable_) MakeExecutable(n);
  return initial_;
}

}  // namespace iorr::replay
