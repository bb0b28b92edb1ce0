import sys
from pathlib import Path

# Lets the tests import envcfg without installing the service.
sys.path.insert(0, str(Path(__file__).parent))
