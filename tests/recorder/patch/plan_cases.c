// Code for patch_plan_test: objects whose 0f 05 bytes the planning must judge as the sweep of
// the whole object would. Mapped by the test, never run. Built twice: PLAN_CASE 1 and 3 (case 2
// is data_before_syscall.c, the behaviour test's program).
#if PLAN_CASE == 1
__asm__(
    ".text\n"
    // Bytes 0f 05 inside an immediate, before a real system call in the same object: the
    // candidate is dropped without the sweep, then the object is planned from its start.
    ".globl fake_first\n.type fake_first,@function\n"
    "fake_first:\n.cfi_startproc\n"
    "  movl $0x050f, %eax\n"
    "  ret\n"
    ".cfi_endproc\n.size fake_first, .-fake_first\n"
    ".globl real_second\n.type real_second,@function\n"
    "real_second:\n.cfi_startproc\n"
    "  movl $257, %eax\n"  // openat
    "  syscall\n"
    "  ret\n"
    ".cfi_endproc\n.size real_second, .-real_second\n");
#else
__asm__(
    ".text\n"
    // Code between two FDEs (as glibc's clone child path) after a function whose FDE ends with a
    // data byte: decoded from the function before, the gap's openat reads as bytes of other
    // instructions. The end of that FDE must be an instruction start of the decoding.
    ".globl data_at_fde_end\n.type data_at_fde_end,@function\n"
    "data_at_fde_end:\n.cfi_startproc\n"
    "  ret\n"
    "  .byte 0xb8\n"
    ".cfi_endproc\n"
    "  movl $257, %eax\n"  // no FDE from here
    "  syscall\n"
    "  ret\n"
    "  nop; nop; nop; nop\n"
    ".size data_at_fde_end, .-data_at_fde_end\n"
    ".globl after_gap\n.type after_gap,@function\n"
    "after_gap:\n.cfi_startproc\n"
    "  ret\n"
    ".cfi_endproc\n.size after_gap, .-after_gap\n");
#endif
