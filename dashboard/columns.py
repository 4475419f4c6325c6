"""Column names of the result frames, defined once (:class:`Col`), without pandas.

Kept apart from :mod:`result_frames` so that the widgets drawn before the first table (the
Recommend card) do not wait for pandas to import.
"""

from __future__ import annotations


class Col:
    """Column names of the frames below."""

    RANK = "#"
    POLICY = "Policy"
    ARCH = "Architecture"
    GPU = "GPU type"
    SPOT = "GPU spot"
    ON_DEMAND = "GPU on-demand"
    MEM_NODES = "Memory nodes"
    PRICE = "USD/hour"
    PW_SHARE = "% of PW"
    PERF = "Performance"
    OBJECTIVE = "Objective"
    K = "K(n)"
    FLOPP = "Cluster FLOPP"
    CONFIG = "Configuration"
    EFLOPS = "eFLOPS"
    SPOT_PRICE = "Spot USD/h"
    OD_PRICE = "On-demand USD/h"
    SPOT_FLOPP = "Spot FLOPP"
    OD_FLOPP = "On-demand FLOPP"
    SPOT_RANK = "Spot rank"
    OD_RANK = "On-demand rank"
    NODES = "n (GPU VMs)"
    SPEEDUP = "n·K(n)"
    INFLECTION = "b"
    FAMILY = "Family"
    OD_VCPUS = "On-demand vCPUs"
    SPOT_VCPUS = "Spot vCPUs"
    FAMILY_TYPES = "Types in the catalog"
    BANDWIDTH = "Bandwidth from (Gbps)"
    N_SAT = "n_sat"
    TYPE = "Instance type"
    KIND = "Kind"
    STATUS = "Status"
    OD_OLD = "On-demand old"
    OD_NEW = "On-demand new"
    OD_CHANGE = "On-demand change %"
    SPOT_OLD = "Spot old"
    SPOT_NEW = "Spot new"
    SPOT_CHANGE = "Spot change %"
    NOTE = "Note"
    REGION = "Region"
    CATALOG = "Catalog"
    JOB_HOURS = "Job hours"
    JOB_COST = "Job USD"
    JOB_RATE = "Job epochs/h"


#: The research details that presentation mode hides (the objective may be Z).
RESEARCH_COLUMNS = (Col.OBJECTIVE, Col.K, Col.FLOPP)
