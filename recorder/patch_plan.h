// Finding the system call sites of loaded code and planning their rewriting (patch.cc does the
// rewriting). Shared by the library and by `iorr record`, which plans libc's and the loader's
// sites in its own process while the program starts (PrePlan), so that the program finds them
// in the recording's shared memory instead of decoding them. No allocation; the planning state
// is static: one thread at a time.
#pragma once

#include <link.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "recorder/protocol.h"

namespace iorr::recorder::patch {

// One loaded object's code.
struct Object {
  const char* name = nullptr;
  uintptr_t lo = 0, hi = 0;  // its executable segments' span
  struct Seg {
    uintptr_t lo, hi;
  } seg[4];
  int nseg = 0;
  const uint8_t* eh_hdr = nullptr;    // .eh_frame_hdr, or nullptr
  uintptr_t map_lo = 0, map_hi = 0;   // all its segments (for reading FDEs)
  const uint8_t* build_id = nullptr;  // NT_GNU_BUILD_ID's bytes, or nullptr
  uint32_t build_id_len = 0;
};

// How one site is rewritten.
struct Site {
  uintptr_t at;        // the syscall instruction
  uintptr_t from;      // first byte overwritten (the jump goes here)
  uintptr_t to;        // first byte after what the stub stands for (it jumps back here)
  uint8_t before[30];  // the instructions copied before the call, if any
  uint8_t nbefore;
  uint8_t after[30];  // the instructions copied after it, if any
  uint8_t nafter;
  bool keeps_syscall;  // the jump fits in the instructions before: the syscall's bytes stay
};

constexpr int kMaxSites = 1024;
constexpr int kMaxBranches = 4096;

struct Plan {
  Site site[kMaxSites];
  int nsite = 0;
  int skipped = 0;   // sites of calls of no interest
  size_t swept = 0;  // bytes of code decoded whole (objects with a candidate)
  bool ok = true;    // false: a site of interest cannot be rewritten, or a decoding failed
  const char* why = nullptr;
  uintptr_t why_at = 0;
  // Empty again. (Not cleared as a whole: its pages are touched only as sites fill it.)
  void Reset() {
    nsite = 0;
    skipped = 0;
    swept = 0;
    ok = true;
    why = nullptr;
  }
};

struct Objects {
  Object o[64];
  int n = 0;
  bool overflow = false;
  uintptr_t skip = 0;  // an address inside an object left out (the library's own)
};

// dl_iterate_phdr's callback: collects the objects (data: Objects) with executable segments,
// but the vDSO and the one holding Objects::skip.
int Collect(struct dl_phdr_info* info, size_t, void* data);
// Decodes one object: its sites are appended to plan. False (and why) when the process must
// keep dispatch because of it. sweep_first: sweep the whole object at its first candidate, even
// one that its function's own decoding shows to be bytes of another instruction (the way before
// stop 16; tests compare the two).
bool PlanObject(const Object& o, Plan* plan, char* why, size_t why_len, bool sweep_first = false);
// An object's identity for the cache: its build ID and layout. False: not to be cached.
bool Identity(const Object& o, PatchObject* id);
// Offers a decoded object to the other processes of the recording.
void Publish(SharedState* sh, const PatchObject& id, const Object& o, const Plan& plan, int first,
             int count, int skipped, bool patchable, const char* why);
// A published decoding of the object, or nullptr; one being filled is waited for a while.
const PatchObject* Lookup(SharedState* sh, const PatchObject& id);
// The sites of a published decoding, as a plan for this process's copy of the object. False
// when a site does not match this copy's bytes (then the object is decoded here).
bool FromCache(const PatchCache& c, const PatchObject& e, const Object& o, Plan* plan);
// Whether a finished decoding of the object is in the shared state.
bool Published(const SharedState* sh, const PatchObject& id);
// In `iorr record`: decodes libc and the loader as this process has them and publishes them
// (those not published yet);
// gives up soon after *stop is set (the program has ended).
void PrePlan(SharedState* sh, const std::atomic<bool>* stop);

}  // namespace iorr::recorder::patch
