#!/bin/bash
# Utility validator: the reward file is the verdict, the exit code is not.
mkdir -p /logs/verifier
if python3 -m pytest -q -p no:cacheprovider /tests/test_outputs.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
