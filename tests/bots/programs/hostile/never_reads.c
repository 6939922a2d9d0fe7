/* Stops reading its requests, and answering them, at its first move. */
#include "hostile.h"

static void attack(char *info, size_t size) {
    (void)info; (void)size;
    for (;;) pause();
}

static void again(char *info, size_t size) { (void)info; (void)size; }
