/* Forks without end, every child too, each named after argv[1] so the test can
 * look for survivors once the game is over. */
#include <sys/prctl.h>
#include "hostile.h"

static void attack(char *info, size_t size) {
    (void)info; (void)size;
    for (;;) {
        prctl(PR_SET_NAME, g_argv[1]);
        fork();
    }
}

static void again(char *info, size_t size) { (void)info; (void)size; }
