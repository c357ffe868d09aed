"""Hopper (sm_90a). mma.sync and the shared lowering for now; wgmma and TMA come later."""

from ..target import Target

SM90 = Target(gpu_name="sm_90", ptx_target="sm_90a", ptx_version="8.0", ptxas_arch="sm_90a")
