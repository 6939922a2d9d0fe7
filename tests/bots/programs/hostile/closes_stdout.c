/* Closes its channel (stdin and stdout) at its first move and lives on, or,
 * given "exit", closes it and exits at once with code 0. */
#include "hostile.h"

static void attack(char *info, size_t size) {
    (void)info; (void)size;
    close(1);
    close(0);
    if (g_argc > 1 && strcmp(g_argv[1], "exit") == 0) _exit(0);
    for (;;) pause();
}

static void again(char *info, size_t size) { (void)info; (void)size; }
