# elixir-lines: from each cell it could play, looks along the four directions
# (horizontal, vertical and both diagonals) for the stones in a row on either side:
# a cell that completes its own line wins, one that completes the opponent's is
# blocked, else it plays where the runs it extends and cuts are longest.
# Speaks the arena's bot protocol, version 1 (docs/protocol.md): JSON lines on
# stdin and stdout, its log on stderr. No build: `elixir bot.exs`.

defmodule Lines.Json do
  @moduledoc "A small JSON reader: maps with string keys, lists, strings, numbers, true, false, nil."

  def decode(text) do
    case value(skip(text), 0) do
      {:ok, value, rest} ->
        if skip(rest) == "", do: {:ok, value}, else: {:error, "text after the value"}

      error ->
        error
    end
  end

  defp skip(<<c, rest::binary>>) when c in ~c" \t\r\n", do: skip(rest)
  defp skip(text), do: text

  defp value(_, depth) when depth > 64, do: {:error, "nested too deep"}
  defp value("{" <> rest, depth), do: object(skip(rest), %{}, depth + 1)
  defp value("[" <> rest, depth), do: array(skip(rest), [], depth + 1)
  defp value("\"" <> rest, _), do: string(rest, [])
  defp value("true" <> rest, _), do: {:ok, true, rest}
  defp value("false" <> rest, _), do: {:ok, false, rest}
  defp value("null" <> rest, _), do: {:ok, nil, rest}

  defp value(text, _) do
    case Integer.parse(text) do
      {n, <<c, _::binary>>} when c in ~c".eE" ->
        case Float.parse(text) do
          {f, rest} -> {:ok, f, rest}
          :error -> {:error, "bad number #{n}"}
        end

      {n, rest} ->
        {:ok, n, rest}

      :error ->
        {:error, "no JSON value at #{inspect(String.slice(text, 0, 20))}"}
    end
  end

  defp object("}" <> rest, acc, _), do: {:ok, acc, rest}

  defp object("\"" <> text, acc, depth) do
    with {:ok, key, rest} <- string(text, []),
         ":" <> rest <- skip(rest),
         {:ok, item, rest} <- value(skip(rest), depth) do
      case skip(rest) do
        "," <> rest -> object(skip(rest), Map.put(acc, key, item), depth)
        "}" <> rest -> {:ok, Map.put(acc, key, item), rest}
        _ -> {:error, "expected , or } in an object"}
      end
    else
      {:error, _} = error -> error
      _ -> {:error, "expected : after a key"}
    end
  end

  defp object(_, _, _), do: {:error, "expected a key in an object"}

  defp array("]" <> rest, acc, _), do: {:ok, Enum.reverse(acc), rest}

  defp array(text, acc, depth) do
    with {:ok, item, rest} <- value(text, depth) do
      case skip(rest) do
        "," <> rest -> array(skip(rest), [item | acc], depth)
        "]" <> rest -> {:ok, Enum.reverse([item | acc]), rest}
        _ -> {:error, "expected , or ] in an array"}
      end
    end
  end

  defp string("\"" <> rest, acc), do: {:ok, IO.iodata_to_binary(Enum.reverse(acc)), rest}

  defp string("\\u" <> <<hex::binary-size(4), rest::binary>>, acc) do
    case Integer.parse(hex, 16) do
      {code, ""} -> string(rest, [<<code::utf8>> | acc])
      _ -> {:error, "bad \\u escape"}
    end
  rescue
    ArgumentError -> string(rest, ["?" | acc])
  end

  defp string("\\" <> <<c, rest::binary>>, acc) do
    char = %{?n => "\n", ?t => "\t", ?r => "\r", ?b => "\b", ?f => "\f"}[c] || <<c>>
    string(rest, [char | acc])
  end

  defp string(<<c, rest::binary>>, acc), do: string(rest, [<<c>> | acc])
  defp string("", _), do: {:error, "the line ends inside a string"}

  @doc "A JSON text of a value made of maps, lists, strings, numbers, atoms."
  def encode(value) when is_map(value) do
    "{" <> Enum.map_join(value, ", ", fn {k, v} -> encode(to_string(k)) <> ": " <> encode(v) end) <> "}"
  end

  def encode(value) when is_list(value), do: "[" <> Enum.map_join(value, ", ", &encode/1) <> "]"
  def encode(value) when is_binary(value), do: "\"" <> escape(value) <> "\""
  def encode(nil), do: "null"
  def encode(value) when is_boolean(value) or is_number(value), do: to_string(value)

  defp escape(text) do
    for <<c <- text>>, into: "" do
      case c do
        ?" -> "\\\""
        ?\\ -> "\\\\"
        c when c < 0x20 -> "\\u" <> String.pad_leading(Integer.to_string(c, 16), 4, "0")
        c -> <<c>>
      end
    end
  end
end

defmodule Lines.Board do
  @moduledoc """
  A board of {row, column} => player (0 or 1), row 0 at the top. Move numbers are
  the protocol's: columns with gravity, else cells column * height + row with row 0
  at the bottom (the board's row height - 1).
  """

  defstruct [:width, :height, :connect, :gravity, stones: %{}]

  @directions [{0, 1}, {1, 0}, {1, 1}, {1, -1}]

  @doc "The cell where the move puts a stone now, or nil if the move is not legal."
  def landing(b, move) when is_integer(move) do
    cond do
      b.gravity and move >= 0 and move < b.width ->
        case Enum.find((b.height - 1)..0//-1, fn row -> not Map.has_key?(b.stones, {row, move}) end) do
          nil -> nil
          row -> {row, move}
        end

      not b.gravity and move >= 0 and move < b.width * b.height ->
        cell = {b.height - 1 - rem(move, b.height), div(move, b.height)}
        if Map.has_key?(b.stones, cell), do: nil, else: cell

      true ->
        nil
    end
  end

  def landing(_, _), do: nil

  def moves(b), do: Enum.filter(0..((if b.gravity, do: b.width, else: b.width * b.height) - 1), &landing(b, &1))

  def put(b, cell, player), do: %{b | stones: Map.put(b.stones, cell, player)}

  @doc "The player's stones in a row on each side of the cell, for each direction: [{before, after}]."
  def runs(b, {row, col}, player) do
    for {dr, dc} <- @directions do
      {run(b, row - dr, col - dc, -dr, -dc, player), run(b, row + dr, col + dc, dr, dc, player)}
    end
  end

  defp run(b, row, col, dr, dc, player) do
    if Map.get(b.stones, {row, col}) == player, do: 1 + run(b, row + dr, col + dc, dr, dc, player), else: 0
  end

  @doc "The longest line a stone of the player on the cell would make."
  def line(b, cell, player), do: b |> runs(cell, player) |> Enum.map(fn {x, y} -> x + y + 1 end) |> Enum.max()
end

defmodule Lines.Bot do
  alias Lines.{Board, Json}

  @hello %{
    "type" => "hello",
    "protocol" => 1,
    "name" => "elixir-lines",
    "author" => "connectk-arena examples",
    "version" => "1",
    "options" => %{},
    "variants" => [%{"width" => [3, 12], "height" => [3, 12], "connect" => [3, 12], "gravity" => [true, false]}]
  }

  def main do
    loop(nil)
  end

  defp loop(game) do
    case IO.gets(:stdio, "") do
      :eof -> System.halt(0)
      {:error, _} -> System.halt(0)
      line -> line |> String.trim() |> handle(game) |> loop()
    end
  end

  defp handle("", game), do: game

  defp handle(line, game) do
    case Json.decode(line) do
      {:ok, %{"type" => type} = request} -> request(type, request, game)
      {:ok, _} -> answer(%{"error" => "a request is an object with a type"}, game)
      {:error, why} -> answer(%{"error" => "unreadable request: " <> why}, game)
    end
  end

  defp request("hello", _, game), do: answer(@hello, game)
  defp request("quit", _, _), do: System.halt(0)
  defp request("new_game", req, _), do: new_game(req)
  defp request("move", _, nil), do: answer(%{"error" => "move before new_game"}, nil)
  defp request("move", req, game), do: answer(move(req, game), game)
  defp request(_, _, game), do: answer(%{"error" => "unknown request type"}, game)

  defp answer(message, game) do
    IO.write(:stdio, Json.encode(message) <> "\n")
    game
  end

  defp new_game(%{"rules" => %{"width" => w, "height" => h, "connect" => k, "gravity" => g} = rules} = req)
       when is_integer(w) and is_integer(h) and is_integer(k) and is_boolean(g) do
    cond do
      w not in 3..12 or h not in 3..12 or k not in 3..12 ->
        answer(%{"error" => "new_game: this bot plays boards of 3 to 12 a side, connect 3 to 12"}, nil)

      Map.get(rules, "scoring", "line") != "line" ->
        answer(%{"error" => "new_game: this bot plays line scoring only"}, nil)

      true ->
        seed = req["seed"]
        :rand.seed(:exsss, if(is_integer(seed), do: seed, else: 1))
        IO.puts(:stderr, "elixir-lines: #{w}x#{h} connect #{k}, #{if g, do: "gravity", else: "no gravity"}")
        answer(%{"ok" => true}, %Board{width: w, height: h, connect: k, gravity: g})
    end
  end

  defp new_game(_), do: answer(%{"error" => "new_game: rules need whole width, height, connect and gravity"}, nil)

  defp move(%{"moves" => moves}, game) when is_list(moves) do
    case replay(moves, %{game | stones: %{}}, 0) do
      {:ok, board} ->
        case Board.moves(board) do
          [] -> %{"error" => "the board is full: there is nothing to play"}
          legal -> choose(board, legal, rem(length(moves), 2))
        end

      {:error, why} ->
        %{"error" => why}
    end
  end

  defp move(_, _), do: %{"error" => "move: no list of moves"}

  defp replay([], board, _), do: {:ok, board}

  defp replay([move | rest], board, ply) do
    cell = is_integer(move) && Board.landing(board, move)

    cond do
      not is_integer(move) ->
        {:error, "move #{ply + 1} is not a whole number"}

      cell == nil ->
        count = if board.gravity, do: board.width, else: board.width * board.height

        what =
          cond do
            move < 0 or move >= count -> "is off the board (0..#{count - 1})"
            board.gravity -> "is a full column"
            true -> "is a taken cell"
          end

        {:error, "move #{ply + 1} (#{move}) #{what}"}

      Board.line(board, cell, rem(ply, 2)) >= board.connect ->
        {:error,
         if(rest == [], do: "the game is over: move #{ply + 1} won it", else: "moves after the game was won (by move #{ply + 1})")}

      true ->
        replay(rest, Board.put(board, cell, rem(ply, 2)), ply + 1)
    end
  end

  # Each candidate is scored by looking along the four directions from its cell:
  # a win first, a block second, then the longest runs it makes and cuts.
  defp choose(board, legal, me) do
    scored =
      for move <- legal do
        cell = Board.landing(board, move)
        mine = Board.runs(board, cell, me) |> Enum.map(fn {x, y} -> x + y end)
        theirs = Board.runs(board, cell, 1 - me) |> Enum.map(fn {x, y} -> x + y end)

        {why, key} =
          cond do
            Enum.max(mine) + 1 >= board.connect -> {"win", 1_000_000}
            Enum.max(theirs) + 1 >= board.connect -> {"block", 100_000}
            true -> {"lines", Enum.sum(Enum.map(mine, &(&1 * &1 * 4))) + Enum.sum(Enum.map(theirs, &(&1 * &1 * 3)))}
          end

        {key, why, move}
      end

    best = scored |> Enum.map(&elem(&1, 0)) |> Enum.max()
    {_, why, move} = scored |> Enum.filter(&(elem(&1, 0) == best)) |> Enum.random()
    IO.puts(:stderr, "ply #{map_size(board.stones)}: plays #{move} (#{why}, #{best})")
    %{"move" => move, "info" => %{"why" => why, "score" => best}}
  end
end

Lines.Bot.main()
