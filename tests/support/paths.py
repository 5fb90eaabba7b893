"""Where the tests' files are: the repository, tests/ and the example graphs, at any test's depth."""
import os

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
GRAPHS = os.path.join(ROOT, "graphs")
