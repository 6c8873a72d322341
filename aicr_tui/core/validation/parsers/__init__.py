"""Parsers for the output of the tools checks run: nccl-tests, nvidia-smi, AIPerf."""
