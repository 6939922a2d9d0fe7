/* c-alphabeta: negamax with alpha-beta pruning and iterative deepening, for any
 * width, height and connect, with or without gravity. Speaks the arena's bot
 * protocol, version 1 (docs/protocol.md): JSON lines on stdin/stdout, log on stderr.
 *
 * Evaluation: every window of `connect` cells held by one side only is worth
 * WEIGHT[stones in it] to that side. The sums are kept up to date as stones are
 * played and taken back, so a position costs nothing to evaluate.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- JSON reader */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct Json {
    int type;
    double num;          /* J_NUM, J_BOOL */
    char *text;          /* J_STR: the string; J_NUM: the number as written */
    int n;               /* J_ARR, J_OBJ: how many items */
    char **keys;         /* J_OBJ */
    struct Json **items; /* J_ARR, J_OBJ */
} Json;

typedef struct { const char *s; int depth; } Reader;

static void json_free(Json *j) {
    if (!j) return;
    for (int i = 0; i < j->n; i++) {
        json_free(j->items[i]);
        if (j->keys) free(j->keys[i]);
    }
    free(j->items);
    free(j->keys);
    free(j->text);
    free(j);
}

static void skip_ws(Reader *r) { while (*r->s && isspace((unsigned char)*r->s)) r->s++; }

static Json *json_value(Reader *r);

static char *json_string(Reader *r) {
    /* r->s at the opening quote. Escapes are kept simple: \uXXXX outside ASCII
     * becomes '?', which is enough for the fields a bot reads. */
    size_t cap = 16, len = 0;
    char *out = malloc(cap);
    r->s++;
    while (*r->s && *r->s != '"') {
        char c = *r->s++;
        if (c == '\\') {
            char e = *r->s++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned v = 0;
                for (int i = 0; i < 4; i++) {
                    if (!isxdigit((unsigned char)*r->s)) { free(out); return NULL; }
                    char h = *r->s++;
                    v = v * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0' : (tolower(h) - 'a' + 10));
                }
                c = v < 128 ? (char)v : '?';
                break;
            }
            case '\0': free(out); return NULL;
            default: c = e; /* \" \\ \/ */
            }
        }
        if (len + 2 > cap) out = realloc(out, cap *= 2);
        out[len++] = c;
    }
    if (*r->s != '"') { free(out); return NULL; }
    r->s++;
    out[len] = '\0';
    return out;
}

static Json *json_new(int type) {
    Json *j = calloc(1, sizeof *j);
    j->type = type;
    return j;
}

static int json_push(Json *j, char *key, Json *item) {
    j->items = realloc(j->items, sizeof *j->items * (size_t)(j->n + 1));
    if (j->type == J_OBJ) {
        j->keys = realloc(j->keys, sizeof *j->keys * (size_t)(j->n + 1));
        j->keys[j->n] = key;
    }
    j->items[j->n++] = item;
    return 1;
}

static Json *json_value(Reader *r) {
    skip_ws(r);
    if (++r->depth > 64) return NULL;
    Json *j = NULL;
    char c = *r->s;
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        j = json_new(c == '{' ? J_OBJ : J_ARR);
        r->s++;
        skip_ws(r);
        if (*r->s == close) { r->s++; r->depth--; return j; }
        for (;;) {
            char *key = NULL;
            skip_ws(r);
            if (j->type == J_OBJ) {
                if (*r->s != '"' || !(key = json_string(r))) { json_free(j); return NULL; }
                skip_ws(r);
                if (*r->s++ != ':') { free(key); json_free(j); return NULL; }
            }
            Json *item = json_value(r);
            if (!item) { free(key); json_free(j); return NULL; }
            json_push(j, key, item);
            skip_ws(r);
            if (*r->s == ',') { r->s++; continue; }
            if (*r->s == close) { r->s++; break; }
            json_free(j);
            return NULL;
        }
    } else if (c == '"') {
        char *s = json_string(r);
        if (!s) return NULL;
        j = json_new(J_STR);
        j->text = s;
    } else if (c == '-' || isdigit((unsigned char)c)) {
        const char *start = r->s;
        char *end;
        double v = strtod(start, &end);
        if (end == start) return NULL;
        j = json_new(J_NUM);
        j->num = v;
        j->text = strndup(start, (size_t)(end - start));
        r->s = end;
    } else if (!strncmp(r->s, "true", 4)) { j = json_new(J_BOOL); j->num = 1; r->s += 4; }
    else if (!strncmp(r->s, "false", 5)) { j = json_new(J_BOOL); r->s += 5; }
    else if (!strncmp(r->s, "null", 4)) { j = json_new(J_NULL); r->s += 4; }
    r->depth--;
    return j;
}

static Json *json_parse(const char *text) {
    Reader r = { text, 0 };
    Json *j = json_value(&r);
    if (!j) return NULL;
    skip_ws(&r);
    if (*r.s) { json_free(j); return NULL; }
    return j;
}

static Json *json_get(const Json *obj, const char *key) {
    if (!obj || obj->type != J_OBJ) return NULL;
    for (int i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key)) return obj->items[i];
    return NULL;
}

static int json_is_int(const Json *j) {
    return j && j->type == J_NUM && j->num == (double)(long long)j->num;
}

/* ---------------------------------------------------------------- the board */

#define MAX_SIDE 40
#define MAX_CELLS (MAX_SIDE * MAX_SIDE)
#define WIN 1000000000LL
#define MAX_PLY MAX_CELLS

static int W, H, K, GRAVITY;
static int board[MAX_CELLS];          /* -1 empty, else the player 0 or 1 */
static int filled[MAX_SIDE];          /* stones in each column (gravity) */
static int nwin;                      /* windows of K cells */
static int *win_cells;                /* nwin * K cells */
static int *cell_start, *cell_wins;   /* each cell's windows: cell_wins[cell_start[c] ..] */
static int *count[2];                 /* stones of each player in each window */
static long long weight[MAX_SIDE + 2];
static long long score0;              /* the evaluation for player 0 */

static void setup_board(void) {
    static const int dirs[4][2] = { {0, 1}, {1, 0}, {1, 1}, {1, -1} }; /* (drow, dcol) */
    int cells = W * H;
    free(win_cells); free(cell_start); free(cell_wins); free(count[0]); free(count[1]);
    win_cells = malloc(sizeof(int) * (size_t)(4 * cells * K));
    nwin = 0;
    for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++)
            for (int d = 0; d < 4; d++) {
                int er = r + dirs[d][0] * (K - 1), ec = c + dirs[d][1] * (K - 1);
                if (er < 0 || er >= H || ec < 0 || ec >= W) continue;
                for (int i = 0; i < K; i++)
                    win_cells[nwin * K + i] = (r + dirs[d][0] * i) * W + c + dirs[d][1] * i;
                nwin++;
            }
    cell_start = calloc((size_t)cells + 1, sizeof(int));
    for (int w = 0; w < nwin; w++)
        for (int i = 0; i < K; i++) cell_start[win_cells[w * K + i] + 1]++;
    for (int c = 0; c < cells; c++) cell_start[c + 1] += cell_start[c];
    cell_wins = malloc(sizeof(int) * (size_t)(nwin * K + 1));
    int *fill = calloc((size_t)cells, sizeof(int));
    for (int w = 0; w < nwin; w++)
        for (int i = 0; i < K; i++) {
            int cell = win_cells[w * K + i];
            cell_wins[cell_start[cell] + fill[cell]++] = w;
        }
    free(fill);
    count[0] = calloc((size_t)nwin + 1, sizeof(int));
    count[1] = calloc((size_t)nwin + 1, sizeof(int));
    /* Only the last four steps towards a line matter much: 1, 8, 64, 512. */
    int base = K > 5 ? K - 5 : 0;
    for (int n = 0; n <= K; n++) weight[n] = n <= base ? (n > 0) : 1LL << (3 * (n - base - 1));
    for (int i = 0; i < cells; i++) board[i] = -1;
    for (int c = 0; c < W; c++) filled[c] = 0;
    score0 = 0;
}

static long long window_value(int w) {
    int a = count[0][w], b = count[1][w];
    if (a && b) return 0;
    return a ? weight[a] : -weight[b];
}

/* Without gravity the protocol numbers a cell column * H + row, row 0 at the
 * bottom; the board here is row * W + column, row 0 at the top. The two meet here
 * and nowhere else. */
static int cell_of(int move) { return (H - 1 - move % H) * W + move / H; }
static int move_of(int cell) { return (cell % W) * H + (H - 1 - cell / W); }

/* The cell a move puts a stone on, or -1 if the move is not legal now. */
static int landing(int move) {
    if (GRAVITY) {
        if (move < 0 || move >= W || filled[move] >= H) return -1;
        return (H - 1 - filled[move]) * W + move;
    }
    if (move < 0 || move >= W * H || board[cell_of(move)] >= 0) return -1;
    return cell_of(move);
}

/* Plays the stone; returns 1 if it makes a line of K. */
static int play(int cell, int p) {
    int won = 0;
    board[cell] = p;
    if (GRAVITY) filled[cell % W]++;
    for (int i = cell_start[cell]; i < cell_start[cell + 1]; i++) {
        int w = cell_wins[i];
        score0 -= window_value(w);
        if (++count[p][w] == K) won = 1;
        score0 += window_value(w);
    }
    return won;
}

static void undo(int cell, int p) {
    board[cell] = -1;
    if (GRAVITY) filled[cell % W]--;
    for (int i = cell_start[cell]; i < cell_start[cell + 1]; i++) {
        int w = cell_wins[i];
        score0 -= window_value(w);
        count[p][w]--;
        score0 += window_value(w);
    }
}

/* How much a stone of p on the cell helps p: lines it extends, lines it blocks. */
static long long move_gain(int cell, int p) {
    long long gain = 0;
    for (int i = cell_start[cell]; i < cell_start[cell + 1]; i++) {
        int w = cell_wins[i], mine = count[p][w], theirs = count[1 - p][w];
        if (!theirs) gain += mine + 1 == K ? WIN / 4 : weight[mine + 1] - weight[mine];
        else if (!mine) gain += theirs + 1 == K ? WIN / 8 : weight[theirs];
    }
    return gain;
}

/* ---------------------------------------------------------------- the search */

static uint64_t rng_state;
static uint64_t rng_next(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static long long nodes, node_limit;
static double deadline;
static int aborted;
static int pv[MAX_PLY + 1][64];
static int pv_len[MAX_PLY + 1];
static int root_first = -1;   /* the move to try first at the root: the last best */

typedef struct { int move, cell; long long key; } Cand;

static int cmp_cand(const void *a, const void *b) {
    long long x = ((const Cand *)a)->key, y = ((const Cand *)b)->key;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int near_stone(int cell, int reach) {
    int r = cell / W, c = cell % W;
    for (int dr = -reach; dr <= reach; dr++)
        for (int dc = -reach; dc <= reach; dc++) {
            int rr = r + dr, cc = c + dc;
            if (rr >= 0 && rr < H && cc >= 0 && cc < W && board[rr * W + cc] >= 0) return 1;
        }
    return 0;
}

/* The moves worth searching, best guess first. Without gravity only cells near
 * stones, and at most `cap` of them: a wide board would drown the search. */
static int candidates(Cand *out, int p, int cap, int first, int jitter) {
    int n = 0;
    if (GRAVITY) {
        for (int m = 0; m < W; m++) {
            int cell = landing(m);
            if (cell >= 0) out[n++] = (Cand){ m, cell, 0 };
        }
    } else {
        int reach = W * H > 225 ? 1 : 2, any = 0;
        for (int cell = 0; cell < W * H && !any; cell++) any = board[cell] >= 0;
        for (int cell = 0; cell < W * H; cell++)
            if (board[cell] < 0 && (!any || near_stone(cell, reach)))
                out[n++] = (Cand){ move_of(cell), cell, 0 };
        if (!any) { /* empty board: the centre */
            int centre = (H / 2) * W + W / 2;
            out[0] = (Cand){ move_of(centre), centre, 0 };
            n = 1;
        }
    }
    for (int i = 0; i < n; i++) {
        int r = out[i].cell / W, c = out[i].cell % W;
        long long centre = (long long)(W - abs(2 * c - (W - 1))) + (H - abs(2 * r - (H - 1)));
        out[i].key = move_gain(out[i].cell, p) * 16 + centre;
        if (jitter) out[i].key = out[i].key * 8 + (long long)(rng_next() % 8);
        if (out[i].move == first) out[i].key = WIN * 4;
    }
    qsort(out, (size_t)n, sizeof *out, cmp_cand);
    return n < cap ? n : cap;
}

static long long negamax(int depth, long long alpha, long long beta, int p, int ply) {
    Cand moves[MAX_CELLS];
    pv_len[ply] = 0;
    if ((++nodes & 63) == 0 && now() > deadline) aborted = 1; /* a wide board's node is slow */
    if (node_limit > 0 && nodes >= node_limit) aborted = 1;
    if (aborted) return 0;
    int n = candidates(moves, p, GRAVITY ? W : 24, ply == 0 ? root_first : -1, ply == 0);
    if (n == 0) return 0; /* the board is full: a draw */
    long long best = -WIN * 2;
    for (int i = 0; i < n; i++) {
        int cell = moves[i].cell;
        long long value;
        if (play(cell, p)) value = WIN - ply - 1;
        else if (depth <= 1) value = p == 0 ? score0 : -score0;
        else value = -negamax(depth - 1, -beta, -alpha, 1 - p, ply + 1);
        undo(cell, p);
        if (aborted) return 0;
        if (value > best) {
            best = value;
            pv[ply][0] = moves[i].move;
            int len = depth > 1 && value < WIN - ply - 1 ? pv_len[ply + 1] : 0;
            if (len > 62) len = 62;
            memcpy(&pv[ply][1], pv[ply + 1], sizeof(int) * (size_t)len);
            pv_len[ply] = len + 1;
        }
        if (value > alpha) alpha = value;
        if (alpha >= beta) break;
    }
    return best;
}

/* ---------------------------------------------------------------- the protocol */

static int max_depth = 64;
static int started;

static void answer(const char *line) {
    fputs(line, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

static void answer_error(const char *reason) {
    char line[512];
    snprintf(line, sizeof line, "{\"error\": \"%s\"}", reason);
    answer(line);
}

static void on_hello(void) {
    answer("{\"type\": \"hello\", \"protocol\": 1, \"name\": \"c-alphabeta\", "
           "\"author\": \"connectk-arena examples\", \"version\": \"1\", "
           "\"options\": {\"depth\": {\"type\": \"int\", \"default\": 64, "
           "\"help\": \"deepest search in plies (it stops sooner when the move's time is up)\", "
           "\"min\": 1, \"max\": 64}}, "
           "\"variants\": [{\"width\": [3, 40], \"height\": [3, 40], \"connect\": [3, 40], "
           "\"gravity\": [true, false]}]}");
}

static void on_new_game(const Json *req) {
    const Json *rules = json_get(req, "rules");
    const Json *w = json_get(rules, "width"), *h = json_get(rules, "height");
    const Json *k = json_get(rules, "connect"), *g = json_get(rules, "gravity");
    if (!json_is_int(w) || !json_is_int(h) || !json_is_int(k) || !g || g->type != J_BOOL) {
        answer_error("new_game: rules need whole width, height, connect and a true/false gravity");
        return;
    }
    int width = (int)w->num, height = (int)h->num, connect = (int)k->num;
    if (width < 3 || width > MAX_SIDE || height < 3 || height > MAX_SIDE || connect < 3 || connect > MAX_SIDE) {
        answer_error("new_game: this bot plays boards of 3 to 40 a side, connect 3 to 40");
        return;
    }
    W = width; H = height; K = connect; GRAVITY = g->num != 0;
    const Json *scoring = json_get(rules, "scoring");
    if (scoring && scoring->type == J_STR && strcmp(scoring->text, "line") != 0) {
        answer_error("new_game: this bot plays line scoring only");
        return;
    }
    /* The seed may be any integer, even past 64 bits: hash its digits. */
    const Json *seed = json_get(req, "seed");
    rng_state = 0x9E3779B97F4A7C15ULL;
    if (seed && seed->type == J_NUM)
        for (const char *s = seed->text; *s; s++) rng_state = (rng_state ^ (unsigned char)*s) * 0x100000001B3ULL;
    if (!rng_state) rng_state = 1;
    const Json *depth = json_get(json_get(req, "options"), "depth");
    max_depth = 64;
    if (json_is_int(depth) && depth->num >= 1 && depth->num <= 64) max_depth = (int)depth->num;
    setup_board();
    started = 1;
    fprintf(stderr, "c-alphabeta: %dx%d connect %d, %s, depth up to %d\n", W, H, K,
            GRAVITY ? "gravity" : "no gravity", max_depth);
    answer("{\"ok\": true}");
}

static void on_move(const Json *req) {
    if (!started) { answer_error("move before new_game"); return; }
    const Json *moves = json_get(req, "moves");
    if (!moves || moves->type != J_ARR) { answer_error("move: no list of moves"); return; }
    setup_board();
    char reason[200];
    int p = 0;
    for (int i = 0; i < moves->n; i++, p = 1 - p) {
        const Json *m = moves->items[i];
        if (!json_is_int(m)) {
            snprintf(reason, sizeof reason, "move %d is not a whole number", i + 1);
            answer_error(reason);
            return;
        }
        long long mv = (long long)m->num;
        int limit = GRAVITY ? W : W * H;
        if (mv < 0 || mv >= limit) {
            snprintf(reason, sizeof reason, "move %d: %lld is off the board (0..%d)", i + 1, mv, limit - 1);
            answer_error(reason);
            return;
        }
        int cell = landing((int)mv);
        if (cell < 0) {
            snprintf(reason, sizeof reason, "move %d: %s %lld", i + 1,
                     GRAVITY ? "full column" : "taken cell", mv);
            answer_error(reason);
            return;
        }
        if (play(cell, p)) {
            snprintf(reason, sizeof reason, "move %d won the game: there is nothing to play", i + 1);
            if (i + 1 < moves->n)
                snprintf(reason, sizeof reason, "moves after the game was won (by move %d)", i + 1);
            answer_error(reason);
            return;
        }
    }
    if (moves->n >= W * H) { answer_error("the board is full: there is nothing to play"); return; }

    const Json *limit = json_get(req, "limit");
    const Json *ms = json_get(limit, "move_seconds"), *bank = json_get(limit, "bank_seconds");
    const Json *nl = json_get(limit, "nodes");
    double seconds = ms && ms->type == J_NUM ? ms->num : 1.0;
    if (seconds > 10.0) seconds = 10.0; /* the arena's cap of 60 s is no reason to use it */
    double budget = seconds * 0.5;      /* a margin for the pipe and a slow last iteration */
    if (bank && bank->type == J_NUM && bank->num > 0 && budget < 0.05) budget += bank->num * 0.02;
    double start = now();
    deadline = start + budget;
    node_limit = json_is_int(nl) && nl->num > 0 ? (long long)nl->num : 0;
    nodes = 0;
    aborted = 0;
    root_first = -1;

    int best = -1, best_depth = 0, best_pv[64], best_pv_len = 0;
    long long best_score = 0;
    {
        Cand first[MAX_CELLS];
        int n = candidates(first, p, 1, -1, 1);
        if (n > 0) best = first[0].move; /* an answer even if depth 1 runs out of time */
    }
    for (int depth = 1; depth <= max_depth && depth <= W * H - moves->n; depth++) {
        long long value = negamax(depth, -WIN * 2, WIN * 2, p, 0);
        if (aborted) break;
        best = pv[0][0];
        best_score = value;
        best_depth = depth;
        best_pv_len = pv_len[0];
        memcpy(best_pv, pv[0], sizeof(int) * (size_t)best_pv_len);
        root_first = best;
        if (value >= WIN - 1000 || value <= -WIN + 1000) break; /* the game is decided */
        if (now() - start > budget * 0.4) break; /* the next depth would not finish */
    }
    double spent = now() - start;
    char line[2048];
    int len = snprintf(line, sizeof line,
                       "{\"move\": %d, \"info\": {\"score\": %lld, \"depth\": %d, \"nodes\": %lld, "
                       "\"time\": %.3f, \"pv\": [",
                       best, best_score, best_depth, nodes, spent);
    for (int i = 0; i < best_pv_len && i < 40 && len < 1900; i++)
        len += snprintf(line + len, sizeof line - (size_t)len, i ? ", %d" : "%d", best_pv[i]);
    snprintf(line + len, sizeof line - (size_t)len, "]}}");
    fprintf(stderr, "ply %d: move %d score %lld depth %d nodes %lld in %.3f s\n", moves->n, best,
            best_score, best_depth, nodes, spent);
    answer(line);
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) >= 0) {
        if (!line[strspn(line, " \t\r\n")]) continue; /* a blank line is no request */
        Json *req = json_parse(line);
        const Json *type = json_get(req, "type");
        if (!req || req->type != J_OBJ) answer_error("unreadable request: not a JSON object");
        else if (!type || type->type != J_STR) answer_error("request without a type");
        else if (!strcmp(type->text, "hello")) on_hello();
        else if (!strcmp(type->text, "new_game")) on_new_game(req);
        else if (!strcmp(type->text, "move")) on_move(req);
        else if (!strcmp(type->text, "quit")) { json_free(req); break; }
        else answer_error("unknown request type");
        json_free(req);
    }
    free(line);
    return 0;
}
