"""boto3 sessions that share AWS's API models: one botocore data loader per process.

A new boto3 session gets a new loader, which parses each service's API model again: the EC2
model is 0.14 s of JSON per session on these machines (a client took 0.23 s in a new session,
0.09 s in an existing one), and ``deepvm watch`` makes a session per check, as the fleet
launcher and the catalog fetch make one per run. The models are read-only, so every session of
:func:`boto3_session` reads them through one loader (and its cache); credentials, profile and
region stay per session. Callers word the failures (:func:`deepvm_core.cloud.aws.client.
create_session`, :meth:`deepvm_core.cloud.fleet.ec2.Ec2.from_settings`).
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _shared_loader(data_path: str | None) -> Any:
    """One botocore data loader per data path (``AWS_DATA_PATH``) for the whole process."""
    from botocore.loaders import create_loader

    return create_loader(data_path)


def boto3_session(profile: str | None = None, region: str | None = None) -> Any:
    """A boto3 session on the standard credential chain (``profile``: a named profile;
    ``region``: its default region, else the profile's or the environment's) whose API models
    come from the process's shared loader.

    Raises:
        botocore.exceptions.ProfileNotFound, botocore.exceptions.BotoCoreError: as
            ``boto3.session.Session``.
    """
    import boto3
    import botocore.session

    core = botocore.session.Session(profile=profile)  # an unknown profile raises here
    loader = _shared_loader(core.get_config_variable("data_path"))
    core.register_component("data_loader", loader)
    session = boto3.session.Session(botocore_session=core, profile_name=profile,
                                    region_name=region)
    # boto3 adds its own model folder to the loader's search path for each session: keep one.
    loader.search_paths[:] = list(dict.fromkeys(loader.search_paths))
    return session
