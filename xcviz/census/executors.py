"""Where a census's tasks run: a local process pool (census.pool, on pebble), or a Dask distributed cluster (its
futures, retries and as_completed do the scheduling and the collection; with --timeout each model runs in a
process of its own that is killed when the time is up)."""
from __future__ import annotations

import contextlib
import logging
from typing import Callable, Iterable

from ..errors import XcvizError
from .libraries import EXTRA_HINT
from .sources import Task
from .pool import census_timed, crashed_row, run_local
from .worker import Settings, unavailable_row

EXECUTORS = ("local", "dask")


def run_dask(tasks: list[Task], settings: Settings, jobs: int, on_row: Callable[[dict], None],
             scheduler: str | None = None, retries: int = 1) -> None:
    """Submit every task to a Dask cluster (the scheduler at `scheduler`, or a LocalCluster of `jobs`
    single-threaded worker processes) and collect with as_completed. A task whose workers keep dying ends
    as a crashed row after Dask's own retries. The workers' profiler is off while the census runs."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise XcvizError("--executor dask needs dask.distributed, which is not installed", hint=EXTRA_HINT) from None
    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError) as e:
                raise XcvizError(f"cannot reach the Dask scheduler ({e})"[:300], where=scheduler,
                                 hint="start one with `dask scheduler`, or leave out --scheduler for a LocalCluster") from None
        else:
            import dask

            # not daemonic: a worker may start the process a model with --timeout runs in (pool.census_timed)
            with dask.config.set({"distributed.worker.daemon": False}):
                cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=logging.ERROR)
            client = Client(cluster)
        import uuid

        from .dask_plugin import NoProfiler

        run_id = uuid.uuid4().hex[:8]   # keys unique on a scheduler that other censuses share
        # the workers' statistical profiler holds the task thread's frames, which makes torch.export fail
        # now and then (see dask_plugin): off on every worker, and on those that join, until the census ends
        plugin = f"xcviz-census-no-profiler-{run_id}"
        try:
            client.register_plugin(NoProfiler(), name=plugin)
            futures = client.map(census_timed, tasks, settings=settings, pure=False, retries=retries,
                                 key=[f"census-{run_id}-{i}" for i in range(len(tasks))])
            where = {f.key: t for f, t in zip(futures, tasks)}
            for f in as_completed(futures):
                if f.status == "finished":
                    on_row(f.result())
                else:
                    on_row(crashed_row(where[f.key], f"{type(f.exception()).__name__}: {f.exception()}"))
                f.release()
        finally:
            # a shared cluster gets its profiler back; a scheduler already gone (Ctrl-C, a dead LocalCluster)
            # has no plugin left to remove, and that must not hide why the census stopped
            with contextlib.suppress(Exception):
                client.unregister_worker_plugin(plugin)
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def check(executor: str, scheduler: str | None) -> None:
    if executor not in EXECUTORS:
        raise XcvizError(f"--executor {executor!r}: not one of {', '.join(EXECUTORS)}")
    if scheduler and executor != "dask":
        raise XcvizError("--scheduler needs --executor dask", hint="add --executor dask")


def run(tasks: Iterable[Task], settings: Settings, on_row: Callable[[dict], None], *, executor: str = "local",
        jobs: int = 1, scheduler: str | None = None, retries: int = 1) -> None:
    tasks = list(tasks)
    check(executor, scheduler)
    for t in [t for t in tasks if t.unavailable]:   # a source whose library does not import: its row, at once
        on_row(unavailable_row(t, t.unavailable))
    tasks = [t for t in tasks if not t.unavailable]
    if not tasks:
        return
    if executor == "local":
        run_local(tasks, settings, jobs, on_row)
    else:
        run_dask(tasks, settings, jobs, on_row, scheduler, retries)
