// The leftmost legal column, at once: what the arena adds to a C# program's move.
using System;

public static class Bot {
    static int Field(string line, string key, int fallback) {
        int at = line.IndexOf(key);
        if (at < 0) return fallback;
        int end = at + key.Length;
        while (end < line.Length && char.IsDigit(line[end])) end++;
        return int.Parse(line.Substring(at + key.Length, end - at - key.Length));
    }

    public static void Main() {
        int width = 7, height = 6;
        string line;
        while ((line = Console.ReadLine()) != null) {
            if (line.Contains("\"type\": \"hello\"")) {
                Console.WriteLine("{\"type\": \"hello\", \"protocol\": 1, \"name\": \"bench-csharp\", \"variants\": [{\"gravity\": [true]}]}");
            } else if (line.Contains("\"type\": \"new_game\"")) {
                width = Field(line, "\"width\": ", 7);
                height = Field(line, "\"height\": ", 6);
                Console.WriteLine("{\"ok\": true}");
            } else if (line.Contains("\"type\": \"move\"")) {
                var counts = new int[64];
                int start = line.IndexOf("\"moves\": [") + 10;
                string moves = line.Substring(start, line.IndexOf(']', start) - start);
                foreach (var move in moves.Split(',')) {
                    if (move.Trim().Length > 0) counts[int.Parse(move.Trim())]++;
                }
                int column = 0;
                while (column < width - 1 && counts[column] >= height) column++;
                Console.WriteLine("{\"move\": " + column + "}");
            } else if (line.Contains("\"type\": \"quit\"")) {
                return;
            }
            Console.Out.Flush();
        }
    }
}
