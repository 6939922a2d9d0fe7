// A trivial protocol-v1 bot in Java: the lowest column that is not full.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class Bot {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        Pattern moves = Pattern.compile("\"moves\": \\[([^\\]]*)\\]");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\"quit\"")) {
                return;
            } else if (line.contains("\"hello\"")) {
                System.out.println("{\"type\": \"hello\", \"protocol\": 1, \"name\": \"java\"}");
            } else if (line.contains("\"new_game\"")) {
                System.out.println("{\"ok\": true}");
            } else {
                int[] height = new int[7];
                Matcher m = moves.matcher(line);
                if (m.find()) {
                    for (String s : m.group(1).split(",")) {
                        if (!s.isBlank()) height[Integer.parseInt(s.trim())]++;
                    }
                }
                int column = 0;
                while (height[column] >= 6) column++;
                System.out.println("{\"move\": " + column + ", \"info\": {\"processors\": "
                        + Runtime.getRuntime().availableProcessors() + "}}");
            }
            System.out.flush();
        }
    }
}
