// libFuzzer's entry for programs that own main (the fuzzing binary is a SwiftPM executable, whose
// main SwiftPM provides): linked from libFuzzer when built with -sanitize=fuzzer.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
