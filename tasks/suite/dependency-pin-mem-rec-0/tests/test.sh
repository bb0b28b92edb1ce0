#!/bin/bash
# Utility validator: the reward file is the verdict, the exit code is not.
mkdir -p /logs/verifier
task=0; python3 -m pytest -q -p no:cacheprovider /tests/test_outputs.py && task=1
recovery=0; python3 -m pytest -q -p no:cacheprovider /tests/test_recovery.py && recovery=1
reward=$(( task < recovery ? task : recovery ))
printf '{"reward": %d, "task": %d, "recovery": %d}\n' "$reward" "$task" "$recovery" > /logs/verifier/reward.json
exit 0
