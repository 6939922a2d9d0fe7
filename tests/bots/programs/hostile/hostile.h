/* The protocol side of the hostile program bots (tests/test_hostile_programs.py):
 * each answers hello and new_game as a good bot does, then calls its attack()
 * on its first move, and plays the lowest column that is not full, with what
 * attack() wrote into info (a JSON object's members) beside the move. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_argc;
static char **g_argv;
static int g_move_number;

/* Defined by each bot: runs once, on its first move, before it answers. */
static void attack(char *info, size_t size);
/* Defined by each bot that wants it: runs on every move after the first. */
static void again(char *info, size_t size);

/* errno's name, or "ok", for a report. */
__attribute__((unused)) static const char *outcome(int result) {
    if (result >= 0) return "ok";
    switch (errno) {
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOENT: return "ENOENT";
    case ESRCH: return "ESRCH";
    case ENOSYS: return "ENOSYS";
    case EAGAIN: return "EAGAIN";
    case ENETUNREACH: return "ENETUNREACH";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EROFS: return "EROFS";
    case EXDEV: return "EXDEV";
    case EINVAL: return "EINVAL";
    case EBADF: return "EBADF";
    case ETXTBSY: return "ETXTBSY";
    default: return "other";
    }
}

/* Appends "key": "value" to a JSON object's members. */
__attribute__((unused)) static void report(char *info, size_t size, const char *key, const char *value) {
    size_t used = strlen(info);
    snprintf(info + used, size - used, "%s\"%s\": \"%s\"", used ? ", " : "", key, value);
}

__attribute__((unused)) static void report_number(char *info, size_t size, const char *key, double value) {
    size_t used = strlen(info);
    snprintf(info + used, size - used, "%s\"%s\": %.6f", used ? ", " : "", key, value);
}

int main(int argc, char **argv) {
    static char line[1 << 16];
    g_argc = argc;
    g_argv = argv;
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"quit\"")) return 0;
        if (strstr(line, "\"hello\"")) {
            puts("{\"type\": \"hello\", \"protocol\": 1, \"name\": \"hostile\"}");
        } else if (strstr(line, "\"new_game\"")) {
            puts("{\"ok\": true}");
        } else {
            static char info[3000];
            int height[7] = {0}, column = 0;
            char *p = strstr(line, "\"moves\": [");
            for (p = p ? p + 10 : line; *p && *p != ']'; p++)
                if (*p >= '0' && *p <= '6') height[*p - '0']++;
            while (height[column] >= 6) column++;
            info[0] = '\0';
            if (g_move_number++ == 0) attack(info, sizeof info);
            else again(info, sizeof info);
            printf("{\"move\": %d, \"info\": {%s}}\n", column, info);
        }
        fflush(stdout);
    }
    return 0;
}
