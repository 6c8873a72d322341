"""Validation: readiness, declared-check pre-flight, phases of checks, events, reports.

The runner (``runner.run_validation``) publishes typed events (``events``) on one stream
(``stream.EventStream``); the CLI renderer, the dashboard, the recorder and the report
writers (``reports``) all consume that stream.
"""
