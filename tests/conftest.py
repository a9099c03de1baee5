import os
import sys

# Quiet MindSpore's C++ logging in test output (2 = WARNING and above is hidden).
os.environ.setdefault("GLOG_v", "3")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
