"""Report writers fed by the event stream: CTRF JSON and JUnit XML."""
