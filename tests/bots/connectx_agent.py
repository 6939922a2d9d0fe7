"""A ConnectX agent as written for the Kaggle environment: it knows nothing of the
arena. It wins when it can, blocks when it must, else plays the centre-most column."""

import random


def _drop(board, columns, rows, column, mark):
    """The board after `mark` plays `column` (row 0 is the top), or None if full."""
    for row in range(rows - 1, -1, -1):
        if board[row * columns + column] == 0:
            new = list(board)
            new[row * columns + column] = mark
            return new
    return None


def _wins(board, columns, rows, inarow, mark):
    for r in range(rows):
        for c in range(columns):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + i * dr, c + i * dc) for i in range(inarow)]
                if all(0 <= rr < rows and 0 <= cc < columns and board[rr * columns + cc] == mark
                       for rr, cc in cells):
                    return True
    return False


def helper_not_the_agent(x):
    return x


def agent(observation, configuration):
    columns, rows, inarow = configuration.columns, configuration.rows, configuration.inarow
    board, me = observation.board, observation.mark
    other = 3 - me
    legal = [c for c in range(columns) if board[c] == 0]
    for mark in (me, other):
        for column in legal:
            after = _drop(board, columns, rows, column, mark)
            if _wins(after, columns, rows, inarow, mark):
                return column
    centre = (columns - 1) / 2
    best = min(abs(c - centre) for c in legal)
    return random.choice([c for c in legal if abs(c - centre) == best])
