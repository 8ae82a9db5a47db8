// x86-64 instruction lengths: see x86.h. The tables follow the opcode maps of the Intel SDM
// (volume 2, appendix A) for 64-bit mode; tests/recorder/x86_decode_test.cc checks every
// instruction boundary of the system's libraries against objdump.
#include "recorder/x86.h"

namespace iorr::recorder::x86 {
namespace {

// Immediate kinds.
enum Imm : uint8_t {
  kNone = 0,
  kIb = 1,     // 1 byte
  kIw = 2,     // 2 bytes
  kIz = 3,     // 2 with 66, else 4
  kIv = 4,     // 8 with REX.W, 2 with 66, else 4 (mov r, imm)
  kIwIb = 5,   // enter: 3 bytes
  kMoffs = 6,  // 8, or 4 with 67
  kRel8 = 7,
  kRel32 = 8,
  kGroup3b = 9,   // f6: ib when ModRM.reg is 0 or 1 (test)
  kGroup3z = 10,  // f7: iz when ModRM.reg is 0 or 1
};

struct OneByte {
  bool modrm;
  Imm imm;
  bool invalid;
};

constexpr OneByte MakeOne(int op) {
  OneByte o{false, kNone, false};
  if (op < 0x40) {
    int lo = op & 7;
    if (lo < 4) o.modrm = true;
    if (lo == 4) o.imm = kIb;
    if (lo == 5) o.imm = kIz;
    if (lo >= 6) o.invalid = op != 0x0f;  // push/pop seg, daa...: invalid in 64-bit mode
    return o;
  }
  if (op >= 0x50 && op <= 0x5f) return o;
  switch (op) {
    case 0x60:
    case 0x61:
    case 0x62:
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0x9a:
    case 0xea:
    case 0x82:
    case 0xce:
    case 0xc4:
    case 0xc5:
      o.invalid = true;  // (62, c4, c5 are EVEX/VEX and handled before the table)
      return o;
    case 0x63:
      o.modrm = true;
      return o;
    case 0x68:
      o.imm = kIz;
      return o;
    case 0x69:
      o.modrm = true;
      o.imm = kIz;
      return o;
    case 0x6a:
      o.imm = kIb;
      return o;
    case 0x6b:
      o.modrm = true;
      o.imm = kIb;
      return o;
    case 0x80:
    case 0x83:
    case 0xc0:
    case 0xc1:
    case 0xc6:
      o.modrm = true;
      o.imm = kIb;
      return o;
    case 0x81:
    case 0xc7:
      o.modrm = true;
      o.imm = kIz;
      return o;
    case 0xa0:
    case 0xa1:
    case 0xa2:
    case 0xa3:
      o.imm = kMoffs;
      return o;
    case 0xa8:
      o.imm = kIb;
      return o;
    case 0xa9:
      o.imm = kIz;
      return o;
    case 0xc2:
    case 0xca:
      o.imm = kIw;
      return o;
    case 0xc8:
      o.imm = kIwIb;
      return o;
    case 0xcd:
      o.imm = kIb;
      return o;
    case 0xe0:
    case 0xe1:
    case 0xe2:
    case 0xe3:
    case 0xeb:
      o.imm = kRel8;
      return o;
    case 0xe4:
    case 0xe5:
    case 0xe6:
    case 0xe7:
      o.imm = kIb;
      return o;
    case 0xe8:
    case 0xe9:
      o.imm = kRel32;
      return o;
    case 0xf6:
      o.modrm = true;
      o.imm = kGroup3b;
      return o;
    case 0xf7:
      o.modrm = true;
      o.imm = kGroup3z;
      return o;
    case 0xfe:
    case 0xff:
      o.modrm = true;
      return o;
    default:
      break;
  }
  if (op >= 0x70 && op <= 0x7f)
    o.imm = kRel8;
  else if (op >= 0x84 && op <= 0x8f)
    o.modrm = true;
  else if (op >= 0xb0 && op <= 0xb7)
    o.imm = kIb;
  else if (op >= 0xb8 && op <= 0xbf)
    o.imm = kIv;
  else if (op >= 0xd0 && op <= 0xd3)
    o.modrm = true;
  else if (op >= 0xd8 && op <= 0xdf)
    o.modrm = true;  // x87
  return o;
}

struct OneByteTable {
  OneByte e[256];
};
constexpr OneByteTable MakeOneTable() {
  OneByteTable t{};
  for (int i = 0; i < 256; ++i) t.e[i] = MakeOne(i);
  return t;
}
constexpr OneByteTable kOne = MakeOneTable();

// The 0f map (legacy, VEX map 1, EVEX map 1).
struct TwoByte {
  bool modrm;
  Imm imm;
  bool invalid;
};
constexpr TwoByte MakeTwo(int op) {
  TwoByte o{true, kNone, false};
  switch (op) {
    case 0x04:
    case 0x0a:
    case 0x0c:
    case 0x24:
    case 0x25:
    case 0x26:
    case 0x27:
    case 0x36:
    case 0x39:
    case 0x3b:
    case 0x3c:
    case 0x3d:
    case 0x3e:
    case 0x3f:
    case 0x7a:
    case 0x7b:
    case 0xa6:
    case 0xa7:
      o.invalid = true;
      o.modrm = false;
      return o;
    case 0x05:
    case 0x06:
    case 0x07:
    case 0x08:
    case 0x09:
    case 0x0b:
    case 0x0e:
    case 0x30:
    case 0x31:
    case 0x32:
    case 0x33:
    case 0x34:
    case 0x35:
    case 0x37:
    case 0x77:
    case 0xa0:
    case 0xa1:
    case 0xa2:
    case 0xa8:
    case 0xa9:
    case 0xaa:
      o.modrm = false;
      return o;
    case 0x0f:
      o.imm = kIb;
      return o;  // 3DNow!: ModRM then an opcode byte
    case 0x70:
    case 0x71:
    case 0x72:
    case 0x73:
    case 0xa4:
    case 0xac:
    case 0xba:
    case 0xc2:
    case 0xc4:
    case 0xc5:
    case 0xc6:
      o.imm = kIb;
      return o;
    default:
      break;
  }
  if (op >= 0x80 && op <= 0x8f) {
    o.modrm = false;
    o.imm = kRel32;
  } else if (op >= 0xc8 && op <= 0xcf) {
    o.modrm = false;  // bswap
  }
  return o;
}
struct TwoByteTable {
  TwoByte e[256];
};
constexpr TwoByteTable MakeTwoTable() {
  TwoByteTable t{};
  for (int i = 0; i < 256; ++i) t.e[i] = MakeTwo(i);
  return t;
}
constexpr TwoByteTable kTwo = MakeTwoTable();

// Length of ModRM, SIB and displacement starting at p; -1 if it does not fit.
int ModrmLength(const uint8_t* p, size_t n, bool* rip) {
  if (n < 1) return -1;
  int modrm = p[0];
  int mod = modrm >> 6, rm = modrm & 7;
  int len = 1;
  if (mod == 3) return len;
  if (rm == 4) {
    if (n < 2) return -1;
    int base = p[1] & 7;
    len = 2;
    if (mod == 0 && base == 5) len += 4;
  } else if (mod == 0 && rm == 5) {
    *rip = true;
    len += 4;
  }
  if (mod == 1) len += 1;
  if (mod == 2) len += 4;
  return len;
}

int64_t ReadSigned(const uint8_t* p, int size) {
  if (size == 1) return static_cast<int8_t>(p[0]);
  uint32_t v = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
               static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
  return static_cast<int32_t>(v);
}

}  // namespace

Insn Decode(const uint8_t* p, size_t n) {
  Insn in;
  size_t i = 0;
  bool opsize = false, adsize = false, rex_w = false, any_prefix = false;
  // Legacy prefixes and REX (a REX counts only right before the opcode).
  for (;;) {
    if (i >= n || i >= 15) return in;
    uint8_t b = p[i];
    if (b == 0x66)
      opsize = true;
    else if (b == 0x67)
      adsize = true;
    else if (b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 || b == 0x3e ||
             b == 0x26 || b == 0x64 || b == 0x65) {
    } else if (b >= 0x40 && b <= 0x4f) {
      if (i + 1 < n && p[i + 1] >= 0x40 && p[i + 1] <= 0x4f) return in;  // two REX: give up
      rex_w = (b & 8) != 0;
      ++i;
      any_prefix = true;
      break;
    } else {
      break;
    }
    rex_w = false;
    any_prefix = true;
    ++i;
  }
  if (i >= n) return in;
  uint8_t op = p[i++];
  int map = 0;  // 0: one byte, 1: 0f, 2: 0f38, 3: 0f3a
  bool vex = false;
  if (op == 0xc4 || op == 0xc5 || op == 0x62) {
    // VEX (c4: 3 bytes, c5: 2 bytes) and EVEX (62: 4 bytes), always so in 64-bit mode.
    size_t extra = op == 0xc5 ? 1 : op == 0xc4 ? 2 : 3;
    if (i + extra >= n) return in;
    map = op == 0xc5 ? 1 : (p[i] & (op == 0x62 ? 7 : 0x1f));
    i += extra;
    op = p[i++];
    vex = true;
    if (map < 1 || map > 6 || map == 4) return in;
  } else if (op == 0x0f) {
    if (i >= n) return in;
    op = p[i++];
    map = 1;
    if (op == 0x38 || op == 0x3a) {
      map = op == 0x38 ? 2 : 3;
      if (i >= n) return in;
      op = p[i++];
    }
  } else if (op == 0x8f && i < n && ((p[i] >> 3) & 7) != 0) {
    return in;  // AMD XOP: not used by the code this reads
  }
  bool modrm = false;
  Imm imm = kNone;
  if (map == 0) {
    const OneByte& e = kOne.e[op];
    if (e.invalid) return in;
    modrm = e.modrm;
    imm = e.imm;
  } else if (map == 1) {
    const TwoByte& e = kTwo.e[op];
    if (e.invalid && !vex) return in;
    modrm = e.modrm || vex;
    imm = e.imm;
    if (vex && op == 0x77) modrm = false;     // vzeroupper, vzeroall
    if (vex && e.imm == kRel32) imm = kNone;  // (VEX 0f 8x are mask instructions: kmov...)
    if (vex && op == 0x0f) imm = kNone;
  } else if (map == 2 || map == 5 || map == 6) {
    modrm = true;
  } else {  // map 3
    modrm = true;
    imm = kIb;
  }
  int modrm_reg = 0;
  if (modrm) {
    if (i >= n) return in;
    modrm_reg = (p[i] >> 3) & 7;
    int len = ModrmLength(p + i, n - i, &in.rip_relative);
    if (len < 0) return in;
    i += static_cast<size_t>(len);
  }
  int imm_size = 0;
  switch (imm) {
    case kNone:
      break;
    case kIb:
      imm_size = 1;
      break;
    case kIw:
      imm_size = 2;
      break;
    case kIz:
      imm_size = opsize ? 2 : 4;
      break;
    case kIv:
      imm_size = rex_w ? 8 : opsize ? 2 : 4;
      break;
    case kIwIb:
      imm_size = 3;
      break;
    case kMoffs:
      imm_size = adsize ? 4 : 8;
      break;
    case kRel8:
      imm_size = 1;
      in.branch = true;
      break;
    case kRel32:
      imm_size = 4;
      in.branch = true;
      break;
    case kGroup3b:
      imm_size = modrm_reg < 2 ? 1 : 0;
      break;
    case kGroup3z:
      imm_size = modrm_reg < 2 ? (opsize ? 2 : 4) : 0;
      break;
  }
  if (i + static_cast<size_t>(imm_size) > n) return in;
  if (in.branch) in.rel = ReadSigned(p + i, imm_size);
  if (map == 0 && op == 0xb8 && !any_prefix) {
    in.mov_eax_imm = true;
    in.imm = static_cast<uint32_t>(ReadSigned(p + i, 4));
  }
  i += static_cast<size_t>(imm_size);
  in.length = static_cast<int>(i);
  if (map == 1 && !vex && op == 0x05) in.syscall = true;
  if (map == 0 &&
      (op == 0xc3 || op == 0xc2 || op == 0xe9 || op == 0xeb || op == 0xf4 || op == 0xcc))
    in.ends_flow = true;
  if (map == 0 && op == 0xff && (modrm_reg == 4 || modrm_reg == 5)) in.ends_flow = true;
  if (map == 1 && !vex && op == 0x0b) in.ends_flow = true;
  return in;
}

}  // namespace iorr::recorder::x86
