"""Talking to a cloud: live prices (:mod:`deepvm_core.cloud.aws`) and launching what DeepVM
chose on EC2 Fleet (:mod:`deepvm_core.cloud.fleet`). Nothing connects at import time.
"""
