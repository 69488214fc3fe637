import os
import sys

# Tests import the repo's packages whether or not it is installed (a plain clone works too).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
