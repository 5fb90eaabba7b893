"""The Dask worker plugin a census registers: the workers' statistical profiler off while its tasks may run."""
from __future__ import annotations

from distributed.diagnostics.plugin import WorkerPlugin

# Why: a Dask worker's statistical profiler (Worker.trigger_profile, every `distributed.worker.profile.interval`,
# 10 ms by default) takes the task thread's frame objects from sys._current_frames() and walks them on the
# event-loop thread, reading source lines through linecache (its file reads let the task thread run on).
# While another thread holds an exporting thread's frames, torch 2.13's non-strict torch.export loses track of
# a tensor now and then (an arange in transformers' mask code) and fails with "We found a fake tensor in the
# exported program constant's list" (torch/export/_trace.py, _export_for_training). The same exports in a
# process where no other thread holds their frames do not fail. So no profiling on a census's workers.
PROFILE = "profile"        # the worker's periodic callback (distributed.worker.Worker.periodic_callbacks)
_held: dict[int, tuple[int, object]] = {}   # id(worker) -> (censuses holding it off, the callback put aside)


class NoProfiler(WorkerPlugin):
    """Takes the profile callback out of the worker's periodic callbacks (stopped, and out of the dict so that
    a worker that joins after the census started does not start it with the others) and puts it back, running,
    when the last census that registered this plugin on that worker is done (a shared cluster keeps its
    profiler between censuses)."""

    def setup(self, worker) -> None:
        count, callback = _held.get(id(worker), (0, None))
        if count == 0:
            callback = getattr(worker, "periodic_callbacks", {}).pop(PROFILE, None)
            if callback is not None:
                callback.stop()
        _held[id(worker)] = (count + 1, callback)

    def teardown(self, worker) -> None:
        count, callback = _held.pop(id(worker), (1, None))
        if count > 1:
            _held[id(worker)] = (count - 1, callback)
        elif callback is not None:
            worker.periodic_callbacks[PROFILE] = callback
            callback.start()


def profiling(dask_worker) -> bool:
    """Whether the worker's statistical profiler is running (`client.run(profiling)` names the worker so)."""
    callback = getattr(dask_worker, "periodic_callbacks", {}).get(PROFILE)
    return callback is not None and callback.is_running()
