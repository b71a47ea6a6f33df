"""The reproduction harness behind `errkb reproduce`.

contract.py  reads a reproduction's NEEDS (without importing it) and says what this machine lacks
libraries.py maps a record's repo to its installed package (the one table to extend)
runner.py    the subprocess side: runs one stage, prints one JSON result (standard library only)
isolate.py   starts that subprocess with its time budget; probes the CUDA devices once per run
compare.py   judges a stage's result against the record: class, message, raise site -> verdict
harness.py   orchestration: checks, stages, parallel records, history
history.py   the reproduction_runs table in catalog.db
report.py    the table and the JSON
command.py   the click command
"""
