"""The benchmark's workloads; each module has NAME, TITLE and run(bench)."""
from . import (fio_foregrounds, w1_delete_storm, w2_trim_under_load, w3_idle_throughput,
               w4_footprint, w5_trim_storm, w6_fleet_scale)

ALL = {m.NAME: m for m in (w1_delete_storm, w2_trim_under_load, w3_idle_throughput, w4_footprint,
                           w5_trim_storm, fio_foregrounds, w6_fleet_scale)}
