// java-classic: three classic connect-k players in one program, picked by the
// option `strategy`: "random", "neighbour" (blocks the opponent's immediate win, else
// plays next to the last stones) and "greedy" (the move that completes the longest
// line: connect, then connect-1, ... then 2). Speaks the arena's bot protocol,
// version 1 (docs/protocol.md): JSON lines on stdin and stdout, its log on stderr.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

public final class Bot {
    static final String[] STRATEGIES = {"random", "neighbour", "greedy"};

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Bot bot = new Bot();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            Object request;
            try {
                request = new Json(line).parse();
            } catch (IllegalArgumentException e) {
                answer("{\"error\": " + Json.quote("unreadable request: " + e.getMessage()) + "}");
                continue;
            }
            if (!(request instanceof Map) || !(((Map<?, ?>) request).get("type") instanceof String)) {
                answer("{\"error\": \"a request is an object with a type\"}");
                continue;
            }
            Map<?, ?> req = (Map<?, ?>) request;
            switch ((String) req.get("type")) {
                case "hello": answer(HELLO); break;
                case "new_game": answer(bot.newGame(req)); break;
                case "move": answer(bot.move(req)); break;
                case "quit": System.exit(0); break;
                default: answer("{\"error\": \"unknown request type\"}");
            }
        }
        System.exit(0);
    }

    static void answer(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static final String HELLO = "{\"type\": \"hello\", \"protocol\": 1, \"name\": \"java-classic\", "
        + "\"author\": \"connectk-arena examples\", \"version\": \"1\", "
        + "\"options\": {\"strategy\": {\"type\": \"str\", \"default\": \"greedy\", "
        + "\"help\": \"random, neighbour (block a win, else play beside the last stones) "
        + "or greedy (complete the longest line)\"}}, "
        + "\"variants\": [{\"width\": [3, 20], \"height\": [3, 20], \"connect\": [3, 20], "
        + "\"gravity\": [true, false]}]}";

    int width, height, connect;
    boolean gravity;
    String strategy = "greedy";
    Random rng = new Random(1);
    boolean started;

    String newGame(Map<?, ?> req) {
        Map<?, ?> rules = req.get("rules") instanceof Map ? (Map<?, ?>) req.get("rules") : Map.of();
        Long w = Json.integer(rules.get("width")), h = Json.integer(rules.get("height"));
        Long k = Json.integer(rules.get("connect"));
        if (w == null || h == null || k == null || !(rules.get("gravity") instanceof Boolean)) {
            return "{\"error\": \"new_game: rules need whole width, height, connect and a true/false gravity\"}";
        }
        if (w < 3 || w > 20 || h < 3 || h > 20 || k < 3 || k > 20) {
            return "{\"error\": \"new_game: this bot plays boards of 3 to 20 a side, connect 3 to 20\"}";
        }
        Object scoring = rules.get("scoring");
        if (scoring != null && !"line".equals(scoring)) {
            return "{\"error\": \"new_game: this bot plays line scoring only\"}";
        }
        width = w.intValue();
        height = h.intValue();
        connect = k.intValue();
        gravity = (Boolean) rules.get("gravity");
        Object seed = req.get("seed");
        rng = new Random(seed instanceof BigDecimal ? ((BigDecimal) seed).toBigInteger().longValue() : 1);
        Map<?, ?> options = req.get("options") instanceof Map ? (Map<?, ?>) req.get("options") : Map.of();
        strategy = "greedy";
        if (options.get("strategy") != null) {
            strategy = String.valueOf(options.get("strategy"));
            if (!List.of(STRATEGIES).contains(strategy)) {
                return "{\"error\": " + Json.quote("new_game: strategy must be random, neighbour or greedy, got "
                    + strategy) + "}";
            }
        }
        started = true;
        System.err.printf("java-classic: %dx%d connect %d, %s, strategy %s%n", width, height, connect,
            gravity ? "gravity" : "no gravity", strategy);
        return "{\"ok\": true}";
    }

    String move(Map<?, ?> req) {
        if (!started) return "{\"error\": \"move before new_game\"}";
        if (!(req.get("moves") instanceof List)) return "{\"error\": \"move: no list of moves\"}";
        List<?> moves = (List<?>) req.get("moves");
        Board board = new Board(width, height, connect, gravity);
        for (int i = 0; i < moves.size(); i++) {
            Long move = Json.integer(moves.get(i));
            String wrong = move == null ? "is not a whole number" : board.whyIllegal(move);
            if (wrong != null) {
                return "{\"error\": " + Json.quote("move " + (i + 1) + " (" + moves.get(i) + ") " + wrong) + "}";
            }
            if (board.play(move.intValue())) {
                return "{\"error\": " + Json.quote(i + 1 < moves.size()
                    ? "moves after the game was won (by move " + (i + 1) + ")"
                    : "the game is over: move " + (i + 1) + " won it") + "}";
            }
        }
        List<Integer> legal = board.legalMoves();
        if (legal.isEmpty()) return "{\"error\": \"the board is full: there is nothing to play\"}";
        int me = board.toMove();
        int move;
        String why;
        switch (strategy) {
            case "random":
                move = pick(legal);
                why = "random";
                break;
            case "neighbour": {
                List<Integer> blocks = board.winningMoves(1 - me);
                if (!blocks.isEmpty()) {
                    move = pick(blocks);
                    why = "block";
                } else {
                    List<Integer> near = board.movesNear(moves.isEmpty() ? -1 : board.lastCell(), me);
                    move = pick(near.isEmpty() ? legal : near);
                    why = near.isEmpty() ? "random" : "neighbour";
                }
                break;
            }
            default: {
                int best = 0;
                List<Integer> bestMoves = new ArrayList<>();
                for (int m : legal) {
                    int length = board.openLineLength(board.landing(m), me);
                    if (length > best) {
                        best = length;
                        bestMoves.clear();
                    }
                    if (length == best) bestMoves.add(m);
                }
                move = pick(best >= 2 ? bestMoves : legal);
                why = "line " + best;
            }
        }
        System.err.printf("ply %d: %s plays %d (%s)%n", moves.size(), strategy, move, why);
        return "{\"move\": " + move + ", \"info\": {\"strategy\": \"" + strategy + "\", \"why\": \"" + why + "\"}}";
    }

    int pick(List<Integer> moves) {
        return moves.get(rng.nextInt(moves.size()));
    }

    /** The board: cells numbered row * width + column, row 0 at the top. Moves are the
     *  protocol's numbers (the column, or without gravity column * height + row from the
     *  bottom); landing() turns one into a cell. */
    static final class Board {
        static final int[][] DIRECTIONS = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
        final int width, height, connect;
        final boolean gravity;
        final int[] cells;
        final int[] filled;
        int ply;
        int last = -1;

        Board(int width, int height, int connect, boolean gravity) {
            this.width = width;
            this.height = height;
            this.connect = connect;
            this.gravity = gravity;
            cells = new int[width * height];
            java.util.Arrays.fill(cells, -1);
            filled = new int[width];
        }

        int toMove() {
            return ply % 2;
        }

        /** The cell the move puts a stone on, or -1 if it is not legal. */
        int landing(int move) {
            if (gravity) {
                if (move < 0 || move >= width || filled[move] >= height) return -1;
                return (height - 1 - filled[move]) * width + move;
            }
            if (move < 0 || move >= cells.length) return -1;
            int cell = cellOf(move);
            return cells[cell] >= 0 ? -1 : cell;
        }

        /** Without gravity the protocol numbers a cell column * height + row, row 0 at
         *  the bottom: the cell of this board it names. */
        int cellOf(int move) {
            return (height - 1 - move % height) * width + move / height;
        }

        String whyIllegal(long move) {
            long count = gravity ? width : (long) width * height;
            if (move < 0 || move >= count) return "is off the board (0.." + (count - 1) + ")";
            if (landing((int) move) < 0) return gravity ? "is a full column" : "is a taken cell";
            return null;
        }

        /** Plays the move; true if it made a line of `connect`. */
        boolean play(int move) {
            int cell = landing(move);
            int player = toMove();
            cells[cell] = player;
            if (gravity) filled[move]++;
            ply++;
            last = cell;
            return longestRun(cell, player) >= connect;
        }

        int lastCell() {
            return last;
        }

        List<Integer> legalMoves() {
            List<Integer> moves = new ArrayList<>();
            for (int m = 0; m < (gravity ? width : cells.length); m++) if (landing(m) >= 0) moves.add(m);
            return moves;
        }

        /** Stones of the player in a row through the cell, in its best direction. */
        int longestRun(int cell, int player) {
            int best = 0;
            for (int[] d : DIRECTIONS) {
                int run = 1;
                for (int sign = -1; sign <= 1; sign += 2) {
                    int r = cell / width + sign * d[0], c = cell % width + sign * d[1];
                    while (r >= 0 && r < height && c >= 0 && c < width && cells[r * width + c] == player) {
                        run++;
                        r += sign * d[0];
                        c += sign * d[1];
                    }
                }
                best = Math.max(best, run);
            }
            return best;
        }

        /** The most stones of the player a window of `connect` cells through the cell
         *  would hold with a stone there, counting only windows the opponent is not in. */
        int openLineLength(int cell, int player) {
            int best = 0;
            int row = cell / width, col = cell % width;
            for (int[] d : DIRECTIONS) {
                for (int back = 0; back < connect; back++) {
                    int r0 = row - back * d[0], c0 = col - back * d[1];
                    int r1 = r0 + (connect - 1) * d[0], c1 = c0 + (connect - 1) * d[1];
                    if (r0 < 0 || r0 >= height || c0 < 0 || c0 >= width) continue;
                    if (r1 < 0 || r1 >= height || c1 < 0 || c1 >= width) continue;
                    int own = 1;
                    boolean open = true;
                    for (int i = 0; i < connect && open; i++) {
                        int at = (r0 + i * d[0]) * width + c0 + i * d[1];
                        if (at == cell) continue;
                        if (cells[at] == player) own++;
                        else if (cells[at] >= 0) open = false;
                    }
                    if (open) best = Math.max(best, own);
                }
            }
            return best;
        }

        /** The moves with which the player would make a line now. */
        List<Integer> winningMoves(int player) {
            List<Integer> wins = new ArrayList<>();
            for (int m : legalMoves()) {
                int cell = landing(m);
                cells[cell] = player;
                if (longestRun(cell, player) >= connect) wins.add(m);
                cells[cell] = -1;
            }
            return wins;
        }

        /** Legal moves next to the last stone, else next to the player's own stones. */
        List<Integer> movesNear(int lastCell, int player) {
            List<Integer> near = new ArrayList<>();
            if (lastCell >= 0) {
                for (int m : legalMoves()) if (touches(landing(m), lastCell)) near.add(m);
            }
            if (near.isEmpty()) {
                for (int m : legalMoves()) {
                    int cell = landing(m);
                    for (int other = 0; other < cells.length; other++) {
                        if (cells[other] == player && touches(cell, other)) {
                            near.add(m);
                            break;
                        }
                    }
                }
            }
            return near;
        }

        boolean touches(int a, int b) {
            if (gravity) return Math.abs(a % width - b % width) <= 1; // beside its column
            return a != b && Math.abs(a / width - b / width) <= 1 && Math.abs(a % width - b % width) <= 1;
        }
    }

    /** A small JSON reader: objects, arrays, strings, numbers (as BigDecimal), true, false, null. */
    static final class Json {
        final String text;
        int at;
        int depth;

        Json(String text) {
            this.text = text;
        }

        Object parse() {
            Object value = value();
            space();
            if (at != text.length()) throw new IllegalArgumentException("text after the value at " + at);
            return value;
        }

        static Long integer(Object value) {
            if (!(value instanceof BigDecimal)) return null;
            try {
                return ((BigDecimal) value).longValueExact();
            } catch (ArithmeticException e) {
                return null;
            }
        }

        static String quote(String s) {
            StringBuilder out = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                if (c == '"' || c == '\\') out.append('\\').append(c);
                else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                else out.append(c);
            }
            return out.append('"').toString();
        }

        void space() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) at++;
        }

        char peek() {
            if (at >= text.length()) throw new IllegalArgumentException("the line ends too soon");
            return text.charAt(at);
        }

        void expect(char c) {
            if (peek() != c) throw new IllegalArgumentException("expected '" + c + "' at " + at);
            at++;
        }

        Object value() {
            space();
            if (++depth > 64) throw new IllegalArgumentException("nested too deep");
            char c = peek();
            Object value;
            if (c == '{') {
                Map<String, Object> map = new LinkedHashMap<>();
                at++;
                space();
                if (peek() == '}') at++;
                else {
                    while (true) {
                        space();
                        String key = string();
                        space();
                        expect(':');
                        map.put(key, value());
                        space();
                        if (peek() != ',') break;
                        at++;
                    }
                    expect('}');
                }
                value = map;
            } else if (c == '[') {
                List<Object> list = new ArrayList<>();
                at++;
                space();
                if (peek() == ']') at++;
                else {
                    while (true) {
                        list.add(value());
                        space();
                        if (peek() != ',') break;
                        at++;
                    }
                    expect(']');
                }
                value = list;
            } else if (c == '"') {
                value = string();
            } else if (text.startsWith("true", at)) {
                at += 4;
                value = Boolean.TRUE;
            } else if (text.startsWith("false", at)) {
                at += 5;
                value = Boolean.FALSE;
            } else if (text.startsWith("null", at)) {
                at += 4;
                value = null;
            } else {
                int start = at;
                while (at < text.length() && "+-.eE0123456789".indexOf(text.charAt(at)) >= 0) at++;
                try {
                    value = new BigDecimal(text.substring(start, at));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("no JSON value at " + start);
                }
            }
            depth--;
            return value;
        }

        String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            for (char c = peek(); c != '"'; c = peek()) {
                at++;
                if (c == '\\') {
                    char e = peek();
                    at++;
                    switch (e) {
                        case 'n': out.append('\n'); break;
                        case 't': out.append('\t'); break;
                        case 'r': out.append('\r'); break;
                        case 'b': out.append('\b'); break;
                        case 'f': out.append('\f'); break;
                        case 'u':
                            if (at + 4 > text.length()) throw new IllegalArgumentException("short \\u escape");
                            out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                            at += 4;
                            break;
                        default: out.append(e);
                    }
                } else {
                    out.append(c);
                }
            }
            at++;
            return out.toString();
        }
    }
}
