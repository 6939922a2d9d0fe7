// A Connect Four bot speaking protocol v1: the first column that is not full.
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class Bot {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\"quit\"")) break;
            if (line.contains("\"hello\"")) {
                System.out.println("{\"type\": \"hello\", \"protocol\": 1, \"name\": \"first-java\"}");
            } else if (line.contains("\"new_game\"")) {
                System.out.println("{\"ok\": true}");
            } else {
                int[] count = new int[7];
                String list = line.substring(line.indexOf('[', line.indexOf("\"moves\"")) + 1);
                list = list.substring(0, list.indexOf(']'));
                for (String part : list.split(",")) {
                    if (!part.isBlank()) count[Integer.parseInt(part.trim())]++;
                }
                int move = 0;
                while (move < 6 && count[move] >= 6) move++;
                System.out.println("{\"move\": " + move + "}");
            }
            System.out.flush();
        }
    }
}
