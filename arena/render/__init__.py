"""Games and matches as HTML for a page of one's own: the league site's animated
replay of a game for a notebook (:mod:`arena.render.replay`), a match's summary
(:mod:`arena.render.match`). Each is a self-contained fragment: no server, no
files, no ids that another fragment of the same page could hold."""
