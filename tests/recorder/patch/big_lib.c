// A library with 1 MiB of bss, linked with -z noseparate-code: the loader's first mapping of it
// is executable and runs past the end of the file.
char big[1 << 20];
int f(void) { return big[5]; }
