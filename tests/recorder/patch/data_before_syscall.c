// A system call right after a function that ends with a byte of data (0xb8, the first byte of
// mov $imm32, %eax): decoded from the start of the function before it (as the planning decodes
// a function it finds out of step in the object's sweep), the syscall reads as bytes of other
// instructions. Before stop 16 it was left unrewritten and, once the process had switched to
// patched sites, its calls went unrecorded. Opens the file named by argv[1] three times.
#include <unistd.h>

__asm__(
    ".text\n"
    ".globl data_before\n.type data_before,@function\n"
    "data_before:\n.cfi_startproc\n"
    "  ret\n"
    "  .byte 0xb8\n"
    ".cfi_endproc\n.size data_before, .-data_before\n"
    ".globl openat_raw\n.type openat_raw,@function\n"
    "openat_raw:\n.cfi_startproc\n"  // openat(%rdi, %rsi, %rdx): the registers as the caller set
    "  movl $257, %eax\n"
    "  syscall\n"
    "  ret\n"
    "  nop; nop; nop; nop\n"
    ".cfi_endproc\n.size openat_raw, .-openat_raw\n");

long openat_raw(long dirfd, const char* path, long flags);

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int opened = 0;
  for (int i = 0; i < 3; ++i) {
    long fd = openat_raw(-100, argv[1], 0);
    if (fd >= 0) {
      ++opened;
      close((int)fd);
    }
  }
  return opened == 3 ? 0 : 1;
}
