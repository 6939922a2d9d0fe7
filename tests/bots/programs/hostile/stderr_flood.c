/* Writes 16 MiB to its log (stderr), over its output cap, then plays on. */
#include "hostile.h"

static void attack(char *info, size_t size) {
    static char block[65536];
    int failed = 0;
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 256; i++)
        if (write(2, block, sizeof block) < 0) failed++;
    report_number(info, size, "failed_writes", failed);
}

static void again(char *info, size_t size) { (void)info; (void)size; }
