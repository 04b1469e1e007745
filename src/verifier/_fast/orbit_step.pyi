import numpy as np
import numpy.typing as npt

def orbit_step(
    values: npt.NDArray[np.float64],
    src: npt.NDArray[np.int32],
    dst: npt.NDArray[np.int32],
    slot: npt.NDArray[np.int8],
    mult: npt.NDArray[np.int8],
    masses: npt.NDArray[np.float64],
    out: npt.NDArray[np.float64],
) -> int: ...
