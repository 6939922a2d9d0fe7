# The leftmost legal column, at once: what the arena adds to an Elixir program's move.
defmodule Bench do
  def field(line, key, fallback) do
    case Regex.run(~r/"#{key}": (\d+)/, line) do
      [_, digits] -> String.to_integer(digits)
      _ -> fallback
    end
  end

  def loop(width, height) do
    case IO.read(:stdio, :line) do
      :eof -> :ok
      {:error, _} -> :ok
      line ->
        cond do
          String.contains?(line, ~s("type": "hello")) ->
            IO.puts(~s({"type": "hello", "protocol": 1, "name": "bench-elixir", "variants": [{"gravity": [true]}]}))
            loop(width, height)
          String.contains?(line, ~s("type": "new_game")) ->
            IO.puts(~s({"ok": true}))
            loop(field(line, "width", 7), field(line, "height", 6))
          String.contains?(line, ~s("type": "move")) ->
            [_, moves] = Regex.run(~r/"moves": \[([^\]]*)\]/, line)
            counts = moves |> String.split(",", trim: true) |> Enum.map(&String.to_integer(String.trim(&1))) |> Enum.frequencies()
            column = Enum.find(0..(width - 1), width - 1, fn c -> Map.get(counts, c, 0) < height end)
            IO.puts(~s({"move": #{column}}))
            loop(width, height)
          String.contains?(line, ~s("type": "quit")) -> :ok
          true -> loop(width, height)
        end
    end
  end
end

Bench.loop(7, 6)
