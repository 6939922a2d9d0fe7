/* Touches 2 GiB: two threads of 768 MiB in this process, and two children of
 * 256 MiB; first it says whether it has an address space limit (it has none:
 * its memory is the control group's to count, so malloc never fails). */
#include <pthread.h>
#include <sys/resource.h>
#include "hostile.h"

#define MIB (1024L * 1024L)

static void *touch(void *bytes) {
    size_t size = (size_t)(long)bytes;
    char *block = malloc(size);
    if (block == NULL) {
        fprintf(stderr, "malloc failed\n");
        exit(3);
    }
    for (size_t i = 0; i < size; i += 4096) block[i] = 1;
    return block;
}

static void attack(char *info, size_t size) {
    (void)info; (void)size;
    struct rlimit limit;
    getrlimit(RLIMIT_AS, &limit);
    fprintf(stderr, "RLIMIT_AS %s\n", limit.rlim_cur == RLIM_INFINITY ? "unlimited" : "set");
    fflush(stderr);
    for (int i = 0; i < 2; i++) {
        if (fork() == 0) {
            touch((void *)(256 * MIB));
            pause();
        }
    }
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, touch, (void *)(768 * MIB));
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    fprintf(stderr, "held 2 GiB\n");
}

static void again(char *info, size_t size) { (void)info; (void)size; }
