"""The options of every command that can play on a Dask cluster: --cluster,
--scheduler-file and --local, checked together with --workers."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click


def cluster_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--cluster ADDRESS, --scheduler-file PATH and --local; the command gets
    ``cluster``: the cluster setting the flags give (``none`` for --local, None when
    they say nothing, so the file's, ARENA_CLUSTER or DASK_SCHEDULER_ADDRESS decide)."""

    @functools.wraps(func)
    def command(*args: Any, cluster: str | None, scheduler_file: str | None, local: bool, **kwargs: Any) -> Any:
        return func(*args, cluster=chosen_cluster(cluster, scheduler_file, local, kwargs.get("workers")), **kwargs)

    command = click.option("--local", is_flag=True, help="Play on this machine, whatever cluster the file, "
                           "ARENA_CLUSTER or DASK_SCHEDULER_ADDRESS name (as --cluster none).")(command)
    command = click.option("--scheduler-file", metavar="PATH", type=click.Path(dir_okay=False),
                           help="Play on the Dask cluster whose scheduler wrote its address to PATH "
                           "('dask scheduler --scheduler-file', dask-jobqueue, dask-mpi).")(command)
    return click.option("--cluster", metavar="ADDRESS", help="Play on a Dask cluster: its scheduler's address "
                        "(tcp://host:8786, tls://...), or local:N for N worker processes here, or none "
                        "(default: the file's cluster, else ARENA_CLUSTER, else DASK_SCHEDULER_ADDRESS).")(command)


def chosen_cluster(cluster: str | None, scheduler_file: str | None, local: bool, workers: int | None
                   ) -> str | None:
    """The cluster setting of the flags (see :func:`cluster_options`); a mistake is
    a :class:`~arena.tournament.config.ConfigError`."""
    from arena.tournament.config import (
        CLUSTER_VARIABLE,
        DASK_ADDRESS_VARIABLE,
        NO_CLUSTER,
        SCHEDULER_FILE,
        ConfigError,
        check_cluster,
    )

    given = [flag for flag, value in (("--cluster", cluster), ("--scheduler-file", scheduler_file),
                                      ("--local", local)) if value]
    if len(given) > 1:
        raise ConfigError(f"{' and '.join(given)} each say where the games are played: give one of them")
    if workers and (scheduler_file or (cluster and cluster != NO_CLUSTER)):
        raise ConfigError(f"--workers {workers} sets the worker processes of this machine, and "
                          f"{given[0]} plays on a Dask cluster, whose workers are started there ('dask worker "
                          "ADDRESS --nworkers N --nthreads 1'): give one of them")
    if workers and not given:
        # --workers asks for processes here; a cluster the environment names would
        # take the games elsewhere and leave the flag unheeded.
        for variable in (CLUSTER_VARIABLE, DASK_ADDRESS_VARIABLE):
            if os.environ.get(variable) and os.environ[variable] != NO_CLUSTER:
                raise ConfigError(f"--workers {workers} sets the worker processes of this machine, and "
                                  f"{variable} names a Dask cluster ({os.environ[variable]}): add --local to play "
                                  "here, or leave out --workers to play there")
    if local:
        return NO_CLUSTER
    if scheduler_file:
        return SCHEDULER_FILE + str(Path(scheduler_file).resolve())
    if cluster is not None:
        check_cluster(cluster, lambda message: ConfigError(f"--cluster: {message}"))
    return cluster
