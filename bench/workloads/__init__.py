"""The benchmark's workloads; each module has NAME, TITLE and run(bench)."""
from . import (fio_foregrounds, w1_delete_storm, w2_trim_under_load, w3_idle_throughput,
               w4_footprint)

ALL = {m.NAME: m for m in (w1_delete_storm, w2_trim_under_load, w3_idle_throughput, w4_footprint,
                           fio_foregrounds)}
