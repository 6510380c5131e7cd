// libFuzzer's entry for programs that own main (include/CFuzzerDriver.h), and a stand-in for the
// entry libFuzzer's own main would call.
#include "CFuzzerDriver.h"

#include <stdio.h>
#include <stdlib.h>

// A debug build names the executable's main `beaconwatch_fuzz_main` and points `main` at it with
// the linker, after libFuzzer's archive has been searched for an undefined `main`: its
// FuzzerMain.o is then linked too and asks for this symbol. The program never calls it (our main
// drives libFuzzer through LLVMFuzzerRunDriver, with the target the environment names); if
// libFuzzer's main ever ran instead, this says so at once rather than fuzz nothing.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    (void)data;
    (void)size;
    fputs("beaconwatch-fuzz: libFuzzer's own main ran instead of beaconwatch-fuzz's; the build is wrong\n", stderr);
    abort();
}
