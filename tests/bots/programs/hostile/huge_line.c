/* Answers its first move with one line of 1 MiB (the protocol allows 64 KiB). */
#include "hostile.h"

static void attack(char *info, size_t size) {
    (void)info; (void)size;
    fputs("{\"move\": 0, \"info\": {\"padding\": \"", stdout);
    for (int i = 0; i < 1024 * 1024; i++) putchar('x');
    fputs("\"}}\n", stdout);
    fflush(stdout);
    pause();
}

static void again(char *info, size_t size) { (void)info; (void)size; }
