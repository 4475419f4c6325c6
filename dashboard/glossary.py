"""The model's terms in one line each: the help tooltips where a term appears, and the
sidebar's glossary (all of them, in this order); and the same terms in plain words, which
presentation mode shows instead (issue 27). Pure: no Streamlit."""

from __future__ import annotations

import re

GLOSSARY = {
    "PW": "Pricing willingness: the most you pay per hour for the whole cluster (USD/hour).",
    "Paper's Z": "The paper's objective: the eFLOP per USD (FLOPP) of each GPU VM, summed over "
                 "the cluster and multiplied by K(n). A score in eFLOP per USD (M = million): "
                 "higher is better, but it favours cheap GPU types over fast ones.",
    "Performance": "Relative training throughput: eFLOPS × n × K(n), the GPU type's measured "
                   "throughput score times its n GPU VMs times the scaling factor. In the "
                   "catalog's relative units: compare it within one catalog.",
    "Training speed": "Epochs of the job per hour on the whole cluster (the speedup model in "
                      "force), also shown as a multiple of one A10G GPU, the fixed yardstick "
                      "(or of one VM of the reference type you named): 2.00 × one A10G trains "
                      "twice as fast as one A10G.",
    "Cluster FLOPP": "eFLOP per USD of the whole cluster: performance ÷ hourly price × 3600.",
    "Scaling factor K(n)": "The share of the ideal speedup that n GPU VMs keep: 1 up to the "
                           "inflection point b of the GPU type's measured speedup, then below "
                           "1.",
    "Single Anchor (SA)": "One on-demand GPU VM (the anchor, which keeps the checkpoints) and "
                          "n − 1 spot GPU VMs of the same type.",
    "Tiering (TR)": "n spot GPU VMs of one type all train; m on-demand memory nodes keep the "
                    "checkpoints in RAM.",
    "Memory node": "An on-demand CPU VM of a Tiering cluster that holds the latest checkpoints "
                   "(buffer × checkpoint size) in RAM, so losing a spot VM loses little work.",
    "GPU spot, GPU on-demand": "How many of the cluster's GPU VMs run as spot instances "
                               "(cheap, can be taken back) and as on-demand ones (full price, "
                               "never taken back).",
    "DeepVM-NoScale": "The paper's baseline that ranks by Z with K = 1, ignoring that training "
                      "scales imperfectly (its performance still uses the true K).",
    "Cost-First": "The paper's baseline: the Single Anchor cluster with the most GPU VMs "
                  "affordable within PW.",
    "Performance-First": "The paper's baseline: a Single Anchor cluster of the fastest GPU type "
                         "(by eFLOPS) that affords 2 or more GPU VMs, as many as fit.",
    "vCPU quotas": "The most vCPUs each instance family may run, on demand and on spot; a "
                   "family without a row is unlimited. AWS sets them per group of families "
                   "(Standard: A, C, D, H, I, M, R, T, Z; G and VT; P; Trn; ...), whose "
                   "families share one limit. The bundled catalogs' rows are the paper's and "
                   "stated assumptions, not your account's: `deepvm catalog quotas` reads yours, "
                   "or edit them in the catalog editor.",
    "Node cap per role": "The most VMs of each role in a cluster: spot GPU VMs, on-demand GPU "
                         "VMs and memory nodes, each (the paper's simulation used 256).",
    "GPU filters": "Only the GPU types that pass all of them are searched, on every page: "
                   "the GPU models (A100 is the 40 GB chip, A100-80GB the other, as in "
                   "SkyPilot), the least memory of one GPU (GB) and the GPUs per VM. The CLI's "
                   "--gpus, --min-gpu-memory-gb and --gpus-per-vm.",
    "Presentation": "Hides the research details (Z, FLOPP, K(n)) on the Recommend and Regions "
                    "pages; the cluster, its price and its performance stay.",
    "MTBI": "Mean time between interruptions: the average hours between two spot reclaims of "
            "a GPU type's market (an assumption, from the Spot Advisor's bucket by default).",
    "Makespan": "The wall-clock time of the whole job, interruptions, restarts and checkpoint "
                "stalls included.",
    "P10 / P90": "In 10 % of the simulated runs the job took (or cost) less than P10, in 90 % "
                 "less than P90: the spread to plan for.",
    "Pareto frontier": "The clusters that no other cluster beats on both expected cost and "
                       "expected makespan: every sensible choice lies on it.",
    "Daly interval": "Checkpoint every k epochs, or 0 for Daly's optimal interval, which trades "
                     "checkpoint stalls against work lost to interruptions.",
    "Checkpoint stall": "The seconds training pauses to write one checkpoint (to the memory "
                        "nodes, or through the anchor to its disk).",
    "Speedup model": "How n VMs speed up an epoch: fitted logistic (default), your measured "
                     "points, or the paper's n·K(n) proxy (optimistic).",
}

#: The Configuration column's abbreviations (``SA: 16 x g4dn.xlarge ...``).
CONFIGURATION_HELP = ("The cluster: SA = Single Anchor (1 on-demand + spot GPU VMs), TR = "
                      "Tiering (spot GPU VMs + on-demand memory nodes), with its hourly price.")


def markdown() -> str:
    """Every term as a markdown list."""
    return "\n".join(f"- **{term}**: {text}" for term, text in GLOSSARY.items())


#: Presentation mode's words for the research terms (issue 27): every page draws its visible
#: text through :func:`plain` in presentation mode, so a budget holder reads these instead. A
#: longer term wins over a shorter one it contains (``DeepVM-NoScale`` over ``DeepVM``); a
#: replacement starts with a capital where a sentence, a heading or a cell starts.
PLAIN_WORDS = {
    # the architectures (and the Configuration column's abbreviations)
    "Tiering (TR)": "spot GPUs with a memory server that keeps checkpoints",
    "Single Anchor (SA)": "spot GPUs with one on-demand GPU that keeps checkpoints",
    "Tiering": "spot GPUs with a memory server that keeps checkpoints",
    "Single Anchor": "spot GPUs with one on-demand GPU that keeps checkpoints",
    "TR:": "spot GPUs with a memory server:",
    "SA:": "spot GPUs with one on-demand GPU:",
    # the policies the paper compares
    "DeepVM-NoScale": "the best value per dollar, ignoring scaling losses",
    "DeepVM (paper's Z)": "the best value per dollar",
    "DeepVM (performance objective)": "the fastest cluster within the cap",
    "DeepVM": "this tool's choice",
    "Cost-First": "the most GPUs the cap affords",
    "Performance-First": "the fastest GPU type the cap affords",
    # the job's spread, time and interruptions
    "P10 / P50 / P90": "1 in 10 / half / 9 in 10 runs",
    "P10–P90": "range of 8 in 10 runs",
    "P10-P90": "range of 8 in 10 runs",
    "P10 / P90": "1 in 10 and 9 in 10 runs",
    "(P90": "(9 in 10 runs under",
    "P10": "1 in 10 runs",
    "P50": "half the runs",
    "P90": "9 in 10 runs",
    "a Monte Carlo run": "simulated runs",
    "Monte Carlo runs": "simulated runs",
    "Monte Carlo": "simulated runs",
    "makespan": "time to finish",
    "MTBI": "time between interruptions",
    # the speed and the value per dollar
    "eFLOPS × n × K(n)": "GPU speed × number of GPU VMs × scaling efficiency",
    "eFLOPS × n × K": "GPU speed × number of GPU VMs × scaling efficiency",
    "Scaling factor K(n)": "scaling efficiency",
    "n·K(n)": "GPU VMs × scaling efficiency",
    "K(n)": "scaling efficiency",
    "eFLOPS": "GPU speed",
    "Cluster FLOPP": "computing per dollar of the cluster",
    "FLOPP": "computing per dollar",
    # the hourly spending cap
    "% of PW": "% of the cap",
    "within PW": "within the hourly spending cap of",
    "PW": "hourly spending cap",
}

#: The ends of what comes before a sentence, a heading, a list item or a table cell: a
#: replacement there starts with a capital.
_STARTS = ".!?|-\n"


def _pattern(term: str) -> str:
    """``term`` as a regex: at word boundaries where it starts or ends with a letter or digit;
    a term starting with a small letter also matches it capitalised."""
    body = re.escape(term)
    if term[0].islower():
        body = f"[{term[0]}{term[0].upper()}]" + re.escape(term[1:])
    return ((r"(?<![\w-])" if term[0].isalnum() else "") + body
            + (r"(?![\w])" if term[-1].isalnum() or term[-1] == ")" else ""))


_TERMS = re.compile("|".join(_pattern(t) for t in sorted(PLAIN_WORDS, key=len, reverse=True)))
_BY_LOWER = {t.lower(): w for t, w in PLAIN_WORDS.items()}


def plain(text: str) -> str:
    """``text`` in plain words for presentation mode: each research term of
    :data:`PLAIN_WORDS` replaced by its words, capitalised where a sentence or cell starts."""

    def words(match: re.Match[str]) -> str:
        found = match.group()
        said = PLAIN_WORDS.get(found) or _BY_LOWER[found.lower()]
        before = text[:match.start()].rstrip(" *#_`(")
        return said[0].upper() + said[1:] if not before or before[-1] in _STARTS else said

    return _TERMS.sub(words, text)
