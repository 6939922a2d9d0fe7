// csharp-blocker: a connect-k bot that reads the board one cell at a time, with two
// strategies (option `strategy`): "blocking" takes a win, else blocks the opponent's
// longest threat before building its own lines; "selfish" only ever builds its own
// lines. Speaks the arena's bot protocol, version 1 (docs/protocol.md): JSON lines on
// stdin and stdout, its log on stderr.

using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text;

public static class Program
{
    const string Hello = "{\"type\": \"hello\", \"protocol\": 1, \"name\": \"csharp-blocker\", "
        + "\"author\": \"connectk-arena examples\", \"version\": \"1\", "
        + "\"options\": {\"strategy\": {\"type\": \"str\", \"default\": \"blocking\", "
        + "\"help\": \"blocking (block the opponent's threats first) or selfish (only build its own lines)\"}}, "
        + "\"variants\": [{\"width\": [3, 20], \"height\": [3, 20], \"connect\": [3, 20], \"gravity\": [true, false]}]}";

    static TextWriter output;
    static Game game;

    public static int Main()
    {
        var utf8 = new UTF8Encoding(false);
        var input = new StreamReader(Console.OpenStandardInput(), utf8);
        output = new StreamWriter(Console.OpenStandardOutput(), utf8);
        string line;
        while ((line = input.ReadLine()) != null)
        {
            if (line.Trim().Length == 0) continue;
            Dictionary<string, object> request;
            try
            {
                request = new Json(line).Parse() as Dictionary<string, object>;
            }
            catch (FormatException e)
            {
                Answer(Error("unreadable request: " + e.Message));
                continue;
            }
            object type = null;
            if (request == null || !request.TryGetValue("type", out type) || !(type is string))
            {
                Answer(Error("a request is an object with a type"));
                continue;
            }
            switch ((string)type)
            {
                case "hello": Answer(Hello); break;
                case "new_game": Answer(NewGame(request)); break;
                case "move": Answer(game == null ? Error("move before new_game") : game.Move(request)); break;
                case "quit": return 0;
                default: Answer(Error("unknown request type")); break;
            }
        }
        return 0;
    }

    static void Answer(string line)
    {
        output.Write(line);
        output.Write('\n');
        output.Flush();
    }

    public static string Error(string reason)
    {
        return "{\"error\": " + Json.Quote(reason) + "}";
    }

    static string NewGame(Dictionary<string, object> request)
    {
        var rules = Json.Get(request, "rules") as Dictionary<string, object>;
        long? width = Json.Integer(Json.Get(rules, "width")), height = Json.Integer(Json.Get(rules, "height"));
        long? connect = Json.Integer(Json.Get(rules, "connect"));
        object gravity = Json.Get(rules, "gravity");
        if (width == null || height == null || connect == null || !(gravity is bool))
            return Error("new_game: rules need whole width, height, connect and a true/false gravity");
        if (width < 3 || width > 20 || height < 3 || height > 20 || connect < 3 || connect > 20)
            return Error("new_game: this bot plays boards of 3 to 20 a side, connect 3 to 20");
        object scoring = Json.Get(rules, "scoring");
        if (scoring != null && !"line".Equals(scoring))
            return Error("new_game: this bot plays line scoring only");
        object strategy = Json.Get(Json.Get(request, "options") as Dictionary<string, object>, "strategy") ?? "blocking";
        if (!"blocking".Equals(strategy) && !"selfish".Equals(strategy))
            return Error("new_game: strategy must be blocking or selfish, got " + strategy);
        // The seed may be any integer, even past 64 bits: hash its digits.
        var seed = Json.Get(request, "seed") as JsonNumber;
        int hash = 17;
        foreach (char c in seed == null ? "" : seed.Text) hash = unchecked(hash * 31 + c);
        game = new Game((int)width, (int)height, (int)connect, (bool)gravity, (string)strategy, new Random(hash));
        Console.Error.WriteLine("csharp-blocker: {0}x{1} connect {2}, {3}, strategy {4}",
            width, height, connect, (bool)gravity ? "gravity" : "no gravity", strategy);
        return "{\"ok\": true}";
    }
}

/// One game: its rules and strategy. Cells are numbered row * width + column, row 0 at
/// the top; moves are the protocol's numbers (the column, or without gravity
/// column * height + row from the bottom), which Landing turns into cells.
public sealed class Game
{
    static readonly int[,] Directions = { { 0, 1 }, { 1, 0 }, { 1, 1 }, { 1, -1 } };
    readonly int width, height, connect;
    readonly bool gravity;
    readonly string strategy;
    readonly Random rng;
    int[] cells;
    int[] filled;

    public Game(int width, int height, int connect, bool gravity, string strategy, Random rng)
    {
        this.width = width;
        this.height = height;
        this.connect = connect;
        this.gravity = gravity;
        this.strategy = strategy;
        this.rng = rng;
    }

    int Landing(int move)
    {
        if (gravity)
            return move < 0 || move >= width || filled[move] >= height ? -1 : (height - 1 - filled[move]) * width + move;
        if (move < 0 || move >= cells.Length) return -1;
        int cell = CellOf(move);
        return cells[cell] >= 0 ? -1 : cell;
    }

    // Without gravity the protocol numbers a cell column * height + row, row 0 at the
    // bottom: the cell of this board it names.
    int CellOf(int move)
    {
        return (height - 1 - move % height) * width + move / height;
    }

    public string Move(Dictionary<string, object> request)
    {
        var moves = Json.Get(request, "moves") as List<object>;
        if (moves == null) return Program.Error("move: no list of moves");
        cells = new int[width * height];
        for (int i = 0; i < cells.Length; i++) cells[i] = -1;
        filled = new int[width];
        for (int i = 0; i < moves.Count; i++)
        {
            long? move = Json.Integer(moves[i]);
            int count = gravity ? width : width * height;
            if (move == null) return Program.Error("move " + (i + 1) + " is not a whole number");
            if (move < 0 || move >= count)
                return Program.Error("move " + (i + 1) + " (" + move + ") is off the board (0.." + (count - 1) + ")");
            int cell = Landing((int)move);
            if (cell < 0)
                return Program.Error("move " + (i + 1) + " (" + move + ") is a " + (gravity ? "full column" : "taken cell"));
            Put(cell, i % 2);
            if (OpenLine(cell, i % 2, true) >= connect)
                return Program.Error(i + 1 < moves.Count
                    ? "moves after the game was won (by move " + (i + 1) + ")"
                    : "the game is over: move " + (i + 1) + " won it");
        }
        int me = moves.Count % 2, them = 1 - me;
        var best = new List<int>();
        long bestKey = long.MinValue;
        string why = "";
        for (int move = 0; move < (gravity ? width : cells.Length); move++)
        {
            int cell = Landing(move);
            if (cell < 0) continue;
            int mine = OpenLine(cell, me, false), theirs = OpenLine(cell, them, false);
            long key;
            string reason;
            if (mine >= connect) { key = 1L << 40; reason = "win"; }
            else if (strategy == "selfish") { key = mine * 1000 + Centre(cell); reason = "line " + mine; }
            else if (theirs >= connect) { key = 1L << 39; reason = "block"; }
            else
            {
                // A threat is a line one stone short of the opponent's making a win
                // threat: blocked before any line of its own is built.
                int threat = theirs >= connect - 1 ? theirs : 0;
                key = threat * 100000L + mine * 1000 + theirs * 100 + Centre(cell);
                if (GivesWinAbove(cell, them)) key -= 1L << 30;
                reason = threat > 0 ? "threat " + threat : "line " + mine;
            }
            if (key > bestKey) { bestKey = key; best.Clear(); why = reason; }
            if (key == bestKey) best.Add(move);
        }
        if (best.Count == 0) return Program.Error("the board is full: there is nothing to play");
        int chosen = best[rng.Next(best.Count)];
        Console.Error.WriteLine("ply {0}: {1} plays {2} ({3})", moves.Count, strategy, chosen, why);
        return "{\"move\": " + chosen + ", \"info\": {\"strategy\": \"" + strategy + "\", \"why\": " + Json.Quote(why) + "}}";
    }

    void Put(int cell, int player)
    {
        cells[cell] = player;
        if (gravity) filled[cell % width]++;
    }

    // Nearer the centre is better, as a tie-break: 0 at a corner up to width + height.
    int Centre(int cell)
    {
        int r = cell / width, c = cell % width;
        return (width - Math.Abs(2 * c - (width - 1)) + height - Math.Abs(2 * r - (height - 1))) / 2;
    }

    // With gravity a stone here opens the cell above it: bad if the opponent wins there.
    bool GivesWinAbove(int cell, int them)
    {
        if (!gravity || cell < width) return false;
        cells[cell] = 2; // neither player's, only to hold the cell
        bool gives = OpenLine(cell - width, them, false) >= connect;
        cells[cell] = -1;
        return gives;
    }

    // The most stones of the player in a window of `connect` cells through this cell,
    // counting the cell as the player's and only windows the other player is not in.
    // `placed`: the stone is on the board already.
    int OpenLine(int cell, int player, bool placed)
    {
        int best = 0, row = cell / width, col = cell % width;
        for (int d = 0; d < 4; d++)
        {
            int dr = Directions[d, 0], dc = Directions[d, 1];
            for (int back = 0; back < connect; back++)
            {
                int r0 = row - back * dr, c0 = col - back * dc;
                int r1 = r0 + (connect - 1) * dr, c1 = c0 + (connect - 1) * dc;
                if (r0 < 0 || r0 >= height || c0 < 0 || c0 >= width || r1 < 0 || r1 >= height || c1 < 0 || c1 >= width)
                    continue;
                int own = 0;
                bool open = true;
                for (int i = 0; i < connect && open; i++)
                {
                    int at = (r0 + i * dr) * width + c0 + i * dc;
                    if (at == cell || cells[at] == player) own++;
                    else if (cells[at] >= 0) open = false;
                }
                if (open && own > best) best = own;
            }
        }
        return placed || cells[cell] < 0 ? best : 0;
    }
}

/// A number as written, so that a seed of any size is kept whole.
public sealed class JsonNumber
{
    public string Text;
    public double Value;
}

/// A small JSON reader: objects (Dictionary), arrays (List), strings, numbers
/// (JsonNumber), true, false and null.
public sealed class Json
{
    readonly string text;
    int at, depth;

    public Json(string text) { this.text = text; }

    public object Parse()
    {
        object value = Value();
        Space();
        if (at != text.Length) throw new FormatException("text after the value at " + at);
        return value;
    }

    public static object Get(Dictionary<string, object> obj, string key)
    {
        object value;
        return obj != null && obj.TryGetValue(key, out value) ? value : null;
    }

    public static long? Integer(object value)
    {
        var number = value as JsonNumber;
        if (number == null || number.Value != Math.Floor(number.Value) || Math.Abs(number.Value) > 1e15) return null;
        return (long)number.Value;
    }

    public static string Quote(string s)
    {
        var out_ = new StringBuilder("\"");
        foreach (char c in s)
        {
            if (c == '"' || c == '\\') out_.Append('\\').Append(c);
            else if (c < 0x20) out_.AppendFormat("\\u{0:x4}", (int)c);
            else out_.Append(c);
        }
        return out_.Append('"').ToString();
    }

    void Space() { while (at < text.Length && char.IsWhiteSpace(text[at])) at++; }

    char Peek()
    {
        if (at >= text.Length) throw new FormatException("the line ends too soon");
        return text[at];
    }

    void Expect(char c)
    {
        if (Peek() != c) throw new FormatException("expected '" + c + "' at " + at);
        at++;
    }

    object Value()
    {
        Space();
        if (++depth > 64) throw new FormatException("nested too deep");
        char c = Peek();
        object value;
        if (c == '{')
        {
            var obj = new Dictionary<string, object>();
            at++;
            Space();
            if (Peek() == '}') at++;
            else
            {
                while (true)
                {
                    Space();
                    string key = String();
                    Space();
                    Expect(':');
                    obj[key] = Value();
                    Space();
                    if (Peek() != ',') break;
                    at++;
                }
                Expect('}');
            }
            value = obj;
        }
        else if (c == '[')
        {
            var list = new List<object>();
            at++;
            Space();
            if (Peek() == ']') at++;
            else
            {
                while (true)
                {
                    list.Add(Value());
                    Space();
                    if (Peek() != ',') break;
                    at++;
                }
                Expect(']');
            }
            value = list;
        }
        else if (c == '"') value = String();
        else if (string.CompareOrdinal(text, at, "true", 0, 4) == 0) { at += 4; value = true; }
        else if (string.CompareOrdinal(text, at, "false", 0, 5) == 0) { at += 5; value = false; }
        else if (string.CompareOrdinal(text, at, "null", 0, 4) == 0) { at += 4; value = null; }
        else
        {
            int start = at;
            while (at < text.Length && "+-.eE0123456789".IndexOf(text[at]) >= 0) at++;
            double number;
            string written = text.Substring(start, at - start);
            if (!double.TryParse(written, NumberStyles.Float, CultureInfo.InvariantCulture, out number))
                throw new FormatException("no JSON value at " + start);
            value = new JsonNumber { Text = written, Value = number };
        }
        depth--;
        return value;
    }

    string String()
    {
        Expect('"');
        var out_ = new StringBuilder();
        for (char c = Peek(); c != '"'; c = Peek())
        {
            at++;
            if (c != '\\') { out_.Append(c); continue; }
            char e = Peek();
            at++;
            switch (e)
            {
                case 'n': out_.Append('\n'); break;
                case 't': out_.Append('\t'); break;
                case 'r': out_.Append('\r'); break;
                case 'b': out_.Append('\b'); break;
                case 'f': out_.Append('\f'); break;
                case 'u':
                    if (at + 4 > text.Length) throw new FormatException("short \\u escape");
                    out_.Append((char)int.Parse(text.Substring(at, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
                    at += 4;
                    break;
                default: out_.Append(e); break;
            }
        }
        at++;
        return out_.ToString();
    }
}
