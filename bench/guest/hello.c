/* The smallest useful static program: start-up cost of the emulator (run_vs_qemu.sh). */
#include <stdio.h>

int main(void) {
  puts("hello, world");
  return 0;
}
