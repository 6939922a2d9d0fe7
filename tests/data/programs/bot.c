/* A Connect Four bot speaking protocol v1: the first column that is not full. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

int main(void) {
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"quit\"")) break;
        if (strstr(line, "\"hello\"")) {
            printf("{\"type\": \"hello\", \"protocol\": 1, \"name\": \"first-c\"}\n");
        } else if (strstr(line, "\"new_game\"")) {
            printf("{\"ok\": true}\n");
        } else {
            int count[7] = {0};
            char *p = strstr(line, "\"moves\"");
            p = p ? strchr(p, '[') : NULL;
            while (p && *p && *p != ']') {
                p++;
                if (*p >= '0' && *p <= '9') { count[strtol(p, &p, 10) % 7]++; }
            }
            int move = 0;
            while (move < 6 && count[move] >= 6) move++;
            fprintf(stderr, "playing %d\n", move);
            printf("{\"move\": %d}\n", move);
        }
        fflush(stdout);
    }
    return 0;
}
