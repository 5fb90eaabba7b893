"""The census's worker processes, on pebble: a model whose time is up has its process killed (torch.export in
native code too), a worker that dies fails only the model it ran, and workers are replaced after a number of
models (what torch.export keeps goes back to the system). The stage a model reached is kept in a small file per
model, so that a killed model's row still says where its time ran out."""
from __future__ import annotations

import multiprocessing
import tempfile
from concurrent.futures import CancelledError, TimeoutError as FutureTimeout
from dataclasses import replace
from typing import Callable

from ..errors import XcvizError
from .libraries import EXTRA_HINT
from .sources import Task
from .worker import Settings, census_one, empty_row, stage_file

MODELS_PER_WORKER = 20     # a worker process is replaced after this many models (torch.export keeps memory)


def crashed_row(task: Task, message: str) -> dict:
    """A model whose worker died under it (killed, out of memory, a crash in native code): run again on resume."""
    return empty_row(task) | {"status": "crashed", "stage": "worker", "error": message[:400]}


def timeout_row(task: Task, settings: Settings) -> dict:
    """A model whose process was killed when --timeout was up, at the stage it had reached."""
    stage = None
    if settings.stage_dir:
        try:
            with open(stage_file(settings.stage_dir, task), encoding="utf-8") as f:
                stage = f.read().strip() or None
        except OSError:   # it had not started a stage
            pass
    return empty_row(task) | {"status": "timeout", "stage": stage or ("load" if task.kind == "file" else "create"),
                              "error": f"took longer than {settings.timeout_s:g} s (--timeout)"}


def outcome(future, task: Task, settings: Settings) -> dict:
    """The row of a finished pebble future: its result, a timeout, or the crash of its process."""
    from pebble import ProcessExpired

    try:
        return future.result()
    except FutureTimeout:
        return timeout_row(task, settings)
    except ProcessExpired as e:
        return crashed_row(task, f"the worker process died while this model ran (exit code {e.exitcode})")
    except CancelledError:
        return crashed_row(task, "cancelled")
    except Exception as e:  # noqa: BLE001 - the pool could not run it (a worker that does not start)
        return crashed_row(task, f"the worker could not run it: {type(e).__name__}: {e}")


def _pool(jobs: int):
    try:
        from pebble import ProcessPool
    except ImportError:
        raise XcvizError("a census runs its models on pebble's process pool, and pebble is not installed",
                         hint=EXTRA_HINT) from None

    # spawned: the parent's torch threads must not be forked
    return ProcessPool(max_workers=jobs, max_tasks=MODELS_PER_WORKER, context=multiprocessing.get_context("spawn"))


def run_local(tasks: list[Task], settings: Settings, jobs: int, on_row: Callable[[dict], None]) -> None:
    """Every task on a pool of `jobs` worker processes, each with settings.timeout_s; rows in finishing order. An
    interrupted census (Ctrl-C) stops the pool: no worker outlives it."""
    from concurrent.futures import as_completed

    with tempfile.TemporaryDirectory(prefix="xcviz-census-") as stages:
        settings = replace(settings, stage_dir=stages)
        pool = _pool(max(1, min(jobs, len(tasks))))
        try:
            futures = {pool.schedule(census_one, args=(t, settings), timeout=settings.timeout_s): t for t in tasks}
            for f in as_completed(futures):
                on_row(outcome(f, futures[f], settings))
        except BaseException:
            pool.stop()   # the workers are killed: a model in flight must not outlive the census
            pool.join()
            raise
        pool.close()
        pool.join()


def census_timed(task: Task, settings: Settings) -> dict:
    """census_one where the caller is no pool of ours (a Dask worker): with a timeout, in a child process that is
    killed when the time is up; without one, here."""
    if not settings.timeout_s:
        return census_one(task, settings)
    import multiprocessing.process as mp

    if mp.current_process().daemon:
        return empty_row(task) | {"status": "error", "stage": "worker", "error": (
            "--timeout needs worker processes that may start one (a Dask worker started with "
            "distributed.worker.daemon: False; the LocalCluster of --executor dask is); none was started")}
    with tempfile.TemporaryDirectory(prefix="xcviz-census-") as stages:
        settings = replace(settings, stage_dir=stages)
        pool = _pool(1)
        try:
            return outcome(pool.schedule(census_one, args=(task, settings), timeout=settings.timeout_s), task, settings)
        finally:
            pool.stop()
            pool.join()
