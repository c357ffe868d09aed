"""Blackwell (sm_100a). PTX 8.6 is the first that accepts sm_100a; tcgen05 comes later."""

from ..target import Target

SM100 = Target(gpu_name="sm_100", ptx_target="sm_100a", ptx_version="8.6",
               ptxas_arch="sm_100a")
