"""The league site: ``arena serve``."""

from __future__ import annotations

import errno
import socket

import click

from arena.cli.main import ArenaUsageError, db_option, main, open_store


@main.command("serve")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every one).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port to listen on.")
@click.option("--behind-proxy", is_flag=True,
              help="An HTTPS proxy on this machine forwards the visitors: trust its X-Forwarded-For and "
                   "X-Forwarded-Proto (a request it says came over HTTPS gets a Secure session cookie).")
@click.option("--secure-cookies", is_flag=True,
              help="The session cookie goes over HTTPS only (Secure), whatever a request says: for a site "
                   "visitors reach only over HTTPS.")
def serve_command(db: str, host: str, port: int, behind_proxy: bool, secure_cookies: bool) -> None:
    """Serve the league site: standings, crosstables, bots, matchups, games with replays, a JSON API.

    It reads the database while tournaments write to it; Ctrl-C stops it.
    """
    # A missing or foreign database is one line here, not a page of errors later; an older
    # one is brought up to date once, as the writing commands do (the site stores accounts
    # and uploads), instead of being read through a copy in memory on every request.
    open_store(db, write=True)
    listener = _listen(host, port)
    import uvicorn  # the web stack loads only for this command

    from arena.web.app import create_app

    shown = f"[{host}]" if ":" in host else host
    click.echo(f"Serving the league in {db} at http://{shown}:{listener.getsockname()[1]}/ (Ctrl-C stops it)")
    # The visitor's address (by which sign-in delays know the addresses an account has
    # used) and scheme are the connection's own unless a proxy on this machine is
    # declared: otherwise anyone who can connect could name any address in X-Forwarded-For.
    config = uvicorn.Config(create_app(db, secure_cookies), log_level="warning", lifespan="off",
                            proxy_headers=behind_proxy, forwarded_allow_ips="127.0.0.1" if behind_proxy else "")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[listener])
    except KeyboardInterrupt:
        pass
    click.echo("Stopped.")


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, made here so that a bad host or a port in use is one line."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ArenaUsageError(f"bad --host {host!r}: {exc.strerror}; give an address such as 127.0.0.1") from None
    family, kind, proto, _, address = infos[0]
    listener = socket.socket(family, kind, proto)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(address)
    except OSError as exc:
        listener.close()
        if exc.errno == errno.EADDRINUSE:
            raise ArenaUsageError(f"port {port} on {host} is in use: pick another with --port") from None
        raise ArenaUsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    listener.listen(128)
    return listener
