/* The leftmost legal column, at once: a bot whose moves cost nothing but the
   protocol, to measure what the arena adds to a C program's move. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int field(const char *line, const char *key, int fallback) {
    const char *at = strstr(line, key);
    return at ? atoi(at + strlen(key)) : fallback;
}

int main(void) {
    static char line[1 << 20];
    int width = 7, height = 6;
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"type\": \"hello\"")) {
            puts("{\"type\": \"hello\", \"protocol\": 1, \"name\": \"bench-c\", \"variants\": [{\"gravity\": [true]}]}");
        } else if (strstr(line, "\"type\": \"new_game\"")) {
            width = field(line, "\"width\": ", 7);
            height = field(line, "\"height\": ", 6);
            puts("{\"ok\": true}");
        } else if (strstr(line, "\"type\": \"move\"")) {
            int counts[64] = {0};
            char *p = strstr(line, "\"moves\": [") + 10;
            while (*p && *p != ']') {
                if (*p >= '0' && *p <= '9') counts[strtol(p, &p, 10)]++;
                else p++;
            }
            int column = 0;
            while (column < width - 1 && counts[column] >= height) column++;
            printf("{\"move\": %d}\n", column);
        } else if (strstr(line, "\"type\": \"quit\"")) {
            return 0;
        }
        fflush(stdout);
    }
    return 0;
}
