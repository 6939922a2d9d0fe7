// A trivial protocol-v1 bot in C# (Mono): the lowest column that is not full.
using System;
using System.Text.RegularExpressions;

class Bot {
    static void Main() {
        var moves = new Regex("\"moves\": \\[([^\\]]*)\\]");
        string line;
        while ((line = Console.In.ReadLine()) != null) {
            if (line.Contains("\"quit\"")) {
                return;
            } else if (line.Contains("\"hello\"")) {
                Console.Out.WriteLine("{\"type\": \"hello\", \"protocol\": 1, \"name\": \"csharp\"}");
            } else if (line.Contains("\"new_game\"")) {
                Console.Out.WriteLine("{\"ok\": true}");
            } else {
                var height = new int[7];
                var m = moves.Match(line);
                if (m.Success) {
                    foreach (var s in m.Groups[1].Value.Split(',')) {
                        if (s.Trim().Length > 0) height[int.Parse(s.Trim())]++;
                    }
                }
                int column = 0;
                while (height[column] >= 6) column++;
                Console.Out.WriteLine("{\"move\": " + column + "}");
            }
            Console.Out.Flush();
        }
    }
}
