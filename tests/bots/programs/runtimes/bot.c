/* A trivial protocol-v1 bot in C: the lowest column that is not full. */
#include <stdio.h>
#include <string.h>

int main(void) {
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"quit\"")) return 0;
        if (strstr(line, "\"hello\"")) {
            puts("{\"type\": \"hello\", \"protocol\": 1, \"name\": \"c\"}");
        } else if (strstr(line, "\"new_game\"")) {
            puts("{\"ok\": true}");
        } else {
            int height[7] = {0}, column = 0;
            char *p = strstr(line, "\"moves\": [");
            for (p = p ? p + 10 : line; *p && *p != ']'; p++)
                if (*p >= '0' && *p <= '6') height[*p - '0']++;
            while (height[column] >= 6) column++;
            printf("{\"move\": %d}\n", column);
        }
        fflush(stdout);
    }
    return 0;
}
