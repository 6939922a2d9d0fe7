/* Starts two threads that spin for good, then reports on each move how much
 * processor time its process used between its last answer and this request
 * (off move: the opponent's time), and how long that was on the wall clock. */
#include <pthread.h>
#include <time.h>
#include "hostile.h"

static double cpu_at_answer, wall_at_answer;

static double now(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *spin(void *unused) {
    (void)unused;
    for (volatile unsigned long n = 0;; n++) {
    }
    return NULL;
}

static void attack(char *info, size_t size) {
    (void)info; (void)size;
    pthread_t thread;
    for (int i = 0; i < 2; i++) pthread_create(&thread, NULL, spin, NULL);
    cpu_at_answer = now(CLOCK_PROCESS_CPUTIME_ID);
    wall_at_answer = now(CLOCK_MONOTONIC);
}

static void again(char *info, size_t size) {
    report_number(info, size, "off_move_cpu", now(CLOCK_PROCESS_CPUTIME_ID) - cpu_at_answer);
    report_number(info, size, "off_move_wall", now(CLOCK_MONOTONIC) - wall_at_answer);
    cpu_at_answer = now(CLOCK_PROCESS_CPUTIME_ID);
    wall_at_answer = now(CLOCK_MONOTONIC);
}
