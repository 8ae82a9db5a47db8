// A value held in ymm16 across a raw openat, which the kernel preserves: so must the recorder.
// Needs AVX-512 (built with -mavx512f -mavx512vl; the test skips without it).
#include <fcntl.h>
#include <immintrin.h>
#include <stdio.h>
int main() {
  long r;
  __m256 v = _mm256_set1_ps(3.5f), out;
  __asm__ volatile("vmovaps %2, %%ymm16\n\tmov $257, %%eax\n\tsyscall\n\tvmovaps %%ymm16, %1"
                   : "=a"(r), "=x"(out)
                   : "x"(v), "D"(AT_FDCWD), "S"("/etc/hostname"), "d"(O_RDONLY)
                   : "rcx", "r11", "memory", "xmm16");
  float f[8];
  _mm256_storeu_ps(f, out);
  printf("ymm16 %s (fd %ld)\n", f[7] == 3.5f ? "kept" : "CHANGED", r);
}
