"""Files out and back in: JSON exports of recommendations and job plans, and replay.

* :mod:`deepvm_core.io.export`: a recommendation as JSON (inputs, catalog rows, answer);
* :mod:`deepvm_core.io.replay`: an export run again, and whether it still matches;
* :mod:`deepvm_core.io.plan_json`: a job plan (:func:`deepvm_core.job.plan_job`) as JSON.
"""
