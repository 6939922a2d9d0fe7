# A trivial protocol-v1 bot in Elixir: the lowest column that is not full. It
# reports how many schedulers the BEAM started (the arena bounds them).
defmodule Bot do
  def loop do
    case IO.read(:stdio, :line) do
      :eof -> :ok
      {:error, _} -> :ok
      line -> if answer(line), do: loop(), else: :ok
    end
  end

  defp answer(line) do
    cond do
      String.contains?(line, "\"quit\"") ->
        false

      String.contains?(line, "\"hello\"") ->
        IO.puts(~s({"type": "hello", "protocol": 1, "name": "elixir"}))

      String.contains?(line, "\"new_game\"") ->
        IO.puts(~s({"ok": true}))

      true ->
        [_, list] = Regex.run(~r/"moves": \[([^\]]*)\]/, line)
        height = list |> String.split(",", trim: true) |> Enum.map(&String.to_integer(String.trim(&1)))
                 |> Enum.frequencies()
        column = Enum.find(0..6, fn c -> Map.get(height, c, 0) < 6 end)
        IO.puts(~s({"move": #{column}, "info": {"schedulers": #{System.schedulers_online()}}}))
    end
  end
end

Bot.loop()
