// The leftmost legal column, at once: what the arena adds to a Java program's move.
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class Bot {
    static int field(String line, String key, int fallback) {
        int at = line.indexOf(key);
        if (at < 0) return fallback;
        int end = at + key.length();
        while (end < line.length() && Character.isDigit(line.charAt(end))) end++;
        return Integer.parseInt(line.substring(at + key.length(), end));
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int width = 7, height = 6;
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\"type\": \"hello\"")) {
                System.out.println("{\"type\": \"hello\", \"protocol\": 1, \"name\": \"bench-java\", \"variants\": [{\"gravity\": [true]}]}");
            } else if (line.contains("\"type\": \"new_game\"")) {
                width = field(line, "\"width\": ", 7);
                height = field(line, "\"height\": ", 6);
                System.out.println("{\"ok\": true}");
            } else if (line.contains("\"type\": \"move\"")) {
                int[] counts = new int[64];
                String moves = line.substring(line.indexOf("\"moves\": [") + 10, line.indexOf(']', line.indexOf("\"moves\": [")));
                for (String move : moves.split(",")) {
                    if (!move.isBlank()) counts[Integer.parseInt(move.trim())]++;
                }
                int column = 0;
                while (column < width - 1 && counts[column] >= height) column++;
                System.out.println("{\"move\": " + column + "}");
            } else if (line.contains("\"type\": \"quit\"")) {
                return;
            }
            System.out.flush();
        }
    }
}
